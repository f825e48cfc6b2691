/**
 * Admission (CheckTx): the stateful checks a tx passes before it enters the EVM pool, with geth's
 * refusal texts (core/txpool/validation.go, core/txpool/legacypool/legacypool.go), and RECHECK after a
 * commit. Each refusal is a `txRejected` domain error with its reason (src/lib/errors.ts); the ABCI
 * code is chosen from that reason only where an ABCI answer is made (chain/checkcodes.ts), and the
 * typed refusal is what crosses to the RPC thread (src/node/protocol.ts), never the code.
 *
 * Also the decoded-tx cache (chain/txdecode.ts): every tx decoded from native bytes is kept by native
 * hash, so CheckTx, the proposal calls, FinalizeBlock and RECHECK decode the same bytes once.
 */
import { KECCAK256_NULL, equalsBytes, type Account } from '@ethereumjs/util';
import type { EvmTx } from '../types/chain.js';
import type { Common } from '@ethereumjs/common';
import { checksumAddress } from '../lib/address.js';
import type { MempoolOptions } from '../config/options.js';
import { decodeTx, feeCap, isImpersonated, type DecodedTx } from '../evm/tx.js';
import { txRejected, type DomainError } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';
import type { CheckTxResult } from '../types/abci.js';
import { checkTxResult, isTxRejected } from './checkcodes.js';
import type { DevState } from './devstate.js';
import { nativeHash, unwrapEthereumTx, wrapEthereumTx } from './nativetx.js';
import { DecodedTxCache } from './txdecode.js';
import { hexKey, type PoolChange, type TxPool } from './txpool.js';
import { GethText } from '../lib/gethtexts.js';

/** A CheckTx verdict: the ABCI answer, and the typed refusal behind a non-zero code. */
export interface Checked {
  result: CheckTxResult;
  refusal?: DomainError<'txRejected'>;
}

/** What admission reads: the pool, the limits, the dev state, and the latest committed state. */
export interface AdmissionDeps {
  /** the rules of the next block (evm/forks.ts): a tx is checked under them */
  rules(): Common;
  pool: TxPool;
  mempool: MempoolOptions;
  minGasPrice: bigint;
  dev: DevState;
  log: Logger;
  onPoolChange(change: PoolChange): void;
  /** the latest committed account with the pending dev cheats */
  latestAccount(addr: Uint8Array): Promise<Account | undefined>;
  nextBaseFee(): bigint;
}

/** A CheckTx verdict: the checks' result, or the code and log of the refusal they threw (kept typed). */
async function checked(run: () => Promise<CheckTxResult>): Promise<Checked> {
  try {
    return { result: await run() };
  } catch (e) {
    if (isTxRejected(e)) return { result: checkTxResult(e), refusal: e };
    throw e;
  }
}

/**
 * geth legacypool validateAuth (core/txpool/legacypool/legacypool.go): a sender with a delegation (any
 * code: an undelegated contract never gets here) or with a pending authorization in the pool may have
 * one executable tx in flight — a replacement of it, or the next nonce when it has none; and each
 * authority a set-code tx names may hold at most one pooled tx. Texts: core/txpool/errors.go,
 * legacypool.go.
 */
function checkAuthorizations(pool: TxPool, tx: EvmTx, acct: Account | undefined): void {
  const delegated = acct !== undefined && !equalsBytes(acct.codeHash, KECCAK256_NULL);
  if (delegated || pool.hasAuth(tx.from)) {
    const mine = pool.inFlight(tx.from, tx.nonce);
    if (mine.pending === 0) {
      if (tx.nonce !== (acct?.nonce ?? 0n)) throw txRejected('nonceTooHigh', 'gapped-nonce tx from delegated accounts');
    } else if (!mine.pendingHasNonce) {
      throw txRejected('poolFull', 'in-flight transaction limit reached for delegated accounts');
    }
  }
  for (const a of tx.authorizationList ?? []) {
    if (a.authority !== undefined && pool.inFlight(a.authority).total > 1) throw txRejected('invalid', 'authority already reserved');
  }
}

const admitted = (gasWanted: bigint, hash: Uint8Array): CheckTxResult => ({ ...checkTxResult(), gasWanted, data: hash });

