/**
 * A deterministic random chain for state tests: blocks of transfers (to fresh and known addresses,
 * zero-value ones to empty accounts), contract storage writes (including zeroing slots), reverting
 * calls, contract creations, create-and-selfdestruct-in-the-same-tx, and SELFDESTRUCT of an existing
 * contract — driven through the real application (EvmApp: FinalizeBlock, Commit in the block's store
 * transaction) on a fresh store. The same seed always gives the same txs (ECDSA signatures are
 * deterministic, RFC 6979), so roots recorded once can be compared byte-for-byte later.
 */
import { Wallet } from 'ethers';
import { EvmApp } from '../../src/chain/app.js';
import { wrapEthereumTx } from '../../src/chain/nativetx.js';
import { devGenesis, type Genesis } from '../../src/config/genesis.js';
import { PREDEPLOYS } from '../../src/config/predeploys.js';
import type { Logger } from '../../src/lib/log.js';
import type { Store } from '../../src/store/store.js';
import { devKeys } from './accounts.js';

// runtime: SSTORE(CALLDATALOAD(0), CALLDATALOAD(32)); STOP
export const STORE_RUNTIME = '602035600035' + '55' + '00';
// runtime: SSTORE(0, 1); REVERT(0, 0)
export const REVERTER_RUNTIME = '6001600055' + '60006000fd';
// runtime: SELFDESTRUCT(CALLER)
export const DESTROYER_RUNTIME = '33ff';
// initcode: SSTORE(0, 42); CODECOPY(0, 17, 8); RETURN(0, 8) ++ STORE_RUNTIME
export const CREATE_STORE_INIT = '602a600055' + '6008601160003' + '9' + '60086000f3' + STORE_RUNTIME;
// initcode: SSTORE(0, 1); SELFDESTRUCT(CALLER) — created and destroyed in one tx
export const CREATE_AND_DIE_INIT = '6001600055' + '33ff';

export const STORE_ADDR = '0x' + '5e'.repeat(20);
export const REVERTER_ADDR = '0x' + 'ee'.repeat(20);
export const DESTROYER_ADDR = '0x' + 'dd'.repeat(20);

const CHAIN_ID = 'ferry_9000-1';
const GENESIS_TIME = '2026-01-01T00:00:00Z';
const BLOCK_MS = 1000;
const SENDERS = 5;

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** mulberry32 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hexBytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const word = (n: number | bigint) => BigInt(n).toString(16).padStart(64, '0');

export function chainGenesis(): Genesis {
  const g = devGenesis({ chainId: CHAIN_ID, validatorPubKey: new Uint8Array(32), genesisTime: GENESIS_TIME });
  // the chain recorded in test/golden/state/chain.json: a genesis of the dev accounts and the three
  // contracts below, as dev genesis files were before the predeploys (src/config/predeploys.ts)
  for (const p of PREDEPLOYS) g.evm.alloc.delete(p.address.toLowerCase());
  const slot = (n: number) => '0x' + word(n);
  g.evm.alloc.set(STORE_ADDR, {
    balance: 0n,
    nonce: 1n,
    code: hexBytes(STORE_RUNTIME),
    storage: new Map([
      [slot(1), hexBytes('07')],
      [slot(2), hexBytes('0102')],
    ]),
  });
  g.evm.alloc.set(REVERTER_ADDR, { balance: 0n, nonce: 1n, code: hexBytes(REVERTER_RUNTIME) });
  g.evm.alloc.set(DESTROYER_ADDR, { balance: 5n, nonce: 1n, code: hexBytes(DESTROYER_RUNTIME) });
  return g;
}

export async function chainApp(store: Store): Promise<EvmApp> {
  const app = await EvmApp.create(
    store,
    chainGenesis(),
    { minGasPrice: 0n, mempool: { size: 10_000, maxTxBytes: 128 * 1024, priceBumpPercent: 10, accountQueue: 64 } },
    silent,
    { onPoolChange() {} },
  );
  await app.initChain();
  return app;
}

