/**
 * The application interface the engine drives (ABCI 2.0-shaped). It lives in src/types/abci.ts so that
 * both drivers — this engine and the ABCI socket server of src/abci/ — share one definition.
 */
export type * from '../types/abci.js';