/** The refusal of a placeholder-signed tx whose sender is not impersonated (docs/dev-mode.md "Impersonation"). */
export const notImpersonated = (from: Uint8Array) =>
  txRejected('decode', `invalid transaction v, r, s values: impersonation signature for ${checksumAddress(from)}, which is not impersonated`);

/** Locally admitted txs whose CheckTx from CometBFT is awaited (twice abci/forwarder.ts MAX_FORWARD_QUEUE). */
export const MAX_LOCAL_ADMITTED = 8192;

export class Admission {
  /** every tx decoded from native bytes, by native hash: CheckTx, the proposal calls, FinalizeBlock and RECHECK decode each once */
  private readonly decodedTxs = new DecodedTxCache();
  private cacheFullLogged = false;
  /**
   * Under CometBFT, the native hashes (hex) of txs eth_sendRawTransaction admitted here and handed to
   * the forward queue (abci/forwarder.ts) that CometBFT's CheckTx has not asked about yet: each leaves at
   * its CheckTx, or when its forward fails or finds it in CometBFT's cache; at most MAX_LOCAL_ADMITTED
   * (the oldest leaves first: a CheckTx lost with a crashed CometBFT never comes).
   */
  private readonly local = new Set<string>();
  constructor(private readonly d: AdmissionDeps) {}

  /**
   * Decodes native bytes and runs the stateful checks. `dryRun` (Surface B's check_tx): the same
   * checks, but the tx never enters the mempool. `sender`: recovered on the RPC thread already.
   */
  async checkNative(native: Uint8Array, dryRun = false, sender?: Uint8Array): Promise<Checked> {
    const hash = nativeHash(native);
    return checked(async () => {
      const d = this.decodeNative(native, hash, sender);
      const { from } = unwrapEthereumTx(native);
      if (from.length > 0 && Buffer.compare(from, d.evm.from) !== 0) {
        throw txRejected('decode', 'invalid from address: MsgEthereumTx.from does not match the transaction signer');
      }
      // CometBFT's CheckTx of a tx admitted here a moment ago (forwarded): the pool holds it, so CometBFT may too
      if (!dryRun && this.local.delete(hexKey(hash)) && this.d.pool.has(d.evm.hash)) return admitted(d.evm.gasLimit, d.evm.hash);
      return this.admit(d, native, dryRun);
    });
  }

  /**
   * eth_sendRawTransaction under CometBFT: admits `d` (its native form `native`) here, as the embedded
   * engine does, and remembers it so CometBFT's CheckTx of the forwarded bytes answers OK instead of
   * `already known`. Throws txRejected when refused (nothing remembered).
   */
  async admitLocal(d: DecodedTx, native: Uint8Array, hash: Uint8Array): Promise<CheckTxResult> {
    this.rememberDecoded(native, d, hash);
    const r = await this.admit(d, native);
    this.local.add(hexKey(hash));
    if (this.local.size > MAX_LOCAL_ADMITTED) this.local.delete(this.local.values().next().value!);
    return r;
  }

  /** The forward of a locally admitted tx ended (CometBFT answered, or it was dropped). */
  forgetLocal(hash: Uint8Array): void {
    this.local.delete(hexKey(hash));
  }

