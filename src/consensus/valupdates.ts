/**
 * The validator set a block's updates make (the engine's next_validators; docs/cometbft-rpc.md).
 */
import type { Logger } from '../lib/log.js';
import type { ValidatorUpdate } from './abci.js';
import { pubKeyAddress, sortValidators, type Validator } from './cometbft/index.js';

/**
 * `ValidatorSet.UpdateWithChangeSet` for ed25519 keys: power 0 removes, otherwise sets the power;
 * returns the new set in canonical order. `own` (the address this engine signs with) is never removed.
 */
export function applyValidatorUpdates(set: Validator[], updates: readonly ValidatorUpdate[], own: Uint8Array, log: Logger): Validator[] {
  // no updates (nearly every block): the same sorted set, so its hash is not computed again (validatorHashes)
  if (updates.length === 0) return set;
  const byAddr = new Map(set.map((v) => [Buffer.from(v.address).toString('hex'), v]));
  for (const u of updates) {
    const address = pubKeyAddress(u.pubKey);
    const key = Buffer.from(address).toString('hex');
    if (u.power === 0n && Buffer.compare(address, own) === 0) {
      log.error({ address: key }, 'validator update ignored: ferry cannot remove the validator it signs with');
      continue;
    }
    if (u.power === 0n) byAddr.delete(key);
    else byAddr.set(key, { address, pubKey: u.pubKey, votingPower: u.power });
  }
  return sortValidators([...byAddr.values()]);
}