/** Signed raw txs of each block (native-wrapped), block 1..blocks. */
export async function generateBlocks(seed: number, blocks: number): Promise<Uint8Array[][]> {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const wallets = devKeys().slice(0, SENDERS).map((k) => new Wallet(k));
  const nonces = wallets.map(() => 0);
  const targets = Array.from({ length: 12 }, (_, i) => '0x' + (0xa0 + i).toString(16).padStart(2, '0').repeat(20));
  const out: Uint8Array[][] = [];
  for (let b = 0; b < blocks; b++) {
    const n = 1 + Math.floor(rnd() * 8);
    const txs: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      const w = Math.floor(rnd() * wallets.length);
      const wallet = wallets[w]!;
      const kind = rnd();
      const req: Record<string, unknown> = { chainId: 9000, nonce: nonces[w]!++, gasLimit: 300_000 };
      if (rnd() < 0.5) {
        req.type = 2;
        req.maxFeePerGas = 3_000_000_000n;
        req.maxPriorityFeePerGas = BigInt(Math.floor(rnd() * 3)) * 1_000_000_000n;
      } else {
        req.type = 0;
        req.gasPrice = 2_000_000_000n;
      }
      if (kind < 0.3) {
        req.to = pick(targets);
        req.value = rnd() < 0.2 ? 0n : BigInt(Math.floor(rnd() * 1e6));
        req.gasLimit = 21_000;
      } else if (kind < 0.55) {
        req.to = STORE_ADDR;
        const value = rnd() < 0.3 ? 0 : Math.floor(rnd() * 1000);
        req.data = '0x' + word(Math.floor(rnd() * 6)) + word(value);
      } else if (kind < 0.65) {
        req.to = REVERTER_ADDR;
      } else if (kind < 0.75) {
        req.data = '0x' + CREATE_STORE_INIT;
      } else if (kind < 0.85) {
        req.data = '0x' + CREATE_AND_DIE_INIT;
        req.value = BigInt(Math.floor(rnd() * 1000));
      } else if (kind < 0.92) {
        req.to = DESTROYER_ADDR;
        req.value = BigInt(Math.floor(rnd() * 100));
      } else {
        // a fresh address each time: accounts come and go (zero-value touch of an empty account)
        req.to = '0x' + word(b * 100 + i).slice(24);
        req.value = rnd() < 0.5 ? 0n : 1n;
        req.gasLimit = 21_000;
      }
      const raw = hexBytes(await wallet.signTransaction(req));
      const gas = BigInt(req.gasLimit as number);
      const cap = (req.maxFeePerGas ?? req.gasPrice) as bigint;
      txs.push(wrapEthereumTx(raw, hexBytes(wallet.address), gas, cap));
    }
    out.push(txs);
  }
  return out;
}

export interface BlockOutcome {
  height: number;
  stateRoot: string;
  receiptsRoot: string;
  gasUsed: string;
  /** receipt status per included tx, e.g. "1101" */
  statuses: string;
}

/** Runs one block through FinalizeBlock + Commit (in one store transaction, as the engine does). */
export async function runBlock(app: EvmApp, store: Store, height: bigint, txs: Uint8Array[]): Promise<BlockOutcome> {
  const hash = Uint8Array.from(Buffer.from(height.toString(16).padStart(64, '0'), 'hex'));
  const timeMs = Date.parse(GENESIS_TIME) + Number(height) * BLOCK_MS;
  const res = await app.finalizeBlock({ height, timeMs, hash, proposerAddress: new Uint8Array(20), txs });
  store.transaction(() => app.commit());
  await app.afterCommit();
  const h = app.latestHeader();
  return {
    height: Number(height),
    stateRoot: Buffer.from(res.appHash).toString('hex'),
    receiptsRoot: Buffer.from(h.receiptsRoot).toString('hex'),
    gasUsed: h.gasUsed.toString(),
    statuses: store.evmBlock(height)!.transactions.map((t) => store.txLocation(t.hash)!.receipt.status).join(''),
  };
}