  /** eth_sendRawTransaction's path: wraps into the native form and admits; throws txRejected when refused. */
  checkEvmTx(d: DecodedTx): Promise<CheckTxResult> {
    return this.admit(d, wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm)));
  }

  /**
   * CheckTx RECHECK: a tx still in the pool is checked against the new state (nonce, funds) and
   * evicted when it no longer passes; a tx the pool no longer holds (replaced, included) is admitted
   * anew, which fails with geth's reason when it became invalid.
   */
  async recheck(native: Uint8Array): Promise<CheckTxResult> {
    const verdict = await checked(async () => {
      const hash = nativeHash(native);
      const d = this.decodeNative(native, hash);
      const tx = d.evm;
      if (!this.d.pool.has(tx.hash)) return this.admit(d, native);
      const acct = await this.d.latestAccount(tx.from);
      let failure;
      if (tx.nonce < (acct?.nonce ?? 0n)) failure = txRejected('nonceTooLow', 'nonce too low');
      else if ((acct?.balance ?? 0n) < tx.gasLimit * feeCap(tx) + tx.value) {
        failure = txRejected('insufficientFunds', 'insufficient funds for gas * price + value');
      }
      if (failure) {
        this.d.pool.drop([tx]);
        this.d.onPoolChange({ added: [], removed: [tx.hash] });
        throw failure;
      }
      return admitted(tx.gasLimit, tx.hash);
    });
    return verdict.result;
  }

  /** The stateful checks, then the pool; throws txRejected (geth's texts) when the tx is refused. */
  private async admit(d: DecodedTx, native: Uint8Array, dryRun = false): Promise<CheckTxResult> {
    const { pool, dev } = this.d;
    const tx = d.evm;
    if (native.length > this.d.mempool.maxTxBytes) throw txRejected('decode', GethText.oversizedData);
    if (pool.has(tx.hash)) throw txRejected('known', 'already known');
    if (isImpersonated(tx) && !dev.mayImpersonate(tx.from)) throw notImpersonated(tx.from);
    if (tx.gasLimit > dev.blockGasLimit) throw txRejected('gas', 'exceeds block gas limit');
    const intrinsic = d.tx.getIntrinsicGas();
    if (tx.gasLimit < intrinsic) throw txRejected('gas', 'intrinsic gas too low');
    if (feeCap(tx) < this.d.minGasPrice) throw txRejected('underpriced', 'transaction underpriced');
    if (tx.maxFeePerGas !== undefined && tx.maxPriorityFeePerGas! > tx.maxFeePerGas) {
      throw txRejected('underpriced', 'max priority fee per gas higher than max fee per gas');
    }
    const baseFee = this.d.nextBaseFee();
    if (feeCap(tx) < baseFee) {
      throw txRejected(
        'underpriced',
        `max fee per gas less than block base fee: address ${checksumAddress(tx.from)}, maxFeePerGas: ${feeCap(tx)}, baseFee: ${baseFee}`,
      );
    }
    const acct = await this.d.latestAccount(tx.from);
    const stateNonce = acct?.nonce ?? 0n;
    const balance = acct?.balance ?? 0n;
    if (tx.nonce < stateNonce) throw txRejected('nonceTooLow', 'nonce too low');
    if (balance < tx.gasLimit * feeCap(tx) + tx.value) {
      throw txRejected('insufficientFunds', 'insufficient funds for gas * price + value');
    }
    checkAuthorizations(pool, tx, acct);
    if (dryRun) return admitted(tx.gasLimit, tx.hash);
    const removed = pool.add({ decoded: d, native }, stateNonce, baseFee);
    this.d.onPoolChange({ added: [tx], removed: removed.map((r) => r.hash), natives: [native] });
    return admitted(tx.gasLimit, tx.hash);
  }

  /**
   * The decoded tx of native bytes: from the cache, else unwrapped, decoded (its sender recovered
   * unless the RPC thread already did: `sender`) and remembered. Throws txRejected('decode') when the
   * bytes do not decode (never cached).
   */
  decodeNative(native: Uint8Array, hash: Uint8Array = nativeHash(native), sender?: Uint8Array): DecodedTx {
    const hit = this.decodedTxs.get(hash);
    if (hit) return hit;
    const d = decodeTx(unwrapEthereumTx(native).raw, this.d.rules(), sender);
    this.rememberDecoded(native, d, hash);
    return d;
  }

  /** Remembers the decoding of native bytes made elsewhere (eth_sendRawTransaction under CometBFT: its CheckTx then finds it). */
  rememberDecoded(native: Uint8Array, d: DecodedTx, hash: Uint8Array = nativeHash(native)): void {
    if (this.decodedTxs.put(hash, native, d) && !this.cacheFullLogged) {
      this.cacheFullLogged = true;
      this.d.log.info({ ...this.decodedTxs.stats() }, 'decoded-tx cache is full: the least recently seen txs are dropped and decoded again if they come back');
    }
  }

  /** the decoded-tx cache's size, hits, misses and evictions since start */
  decodedTxCacheStats() {
    return this.decodedTxs.stats();
  }
}
