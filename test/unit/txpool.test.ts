/**
 * TxPool (src/chain/txpool.ts) on real signed transactions: dev keys, ethers `Wallet` signatures,
 * decoded by `decodeTx` with ferry's Common (chain 9000), wrapped in the native form as CheckTx does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { TxPool, hexKey, type PoolEntry, type PoolLimits } from '../../src/chain/txpool.js';
import { makeCommon } from '../../src/evm/common.js';
import { decodeTx, feeCap } from '../../src/evm/tx.js';
import type { EvmTx } from '../../src/types/chain.js';
import { devKeys } from '../helpers/accounts.js';

const CHAIN_ID = 9000n;
const common = makeCommon(CHAIN_ID);
const GWEI = 10n ** 9n;
const TRANSFER_GAS = 21_000n;
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
/** eviction compares effective tips at a base fee; 0 makes them the signed tips */
const NO_BASE_FEE = 0n;
const LIMITS: PoolLimits = { size: 1000, priceBumpPercent: 10, accountQueue: 64 };

type NewEntry = Omit<PoolEntry, 'seq'>;

interface TxSpec {
  nonce: number;
  /** 0 legacy (gasPrice = fee), 1 access list (gasPrice = fee), 2 dynamic fee (default) */
  type?: 0 | 1 | 2;
  /** gasPrice or maxFeePerGas, wei (default 100 gwei) */
  fee?: bigint;
  /** maxPriorityFeePerGas of type 2, wei (default 1 gwei) */
  tip?: bigint;
  gas?: bigint;
  /** calldata bytes (to change the tx size) */
  dataBytes?: number;
  value?: bigint;
}

/** Signs a tx with dev key `signer`, decodes it as ferry does and wraps it like eth_sendRawTransaction. */
async function entry(signer: number, spec: TxSpec): Promise<NewEntry> {
  const type = spec.type ?? 2;
  const fee = spec.fee ?? 100n * GWEI;
  const wallet = new Wallet(devKeys()[signer]!);
  const raw = await wallet.signTransaction({
    type,
    chainId: CHAIN_ID,
    nonce: spec.nonce,
    gasLimit: spec.gas ?? TRANSFER_GAS + 16n * BigInt(spec.dataBytes ?? 0),
    to: RECIPIENT,
    value: spec.value ?? 1n,
    data: '0x' + 'ff'.repeat(spec.dataBytes ?? 0),
    ...(type === 2 ? { maxFeePerGas: fee, maxPriorityFeePerGas: spec.tip ?? GWEI } : { gasPrice: fee }),
  });
  const decoded = decodeTx(Buffer.from(raw.slice(2), 'hex'), common);
  const native = wrapEthereumTx(decoded.evm.raw, decoded.evm.from, decoded.evm.gasLimit, feeCap(decoded.evm));
  return { decoded, native };
}

const hashOf = (e: NewEntry | PoolEntry | EvmTx): string => hexKey('decoded' in e ? e.decoded.evm.hash : e.hash);
const hashes = (xs: readonly (NewEntry | PoolEntry | EvmTx)[]): string[] => xs.map(hashOf);
const nonces = (xs: readonly PoolEntry[]): number[] => xs.map((e) => Number(e.decoded.evm.nonce));
const senderKey = (e: NewEntry): string => hexKey(e.decoded.evm.from);

/** geth's text in the txRejected error the pool throws */
function throwsText(fn: () => unknown, text: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof Error);
    assert.equal(e.message, text);
    return true;
  });
}

