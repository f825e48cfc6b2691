/** CometBFT v0.38 wire types, hashing and commit signing (pure functions; no I/O). */
export * from './types.js';
export * from './time.js';
export * from './proto.js';
export * from './merkle.js';
export * from './encoding.js';
export * from './keys.js';
export * from './bfttime.js';
