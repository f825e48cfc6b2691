/** The CometBFT event query language: parsing (syntax.ts) and pubsub matching (match.ts). Pure. */
export * from './syntax.js';
export * from './match.js';