describe('txpool: pending and queued', () => {
  it('a nonce gap queues a tx; filling the gap promotes it to pending', async () => {
    const pool = new TxPool(LIMITS);
    const [t0, t1, t2, t4] = await Promise.all([0, 1, 2, 4].map((n) => entry(0, { nonce: n })));
    const sender = t0!.decoded.evm.from;

    pool.add(t0!, 0n, NO_BASE_FEE);
    pool.add(t2!, 0n, NO_BASE_FEE);
    let c = pool.content();
    assert.deepEqual(nonces(c.pending), [0]);
    assert.deepEqual(nonces(c.queued), [2]);
    assert.equal(pool.pendingNonce(sender), 1n);

    pool.add(t4!, 0n, NO_BASE_FEE);
    pool.add(t1!, 0n, NO_BASE_FEE);
    c = pool.content();
    assert.deepEqual(nonces(c.pending), [0, 1, 2], 'nonce 1 fills the gap: 2 is promoted, 4 stays queued');
    assert.deepEqual(nonces(c.queued), [4]);
    assert.equal(pool.pendingNonce(sender), 3n);
    assert.equal(pool.size, 4);
  });

  it('a sender whose txs all start above the state nonce has nothing pending', async () => {
    const pool = new TxPool(LIMITS);
    const t = await entry(1, { nonce: 3 });
    pool.add(t, 1n, NO_BASE_FEE);
    assert.deepEqual(pool.content().pending, []);
    assert.deepEqual(nonces(pool.content().queued), [3]);
    assert.equal(pool.pendingNonce(t.decoded.evm.from), undefined);
    assert.equal(pool.pendingNonce(new Uint8Array(20)), undefined, 'unknown sender');
  });

  it('has(), get() and size follow adds', async () => {
    const pool = new TxPool(LIMITS);
    const t = await entry(0, { nonce: 0 });
    assert.equal(pool.has(t.decoded.evm.hash), false);
    pool.add(t, 0n, NO_BASE_FEE);
    assert.equal(pool.has(t.decoded.evm.hash), true);
    assert.equal(pool.get(t.decoded.evm.hash)?.native, t.native);
    assert.equal(pool.size, 1);
  });
});

describe('txpool: admission errors', () => {
  it('the same tx twice is `already known`', async () => {
    const pool = new TxPool(LIMITS);
    const t = await entry(0, { nonce: 0 });
    pool.add(t, 0n, NO_BASE_FEE);
    throwsText(() => pool.add(t, 0n, NO_BASE_FEE), 'already known');
    assert.equal(pool.size, 1);
  });

  it('a nonce below the state nonce is `nonce too low`', async () => {
    const pool = new TxPool(LIMITS);
    const t = await entry(0, { nonce: 4 });
    throwsText(() => pool.add(t, 5n, NO_BASE_FEE), 'nonce too low');
    assert.equal(pool.size, 0);
    pool.add(await entry(0, { nonce: 5 }), 5n, NO_BASE_FEE);
    assert.equal(pool.size, 1, 'the state nonce itself is admitted');
  });
});

describe('txpool: replacement needs a price bump on fee cap and tip', () => {
  const FEE = 100n * GWEI;
  const TIP = 10n * GWEI;
  const bumped = (x: bigint, percent: bigint) => (x * (100n + percent)) / 100n;

  it('+10% on both replaces the old tx, which is returned as removed', async () => {
    const pool = new TxPool(LIMITS);
    const old = await entry(0, { nonce: 0, fee: FEE, tip: TIP });
    const next = await entry(0, { nonce: 0, fee: bumped(FEE, 10n), tip: bumped(TIP, 10n) });
    pool.add(old, 0n, NO_BASE_FEE);
    const removed = pool.add(next, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(removed), hashes([old]));
    assert.equal(pool.has(old.decoded.evm.hash), false);
    assert.equal(pool.has(next.decoded.evm.hash), true);
    assert.equal(pool.size, 1);
    assert.deepEqual(hashes(pool.content().pending), hashes([next]));
  });

  for (const [what, fee, tip] of [
    ['+10% fee cap, +9% tip', bumped(FEE, 10n), bumped(TIP, 9n)],
    ['+9% fee cap, +10% tip', bumped(FEE, 9n), bumped(TIP, 10n)],
    ['same fee cap, +100% tip', FEE, TIP * 2n],
    ['+100% fee cap, same tip', FEE * 2n, TIP],
  ] as const) {
    it(`${what} is \`replacement transaction underpriced\``, async () => {
      const pool = new TxPool(LIMITS);
      const old = await entry(0, { nonce: 0, fee: FEE, tip: TIP });
      const next = await entry(0, { nonce: 0, fee, tip });
      pool.add(old, 0n, NO_BASE_FEE);
      throwsText(() => pool.add(next, 0n, NO_BASE_FEE), 'replacement transaction underpriced');
      assert.equal(pool.has(old.decoded.evm.hash), true, 'the old tx stays');
      assert.equal(pool.has(next.decoded.evm.hash), false);
    });
  }

  it('legacy: the gas price must rise by 10%; a queued tx can be replaced too', async () => {
    const pool = new TxPool(LIMITS);
    const old = await entry(0, { nonce: 3, type: 0, fee: 10n * GWEI });
    const low = await entry(0, { nonce: 3, type: 0, fee: 11n * GWEI - 1n, value: 2n });
    const high = await entry(0, { nonce: 3, type: 0, fee: 11n * GWEI, value: 2n });
    pool.add(old, 0n, NO_BASE_FEE);
    throwsText(() => pool.add(low, 0n, NO_BASE_FEE), 'replacement transaction underpriced');
    const removed = pool.add(high, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(removed), hashes([old]));
    assert.deepEqual(hashes(pool.content().queued), hashes([high]));
  });
});

