/** The protobuf writer lives in src/lib/protobuf.ts; re-exported for the CometBFT module's users. */
export { ProtoWriter, uvarint, lengthPrefixed } from '../../lib/protobuf.js';
