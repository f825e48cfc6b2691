/**
 * Fees: the EIP-1559 base fee of the next block, from its parent's gas use (go-ethereum
 * consensus/misc/eip1559/eip1559.go, CalcBaseFee). One job: the arithmetic; the dev override of the
 * next base fee (anvil_setNextBlockBaseFeePerGas) is dev state (chain/devstate.ts).
 */
import type { EvmHeader } from '../types/chain.js';

/** EIP-1559's elasticity multiplier: a block's gas target is half its gas limit */
export const EIP1559_ELASTICITY = 2n;
/** EIP-1559's base fee change denominator: at most 1/8 up or down per block */
export const EIP1559_DENOMINATOR = 8n;

/** The base fee of the block after `parent` (EIP-1559). */
export function nextBaseFee(parent: { baseFeePerGas: bigint; gasUsed: bigint; gasLimit: bigint }): bigint {
  const target = parent.gasLimit / EIP1559_ELASTICITY;
  const base = parent.baseFeePerGas;
  if (parent.gasUsed === target) return base;
  if (parent.gasUsed > target) {
    const delta = (base * (parent.gasUsed - target)) / target / EIP1559_DENOMINATOR;
    return base + (delta > 1n ? delta : 1n);
  }
  const delta = (base * (target - parent.gasUsed)) / target / EIP1559_DENOMINATOR;
  return base - delta;
}

/** The base fee of the block after `latest`: block 1 keeps the genesis base fee, later blocks follow EIP-1559. */
export const baseFeeAfter = (latest: EvmHeader): bigint => (latest.number === 0n ? latest.baseFeePerGas : nextBaseFee(latest));