describe('txpool: bounds', () => {
  it('a full pool evicts its cheapest tx for a better-paying one, and refuses one that would be the cheapest', async () => {
    const pool = new TxPool({ ...LIMITS, size: 3 });
    const [a, b, c] = await Promise.all([
      entry(0, { nonce: 0, tip: 2n * GWEI }),
      entry(1, { nonce: 0, tip: 1n * GWEI }),
      entry(2, { nonce: 0, tip: 3n * GWEI }),
    ]);
    for (const t of [a!, b!, c!]) assert.deepEqual(pool.add(t, 0n, NO_BASE_FEE), []);
    assert.equal(pool.size, 3);

    const rich = await entry(3, { nonce: 0, tip: 4n * GWEI });
    assert.deepEqual(hashes(pool.add(rich, 0n, NO_BASE_FEE)), hashes([b!]), 'the 1 gwei tip is evicted');
    assert.equal(pool.size, 3);
    assert.equal(pool.has(b!.decoded.evm.hash), false);

    const poorest = await entry(4, { nonce: 0, tip: 1n * GWEI });
    throwsText(() => pool.add(poorest, 0n, NO_BASE_FEE), 'txpool is full');
    const equal = await entry(5, { nonce: 0, tip: 2n * GWEI });
    throwsText(() => pool.add(equal, 0n, NO_BASE_FEE), 'txpool is full');
    assert.equal(pool.has(a!.decoded.evm.hash), true, 'a tie does not evict');
    assert.equal(pool.size, 3);

    // a replacement takes the old tx's place: no eviction needed
    const replacement = await entry(2, { nonce: 0, tip: 4n * GWEI, fee: 200n * GWEI });
    assert.deepEqual(hashes(pool.add(replacement, 0n, NO_BASE_FEE)), hashes([c!]));
    assert.equal(pool.size, 3);
  });

  it("eviction takes the cheapest account's LAST nonce, so no account is left with a gap", async () => {
    const pool = new TxPool({ ...LIMITS, size: 3 });
    // account 0: nonces 0 (cheap) and 1 (rich); account 1: nonce 0 (middle)
    const [a0, a1, b0] = await Promise.all([
      entry(0, { nonce: 0, tip: 1n * GWEI }),
      entry(0, { nonce: 1, tip: 5n * GWEI }),
      entry(1, { nonce: 0, tip: 3n * GWEI }),
    ]);
    for (const t of [a0!, a1!, b0!]) pool.add(t, 0n, NO_BASE_FEE);
    const rich = await entry(2, { nonce: 0, tip: 4n * GWEI });
    // candidates are the last txs: a1 (5 gwei) and b0 (3 gwei); a0 is cheaper but evicting it strands a1
    assert.deepEqual(hashes(pool.add(rich, 0n, NO_BASE_FEE)), hashes([b0!]));
    assert.deepEqual(nonces(pool.content().pending.filter((e) => senderKey(e as never) === senderKey(a0!))), [0, 1]);
  });

  it('eviction compares effective tips at the base fee (a legacy gas price is not all tip)', async () => {
    const pool = new TxPool({ ...LIMITS, size: 1 });
    const baseFee = 10n * GWEI;
    // legacy 12 gwei: tip 2 gwei at a 10 gwei base fee; type 2 with 3 gwei tip pays more tip
    const legacy = await entry(0, { nonce: 0, type: 0, fee: 12n * GWEI });
    pool.add(legacy, 0n, baseFee);
    const dynamic = await entry(1, { nonce: 0, fee: 100n * GWEI, tip: 3n * GWEI });
    assert.deepEqual(hashes(pool.add(dynamic, 0n, baseFee)), hashes([legacy]));
  });

  it('queued (gapped) txs per account are bounded; the contiguous run is not', async () => {
    const pool = new TxPool({ ...LIMITS, accountQueue: 2 });
    const t = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => entry(0, { nonce: n })));
    pool.add(t[0]!, 0n, NO_BASE_FEE);
    pool.add(t[2]!, 0n, NO_BASE_FEE);
    pool.add(t[3]!, 0n, NO_BASE_FEE);
    throwsText(() => pool.add(t[5]!, 0n, NO_BASE_FEE), 'txpool is full');
    assert.deepEqual(nonces(pool.content().queued), [2, 3]);

    // replacing a queued tx is not a new queued tx
    const again = await entry(0, { nonce: 3, fee: 200n * GWEI, tip: 2n * GWEI });
    pool.add(again, 0n, NO_BASE_FEE);

    // filling the gap promotes 2 and 3: the queue is empty again
    pool.add(t[1]!, 0n, NO_BASE_FEE);
    pool.add(t[5]!, 0n, NO_BASE_FEE);
    pool.add(t[4]!, 0n, NO_BASE_FEE);
    assert.deepEqual(nonces(pool.content().pending), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(pool.content().queued, []);

    // another sender has its own queue
    pool.add(await entry(1, { nonce: 7 }), 0n, NO_BASE_FEE);
    pool.add(await entry(1, { nonce: 8 }), 0n, NO_BASE_FEE);
    assert.equal(pool.content().queued.length, 2);
  });
});

