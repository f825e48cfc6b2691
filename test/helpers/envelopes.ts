/** What the envelope tests share (test/unit/txsigner.test.ts, test/unit/rlpcanonical.test.ts): a chain id 9000 Common, values, and an access list. */
import { makeCommon } from '../../src/evm/common.js';

export const GWEI = 10n ** 9n;
export const envelopeCommon = makeCommon(9000n);
export const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));
export const DEAD = '0x000000000000000000000000000000000000dEaD';
/** one address with two storage keys (one of them zero) */
export const ACCESS = [{ address: DEAD, storageKeys: ['0x' + '11'.repeat(32), '0x' + '00'.repeat(32)] }];
