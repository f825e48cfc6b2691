/**
 * eth_simulateV1's block plan, bounds, base fee and unsigned transactions (src/evm/simchain.ts), against
 * geth's rules (go-ethereum internal/ethapi/simulate.go sanitizeChain; consensus/misc/eip1559) and a
 * transaction hash of the execution-apis fixture ethSimulate-simple.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../src/lib/errors.js';
import { MAX_SIMULATE_BLOCKS, MAX_SIMULATE_CALLS_PER_BLOCK, checkSimulateLimits, nextBaseFee, planBlocks, unsignedTx } from '../../src/evm/simchain.js';

const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;
const addr = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.slice(2), 'hex'));

function refusal(fn: () => unknown): { reason: string; message: string } {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DomainError && e.is('simulateRejected'), String(e));
    return { reason: e.detail.reason, message: e.message };
  }
  assert.fail('no error');
}

describe('eth_simulateV1 block plan (geth sanitizeChain)', () => {
  it('numbers +1 and times +12 s by default; a gap is filled with empty blocks 12 s apart', () => {
    const plan = planBlocks(54n, 540n, [{ calls: [] }, { block: { number: 58n }, calls: [] }]);
    assert.deepEqual(
      plan.map((p) => [p.number, p.time]),
      [
        [55n, 552n],
        [56n, 564n],
        [57n, 576n],
        [58n, 588n],
      ],
    );
  });

  it('numbers and times must increase (-38020, -38021 texts)', () => {
    assert.deepEqual(refusal(() => planBlocks(54n, 540n, [{ block: { number: 54n }, calls: [] }])), {
      reason: 'blockNumberOrder',
      message: 'block numbers must be in order: 54 <= 54',
    });
    assert.deepEqual(refusal(() => planBlocks(54n, 540n, [{ calls: [] }, { block: { time: 552n }, calls: [] }])), {
      reason: 'blockTimestampOrder',
      message: 'block timestamps must be in order: 552 <= 552',
    });
  });

  it('bounds: blocks past the base block, calls per block, none at all', () => {
    assert.deepEqual(refusal(() => planBlocks(0n, 0n, [{ block: { number: BigInt(MAX_SIMULATE_BLOCKS) + 1n }, calls: [] }])), {
      reason: 'clientLimit',
      message: 'too many blocks',
    });
    assert.equal(planBlocks(0n, 0n, [{ block: { number: BigInt(MAX_SIMULATE_BLOCKS) }, calls: [] }]).length, MAX_SIMULATE_BLOCKS);
    const calls = Array.from({ length: MAX_SIMULATE_CALLS_PER_BLOCK + 1 }, () => ({}));
    assert.equal(refusal(() => checkSimulateLimits([{ calls }])).reason, 'clientLimit');
    assert.deepEqual(refusal(() => checkSimulateLimits([])), { reason: 'invalidParams', message: 'empty input' });
  });
});

describe('eth_simulateV1 base fee and transactions', () => {
  it("validation's base fee after an empty parent is 7/8 of the parent's (geth CalcBaseFee)", () => {
    assert.equal(nextBaseFee({ gasLimit: 200_000_000n, gasUsed: 0n, baseFee: 27_412_364n }), 23_985_819n);
    assert.equal(nextBaseFee({ gasLimit: 30_000_000n, gasUsed: 15_000_000n, baseFee: 1000n }), 1000n);
    assert.equal(nextBaseFee({ gasLimit: 30_000_000n, gasUsed: 30_000_000n, baseFee: 1000n }), 1125n);
  });

  it('a call becomes the unsigned EIP-1559 tx geth hashes (fixture ethSimulate-simple)', () => {
    const from = addr('0xc000000000000000000000000000000000000000');
    const tx = unsignedTx({ from, to: addr('0xc100000000000000000000000000000000000000'), value: 1000n, gas: 50_000_000n, nonce: 0n }, from, 3503995874084926n);
    assert.equal(tx.type, 2);
    assert.equal(hex(tx.hash), '0xf1c5abb08809ef760f87aeabe7a87284c60797192dab6d2f0d26c27c9c038e9d');
  });
});