describe('txpool: select() for a block', () => {
  const BASE_FEE = 8n * GWEI;
  const FAR = 30_000_000n;
  const BIG = 1_000_000;

  it('highest effective tip first across senders, nonce order within a sender', async () => {
    const pool = new TxPool(LIMITS);
    const a0 = await entry(0, { nonce: 0, tip: 2n * GWEI });
    const a1 = await entry(0, { nonce: 1, tip: 5n * GWEI });
    const b0 = await entry(1, { nonce: 0, tip: 3n * GWEI });
    const c0 = await entry(2, { nonce: 0, tip: 1n * GWEI });
    for (const t of [c0, a1, a0, b0]) pool.add(t, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, BIG)), hashes([b0, a0, a1, c0]));
  });

  it('orders by the tip at the base fee (capped by the fee cap), for every tx type', async () => {
    const pool = new TxPool(LIMITS);
    // tip cap 5 gwei, but a fee cap of 10 gwei leaves 2 gwei above the 8 gwei base fee
    const capped = await entry(0, { nonce: 0, fee: 10n * GWEI, tip: 5n * GWEI });
    const dynamic = await entry(1, { nonce: 0, fee: 100n * GWEI, tip: 3n * GWEI });
    const legacy = await entry(2, { nonce: 0, type: 0, fee: 12n * GWEI });
    const accessList = await entry(3, { nonce: 0, type: 1, fee: 9n * GWEI });
    for (const t of [capped, accessList, dynamic, legacy]) pool.add(t, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, BIG)), hashes([legacy, dynamic, capped, accessList]));
  });

  it('equal tips keep arrival order', async () => {
    const pool = new TxPool(LIMITS);
    const first = await entry(4, { nonce: 0, tip: 2n * GWEI });
    const second = await entry(2, { nonce: 0, tip: 2n * GWEI });
    const third = await entry(3, { nonce: 0, tip: 2n * GWEI });
    for (const t of [first, second, third]) pool.add(t, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, BIG)), hashes([first, second, third]));
  });

  it('skips a fee cap under the base fee, and everything after it from that sender; never a queued tx', async () => {
    const pool = new TxPool(LIMITS);
    const low0 = await entry(0, { nonce: 0, fee: BASE_FEE - 1n, tip: 1n });
    const low1 = await entry(0, { nonce: 1, fee: 100n * GWEI });
    const ok0 = await entry(1, { nonce: 0 });
    const ok1low = await entry(1, { nonce: 1, type: 0, fee: BASE_FEE - 1n });
    const ok2 = await entry(1, { nonce: 2 });
    const queued = await entry(2, { nonce: 1 });
    const exact = await entry(3, { nonce: 0, fee: BASE_FEE, tip: GWEI });
    for (const t of [low0, low1, ok0, ok1low, ok2, queued, exact]) pool.add(t, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, BIG)), hashes([ok0, exact]));
    // at a lower base fee the low fee caps are executable
    assert.equal(pool.select(BASE_FEE - 1n, FAR, BIG).length, 6);
  });

  it('stops a sender at the first tx that does not fit the gas left, and fills with others', async () => {
    const pool = new TxPool(LIMITS);
    const k0 = await entry(0, { nonce: 0, tip: 3n * GWEI });
    const big0 = await entry(1, { nonce: 0, tip: 2n * GWEI, gas: 100_000n });
    const big1 = await entry(1, { nonce: 1, tip: 2n * GWEI });
    const m0 = await entry(2, { nonce: 0, tip: 1n * GWEI });
    const m1 = await entry(2, { nonce: 1, tip: 1n * GWEI });
    for (const t of [k0, big0, big1, m0, m1]) pool.add(t, 0n, NO_BASE_FEE);
    assert.deepEqual(hashes(pool.select(BASE_FEE, 2n * TRANSFER_GAS + 1n, BIG)), hashes([k0, m0]));
    assert.deepEqual(hashes(pool.select(BASE_FEE, 3n * TRANSFER_GAS, BIG)), hashes([k0, m0, m1]));
    assert.deepEqual(hashes(pool.select(BASE_FEE, 100_000n + 4n * TRANSFER_GAS, BIG)), hashes([k0, big0, big1, m0, m1]));
  });

  it('respects the byte limit on the native (wrapped) size', async () => {
    const pool = new TxPool(LIMITS);
    const big = await entry(0, { nonce: 0, tip: 3n * GWEI, dataBytes: 500 });
    const s1 = await entry(1, { nonce: 0, tip: 2n * GWEI });
    const s2 = await entry(2, { nonce: 0, tip: 1n * GWEI });
    for (const t of [big, s1, s2]) pool.add(t, 0n, NO_BASE_FEE);
    const small = s1.native.length;
    assert.equal(s2.native.length, small);
    assert.ok(big.native.length > 2 * small);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, 2 * small)), hashes([s1, s2]));
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, 2 * small - 1)), hashes([s1]));
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, big.native.length + small)), hashes([big, s1]));
  });

  it('does not change the pool', async () => {
    const pool = new TxPool(LIMITS);
    const t = await entry(0, { nonce: 0 });
    pool.add(t, 0n, NO_BASE_FEE);
    pool.select(BASE_FEE, FAR, BIG);
    assert.equal(pool.size, 1);
    assert.deepEqual(hashes(pool.select(BASE_FEE, FAR, BIG)), hashes([t]));
  });
});

