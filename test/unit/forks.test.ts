/**
 * The fork schedule (evm/forks.ts, docs/configuration.md "Hardforks"): genesis `app_state.evm.chain_config`
 * parsing and its refusals, the fork a block time runs, the fork flags, a new home's default, and
 * eth_config's EIP-6122 fork hash.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_NEW_HARDFORK, devGenesis, forkChoice, parseGenesis, renderGenesis, sameForks } from '../../src/config/genesis.js';
import { ForkSchedule } from '../../src/evm/forks.js';
import { forkHash } from '../../src/evmrpc/ethconfig.js';
import { ensureHome } from '../../src/node/home.js';

const tmp = mkdtempSync(join(tmpdir(), 'ferry-forks-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** a valid genesis document with `evm` merged into app_state.evm */
function genesisWith(evm: Record<string, unknown>): string {
  const doc = JSON.parse(renderGenesis(devGenesis({ validatorPubKey: new Uint8Array(32), genesisTime: '2025-01-01T00:00:00Z' })));
  Object.assign(doc.app_state.evm, evm);
  for (const [k, v] of Object.entries(evm)) if (v === undefined) delete doc.app_state.evm[k];
  return JSON.stringify(doc);
}

describe('genesis chain_config', () => {
  it('a genesis without chain_config (an older release) runs its hardfork alone, cancun when unnamed', () => {
    const g = parseGenesis(genesisWith({ hardfork: undefined }));
    assert.equal(g.evm.hardfork, 'cancun');
    assert.equal(g.evm.forkTimes, undefined);
    assert.doesNotMatch(renderGenesis(g), /chain_config/);
  });

  it('reads times as cosmos/evm writes them (decimal strings), JSON integers and null; renders strings back', () => {
    const g = parseGenesis(genesisWith({ hardfork: 'cancun', chain_config: { cancun_time: '0', prague_time: 100, osaka_time: '200' } }));
    assert.deepEqual(g.evm.forkTimes, { prague: 100n, osaka: 200n });
    const again = parseGenesis(renderGenesis(g));
    assert.deepEqual(again.evm.forkTimes, { prague: 100n, osaka: 200n });
    assert.deepEqual(JSON.parse(renderGenesis(g)).app_state.evm.chain_config, { prague_time: '100', osaka_time: '200' });
    const unscheduled = parseGenesis(genesisWith({ hardfork: 'prague', chain_config: { osaka_time: null } }));
    assert.deepEqual(unscheduled.evm.forkTimes, {});
  });

  it('refuses out-of-order, skipped, malformed and unknown entries, naming the field', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ hardfork: 'cancun', chain_config: { prague_time: '200', osaka_time: '100' } }, /osaka_time: osaka at 100 would activate before prague at 200/],
      [{ hardfork: 'cancun', chain_config: { osaka_time: '100' } }, /osaka_time: osaka is scheduled but prague is not/],
      [{ hardfork: 'prague', chain_config: { osaka_time: '-1' } }, /osaka_time: expected unix seconds as decimal digits/],
      [{ hardfork: 'prague', chain_config: { osaka_time: 1.5 } }, /osaka_time: expected a non-negative integer/],
      [{ hardfork: 'prague', chain_config: { amsterdam_time: '1' } }, /chain_config\.amsterdam_time: unknown field/],
      [{ hardfork: 'shanghai' }, /unsupported hardfork "shanghai" \(supported: cancun, prague, osaka\)/],
    ];
    for (const [evm, want] of bad) assert.throws(() => parseGenesis(genesisWith(evm)), want);
  });
});

describe('ForkSchedule', () => {
  it('picks the fork of a block time, each fork with one fixed Common', () => {
    const s = new ForkSchedule(9000n, { hardfork: 'cancun', forkTimes: { prague: 100n, osaka: 200n } });
    assert.deepEqual(
      [0n, 99n, 100n, 199n, 200n, 10_000n].map((t) => s.forkAt(t)),
      ['cancun', 'cancun', 'prague', 'prague', 'osaka', 'osaka'],
    );
    assert.equal(s.commonAt(150n), s.commonAt(100n));
    assert.equal(s.commonAt(150n).hardfork(), 'prague');
    assert.equal(s.commonAt(300n).isActivatedEIP(7939), true);
    assert.equal(s.commonAt(150n).isActivatedEIP(7939), false);
    assert.deepEqual(s.nextAfter(150n), { fork: 'osaka', time: 200n });
    assert.equal(s.nextAfter(200n), undefined);
  });

  it('a schedule without times is its genesis fork forever', () => {
    const s = new ForkSchedule(1n, { hardfork: 'prague' });
    assert.deepEqual(s.activations, [{ fork: 'prague', time: 0n }]);
    assert.equal(s.forkAt(1n << 40n), 'prague');
  });
});

describe('fork flags and new homes', () => {
  it('--hardfork and --<fork>-time (absolute or +seconds from now)', () => {
    assert.deepEqual(forkChoice(undefined, {}, 1000n), { hardfork: DEFAULT_NEW_HARDFORK });
    assert.deepEqual(forkChoice('Prague', { osaka: '+30' }, 1000n), { hardfork: 'prague', forkTimes: { osaka: 1030n } });
    assert.throws(() => forkChoice('london', {}, 0n), /--hardfork: unsupported hardfork "london"/);
    assert.throws(() => forkChoice('prague', { osaka: 'soon' }, 0n), /--osaka-time: expected unix seconds or \+seconds from now/);
  });

  it('ferry init makes an Osaka genesis by default, or the named forks', () => {
    const a = join(tmp, 'a');
    ensureHome(a);
    const ga = parseGenesis(readFileSync(join(a, 'config', 'genesis.json'), 'utf8'));
    assert.equal(ga.evm.hardfork, 'osaka');
    const b = join(tmp, 'b');
    const choice = forkChoice('prague', { osaka: '5000' }, 0n);
    ensureHome(b, { forks: choice });
    const gb = parseGenesis(readFileSync(join(b, 'config', 'genesis.json'), 'utf8'));
    assert.equal(sameForks(gb, choice), true);
    assert.equal(sameForks(gb, { hardfork: 'prague' }), false);
    assert.equal(sameForks(ga, choice), false);
  });
});

describe('eth_config forkId (EIP-6122 FORK_HASH, forkid.NewID)', () => {
  it('CRC32 of the genesis hash, then each later fork time', () => {
    // EIP-2124's mainnet vector: the genesis hash alone hashes to 0xfc64ec04
    const mainnet = Buffer.from('d4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3', 'hex');
    assert.equal(Buffer.from(forkHash(mainnet, [{ fork: 'cancun', time: 0n }], 0n, 0n)).toString('hex'), 'fc64ec04');
    // EIP-2124's vector for the next fork (Homestead, block 1150000): 0x97c2c34c
    const withFork = forkHash(mainnet, [{ fork: 'cancun', time: 0n }, { fork: 'prague', time: 1_150_000n }], 0n, 1_150_000n);
    assert.equal(Buffer.from(withFork).toString('hex'), '97c2c34c');
    // a fork not yet reached adds nothing
    assert.equal(Buffer.from(forkHash(mainnet, [{ fork: 'cancun', time: 0n }, { fork: 'prague', time: 1_150_000n }], 0n, 1_149_999n)).toString('hex'), 'fc64ec04');
  });
});
