/**
 * Block proposals (docs/abci.md): which txs a block gets. PrepareProposal from ferry's own pool (the
 * embedded engine) or from the txs CometBFT's mempool supplied (`order`), and ProcessProposal's
 * verdict on another validator's block. The last own proposal's decoded txs are kept for the
 * FinalizeBlock that follows (`takeDecoded`), so it decodes nothing again.
 */
import type { Common } from '@ethereumjs/common';
import type { Account } from '@ethereumjs/util';
import { blockSizeBound, blockSizeBounded, builderTxBudget, MAX_RLP_BLOCK_SIZE } from '../evm/blocksize.js';
import { decodeTx, feeCap, isImpersonated, type DecodedTx } from '../evm/tx.js';
import type { ProposalRequest } from '../types/abci.js';
import { notImpersonated } from './admission.js';
import { isTxRejected } from './checkcodes.js';
import { wrapEthereumTx } from './nativetx.js';
import { hexKey, TxPool } from './txpool.js';

/** What proposing reads. */
export interface ProposalDeps {
  pool: TxPool;
  /** the pool's replacement bump (the scratch pool that orders CometBFT's txs uses the same) */
  priceBumpPercent: number;
  /** the genesis block gas limit, the bound of a block CometBFT proposes */
  maxGas: bigint;
  /** whether placeholder-signed (impersonated) txs may be in a block: the dev namespaces are served */
  impersonation: boolean;
  /** the decoded tx of native bytes; throws txRejected when they do not decode */
  decodeNative(native: Uint8Array): DecodedTx;
  latestAccount(addr: Uint8Array): Promise<Account | undefined>;
  nextBaseFee(): bigint;
  blockGasLimit(): bigint;
  /** the rules of a block with this timestamp (unix seconds): EIP-7934 bounds its size from Osaka on */
  commonAt(timestamp: bigint): Common;
  /** the rules txs decode under now, and whether a placeholder-signed tx from an address may go into a block (anvil_reorg) */
  rules(): Common;
  mayImpersonate(address: Uint8Array): boolean;
}

/** A tx the next own proposal must hold (anvil_reorg), decoded and in its native form. */
export interface ForcedTx {
  decoded: DecodedTx;
  native: Uint8Array;
}

/** the rules of the block a proposal makes, from its CometBFT time (FinalizeBlock's timestamp) */
const rulesAt = (d: ProposalDeps, timeMs: number) => d.commonAt(BigInt(Math.floor(timeMs / 1000)));

/** EIP-7934's budget for the txs' envelopes of a block built under `common`; unbounded before Osaka. */
function ethBytesBudget(common: Common): number {
  return blockSizeBounded(common) ? builderTxBudget(common) : Number.POSITIVE_INFINITY;
}

export class Proposals {
  /** the last own proposal's entries: FinalizeBlock reuses their decoded txs (no second decode) */
  private proposed = new Map<Uint8Array, DecodedTx>();

  /** anvil_reorg: what the next own proposal holds instead of the pool's txs (taken once) */
  private forced: ForcedTx[] | undefined;

  constructor(private readonly d: ProposalDeps) {}

  /**
   * anvil_reorg's txs of one new block (signed EVM bytes), decoded and checked now, before the chain
   * is rewound: bytes that do not decode, or a placeholder signature for an address not impersonated,
   * are refused (txRejected) and nothing changes. The block's execution leaves out what then fails
   * (a wrong nonce), as Anvil's miner does (foundry crates/anvil/src/eth/backend/mem/mod.rs reorg).
   */
  decodeForced(raws: readonly Uint8Array[]): ForcedTx[] {
    return raws.map((raw) => {
      const d = decodeTx(raw, this.d.rules());
      if (isImpersonated(d.evm) && !this.d.mayImpersonate(d.evm.from)) throw notImpersonated(d.evm.from);
      return { decoded: d, native: wrapEthereumTx(d.evm.raw, d.evm.from, d.evm.gasLimit, feeCap(d.evm)) };
    });
  }

  /** The next own proposal holds exactly `txs` (in this order), not the pool's. */
  force(txs: ForcedTx[]): void {
    this.forced = txs;
  }