describe('txpool: after a block', () => {
  it('onCommit drops included and stale txs and returns them; the rest moves with the state nonce', async () => {
    const pool = new TxPool(LIMITS);
    const a = await Promise.all([0, 1, 2, 5].map((n) => entry(0, { nonce: n })));
    const b = await Promise.all([0, 2].map((n) => entry(1, { nonce: n })));
    const untouched = await entry(2, { nonce: 0 });
    for (const t of [...a, ...b, untouched]) pool.add(t, 0n, NO_BASE_FEE);
    const A = senderKey(a[0]!);
    const B = senderKey(b[0]!);

    const dropped = pool.onCommit(new Map([[A, 2n], [B, 2n], ['00'.repeat(20), 9n]]));
    assert.deepEqual(new Set(hashes(dropped)), new Set(hashes([a[0]!, a[1]!, b[0]!])));
    const c = pool.content();
    assert.deepEqual(new Set(hashes(c.pending)), new Set(hashes([a[2]!, b[1]!, untouched])), "B's nonce 2 is promoted");
    assert.deepEqual(hashes(c.queued), hashes([a[3]!]));
    assert.equal(pool.pendingNonce(a[0]!.decoded.evm.from), 3n);
    assert.equal(pool.has(a[0]!.decoded.evm.hash), false);
    assert.deepEqual(new Set(hashes(pool.select(0n, 30_000_000n, 1_000_000))), new Set(hashes([a[2]!, b[1]!, untouched])));

    // the state jumps past every nonce of A: all stale
    assert.deepEqual(new Set(hashes(pool.onCommit(new Map([[A, 6n]])))), new Set(hashes([a[2]!, a[3]!])));
    assert.equal(pool.pendingNonce(a[0]!.decoded.evm.from), undefined);
    assert.equal(pool.size, 2);

    // a dropped nonce can be sent again
    const again = await entry(0, { nonce: 6 });
    pool.add(again, 6n, NO_BASE_FEE);
    assert.equal(pool.pendingNonce(again.decoded.evm.from), 7n);
  });

  it('drop() removes given txs; later nonces of that sender become queued', async () => {
    const pool = new TxPool(LIMITS);
    const t = await Promise.all([0, 1, 2].map((n) => entry(0, { nonce: n })));
    for (const x of t) pool.add(x, 0n, NO_BASE_FEE);
    pool.drop([t[0]!.decoded.evm]);
    pool.drop([t[0]!.decoded.evm]); // twice is harmless
    assert.equal(pool.size, 2);
    assert.deepEqual(pool.content().pending, []);
    assert.deepEqual(nonces(pool.content().queued), [1, 2]);
    assert.deepEqual(pool.select(0n, 30_000_000n, 1_000_000), []);
  });
});
