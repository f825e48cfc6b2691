/**
 * A plain value transfer in a block without the EVM: a tx of type 0, 1 or 2 sending a non-zero value to
 * an account that has no code, is no precompile and is neither the sender nor the coinbase runs no
 * instruction, so ethereumjs' runTx only moves balances and bumps the sender's nonce. This does the
 * same state changes, in the same order (sender, recipient, coinbase), with the same gas (the intrinsic
 * gas, or the EIP-7623 calldata floor when higher) — docs/benchmarks.md "Block execution: the chain
 * thread" has what it saves. Anything else, and any tx runTx would refuse (nonce, funds, fee cap, gas
 * limit), returns undefined and goes through runTx, which gives the exact error text.
 * test/unit/fast-transfer.test.ts compares it with runTx over random transfers.
 */
import type { Common } from '@ethereumjs/common';
import { Capability, getCalldataFloorGas, type TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, bytesToUnprefixedHex, equalsBytes } from '@ethereumjs/util';
import type { Block } from '@ethereumjs/block';
import type { VM } from '@ethereumjs/vm';
import type { StateManagerInterface } from '@ethereumjs/common';

/**
 * EIPs whose tx-level rules a transfer here does not carry: state gas (8037, 2780), block access lists
 * (7928), transfer logs (7708), block gas without refunds (7778), stateless witnesses (6800, 7864).
 */
const UNCARRIED_EIPS = [8037, 2780, 7928, 7708, 7778, 6800, 7864];

type Listener = (...a: never[]) => unknown;

/**
 * The EVM event listeners a transfer may skip the EVM under, each with the recipients (unprefixed hex)
 * whose transfers it must see run (console.log's address); the others' effect the block executor
 * reproduces itself (the address index's touched set).
 */
const TRANSFER_AWARE = new WeakMap<Listener, readonly string[]>();

/** Marks an EVM event listener as one a plain transfer may skip, except a transfer to one of `watched`. */
export function transferAware<F extends Listener>(listener: F, watched: readonly string[] = []): F {
  TRANSFER_AWARE.set(listener, watched);
  return listener;
}

const rulesOk = new WeakMap<Common, boolean>();

interface Watchable {
  DEBUG: boolean;
  _opts: { profilerOpts?: { reportAfterTx?: boolean } };
  events: { listenerCount(e: string): number };
  evm: { events?: { listeners(e: string): ((...a: never[]) => unknown)[] }; precompiles: Map<string, unknown> };
}

/**
 * Whether txs of this VM may skip it at all (nothing watches txs or messages that would miss them):
 * undefined if not, else the recipients whose transfers must still run in the EVM.
 */
export function mayTransferFast(vmIn: VM, common: Common): Set<string> | undefined {
  const vm = vmIn as unknown as Watchable;
  if (vm.DEBUG || vm._opts.profilerOpts?.reportAfterTx === true) return undefined;
  if (vm.events.listenerCount('beforeTx') > 0 || vm.events.listenerCount('afterTx') > 0) return undefined;
  let ok = rulesOk.get(common);
  if (ok === undefined) {
    ok = common.isActivatedEIP(1559) && common.gteHardfork('spuriousDragon') && !UNCARRIED_EIPS.some((eip) => common.isActivatedEIP(eip));
    rulesOk.set(common, ok);
  }
  if (!ok) return undefined;
  const watched = new Set<string>();
  const ev = vm.evm.events;
  if (ev === undefined) return watched;
  for (const name of ['beforeMessage', 'afterMessage', 'step', 'newContract']) {
    for (const l of ev.listeners(name)) {
      const w = TRANSFER_AWARE.get(l);
      if (w === undefined) return undefined;
      for (const a of w) watched.add(a);
    }
  }
  return watched;
}

/** What a transfer done here gives the block: runTx's totalGasSpent. */
export interface FastTransfer {
  gasUsed: bigint;
}

const isEmptyAccount = (a: Account): boolean => a.nonce === 0n && a.balance === 0n && equalsBytes(a.codeHash, KECCAK256_NULL);

/**
 * Applies `tx` (from `sender`) as runTx would if it is a plain transfer runTx accepts; otherwise changes
 * nothing and returns undefined. `watched`: what `mayTransferFast` answered for this VM.
 */
export async function fastTransfer(
  vm: VM,
  watched: Set<string>,
  sm: StateManagerInterface,
  tx: TypedTransaction,
  sender: Uint8Array,
  block: Block,
): Promise<FastTransfer | undefined> {
  const to = tx.to;
  if (to === undefined || tx.value <= 0n || tx.type > 2) return undefined;
  const toHex = bytesToUnprefixedHex(to.bytes);
  if (watched.has(toHex) || (vm.evm as unknown as Watchable['evm']).precompiles.has(toHex)) return undefined;
  const coinbase = block.header.coinbase;
  if (equalsBytes(to.bytes, sender) || equalsBytes(to.bytes, coinbase.bytes) || equalsBytes(sender, coinbase.bytes)) return undefined;
  const baseFee = block.header.baseFeePerGas ?? 0n;
  // runTx's validation, in its order; a failure is left to runTx for its error
  if (tx.gasLimit > block.header.gasLimit) return undefined;
  const intrinsic = tx.getIntrinsicGas();
  const floor = getCalldataFloorGas(tx, new Address(sender));
  if (tx.gasLimit < intrinsic || tx.gasLimit < floor) return undefined;
  const dynamic = tx.supports(Capability.EIP1559FeeMarket);
  const t = tx as TypedTransaction & { maxFeePerGas?: bigint; gasPrice?: bigint };
  const feeCap = dynamic ? t.maxFeePerGas! : t.gasPrice!;
  if (feeCap < baseFee) return undefined;
  const from = new Address(sender);
  const fromAccount = await sm.getAccount(from);
  if (fromAccount === undefined || !equalsBytes(fromAccount.codeHash, KECCAK256_NULL)) return undefined;
  if (fromAccount.balance < tx.getUpfrontCost(baseFee)) return undefined;
  if (dynamic && fromAccount.balance < tx.value + tx.gasLimit * feeCap) return undefined;
  if (fromAccount.nonce !== tx.nonce) return undefined;
  const toAccount = await sm.getAccount(to);
  if (toAccount !== undefined && !equalsBytes(toAccount.codeHash, KECCAK256_NULL)) return undefined;
  const inclusion = dynamic ? tx.getEffectivePriorityFee(baseFee) : t.gasPrice! - baseFee;
  const gasPrice = dynamic ? inclusion + baseFee : t.gasPrice!;
  const gasUsed = intrinsic > floor ? intrinsic : floor;
  const minerValue = gasUsed * inclusion;
  const minerAccount = await sm.getAccount(coinbase);
  // a coinbase left empty is deleted by runTx's touched-account cleanup (EIP-161): runTx does that
  if (minerValue === 0n && (minerAccount === undefined || isEmptyAccount(minerAccount))) return undefined;
  fromAccount.nonce += 1n;
  fromAccount.balance -= gasUsed * gasPrice + tx.value;
  await sm.putAccount(from, fromAccount);
  const credited = toAccount ?? new Account();
  credited.balance += tx.value;
  await sm.putAccount(to, credited);
  const miner = minerAccount ?? new Account();
  miner.balance += minerValue;
  await sm.putAccount(coinbase, miner);
  return { gasUsed };
}