  /**
   * The embedded engine's proposal: the forced txs (anvil_reorg) or the pool's executable txs in block
   * order, within the gas limit, `maxTxBytes` and, under Osaka, EIP-7934's block size (evm/blocksize.ts).
   */
  prepare(req: { timeMs: number; maxTxBytes: number }): Uint8Array[] {
    const budget = ethBytesBudget(rulesAt(this.d, req.timeMs));
    const entries = this.forced ?? this.d.pool.select(this.d.nextBaseFee(), this.d.blockGasLimit(), req.maxTxBytes, budget);
    this.forced = undefined;
    this.proposed = new Map(entries.map((e) => [e.native, e.decoded]));
    return entries.map((e) => e.native);
  }

  /** The decoded tx of a block tx when it came from the last own proposal; undefined otherwise. */
  proposedTx(native: Uint8Array): DecodedTx | undefined {
    return this.proposed.get(native);
  }

  /** Forgets the last own proposal (its block was finalized, or the chain was rewound). */
  forget(): void {
    this.proposed = new Map();
  }

  /**
   * PrepareProposal under CometBFT: from the mempool's txs, the executable ones in block order — per
   * sender in nonce order from its committed nonce, across senders the highest effective tip first —
   * within the block gas limit, `maxTxBytes` and, under Osaka, EIP-7934's block size; undecodable, gapped,
   * stale or underpriced txs are left out.
   */
  async order(req: ProposalRequest): Promise<Uint8Array[]> {
    const { decoded, nonces } = await this.decodeAll(req.txs);
    const baseFee = this.d.nextBaseFee();
    const scratch = new TxPool({ size: req.txs.length + 1, priceBumpPercent: this.d.priceBumpPercent, accountQueue: req.txs.length + 1 });
    decoded.forEach((d, i) => {
      if (!d) return;
      try {
        scratch.add({ decoded: d, native: req.txs[i]! }, nonces.get(hexKey(d.evm.from))!, baseFee);
      } catch (e) {
        if (!isTxRejected(e)) throw e;
      }
    });
    const maxBytes = req.maxTxBytes ?? Number.MAX_SAFE_INTEGER;
    return scratch.select(baseFee, this.d.maxGas, maxBytes, ethBytesBudget(rulesAt(this.d, req.timeMs))).map((e) => e.native);
  }

  /**
   * ProcessProposal: every tx decodes, pays at least the base fee, each sender's nonces follow its
   * committed nonce without gap or repeat, the gas limits fit the block and, under Osaka, the block's
   * RLP fits EIP-7934's bound (go-ethereum core/block_validator.go ValidateBody). Anything else rejects.
   */
  async process(req: ProposalRequest): Promise<boolean> {
    const { decoded, nonces } = await this.decodeAll(req.txs);
    const baseFee = this.d.nextBaseFee();
    let gas = 0n;
    for (const d of decoded) {
      if (!d) return false;
      if (!this.d.impersonation && isImpersonated(d.evm)) return false;
      const from = hexKey(d.evm.from);
      if (d.evm.nonce !== nonces.get(from)) return false;
      nonces.set(from, d.evm.nonce + 1n);
      if (feeCap(d.evm) < baseFee) return false;
      gas += d.evm.gasLimit;
      if (gas > this.d.maxGas) return false;
    }
    const common = rulesAt(this.d, req.timeMs);
    if (blockSizeBounded(common) && blockSizeBound(common, decoded.map((d) => d!.evm.raw)) > MAX_RLP_BLOCK_SIZE) return false;
    return true;
  }

  /** Decoded txs of a proposal and their senders' committed nonces; undefined when a tx does not decode. */
  private async decodeAll(txs: Uint8Array[]): Promise<{ decoded: (DecodedTx | undefined)[]; nonces: Map<string, bigint> }> {
    const nonces = new Map<string, bigint>();
    const decoded: (DecodedTx | undefined)[] = [];
    for (const native of txs) {
      let d: DecodedTx | undefined;
      try {
        d = this.d.decodeNative(native);
      } catch (e) {
        if (!isTxRejected(e)) throw e;
      }
      decoded.push(d);
      if (d && !nonces.has(hexKey(d.evm.from))) {
        nonces.set(hexKey(d.evm.from), (await this.d.latestAccount(d.evm.from))?.nonce ?? 0n);
      }
    }
    return { decoded, nonces };
  }
}
