/**
 * geth's native `prestateTracer` (eth/tracers/native/prestate.go): every account and storage slot
 * the transaction touches, as it was before the transaction — `{addr: {balance, code, codeHash,
 * nonce, storage}}`. With `diffMode` the answer is `{post, pre}`: only what changed, before and after.
 * tracerConfig: diffMode, disableCode, disableStorage, includeEmpty.
 */
import { Address, KECCAK256_NULL, bigIntToBytes, generateAddress, generateAddress2, setLengthLeft } from '@ethereumjs/util';
import { delegationTarget } from '../tx.js';
import { configObject, flag } from './calltracer.js';
import { OP } from './hook.js';
import { bytes32, hexOf } from './structlog.js';
import { TraceError, type Step, type Tracer, type TxEnv } from './types.js';

interface Account {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array | undefined;
  codeHash: Uint8Array | undefined;
  storage: Map<string, Uint8Array> | undefined;
  empty: boolean;
  /** post state: the balance changed (geth prints post balances only then) */
  balanceChanged?: boolean;
}

export interface PrestateConfig {
  diffMode: boolean;
  disableCode: boolean;
  disableStorage: boolean;
  includeEmpty: boolean;
}

export function parsePrestateConfig(raw: unknown): PrestateConfig {
  const c = configObject(raw);
  const cfg = {
    diffMode: flag(c, 'diffMode', 'PrestateTracerConfig'),
    disableCode: flag(c, 'disableCode', 'PrestateTracerConfig'),
    disableStorage: flag(c, 'disableStorage', 'PrestateTracerConfig'),
    includeEmpty: flag(c, 'includeEmpty', 'PrestateTracerConfig'),
  };
  if (cfg.diffMode && cfg.includeEmpty) throw new TraceError('cannot use diffMode with includeEmpty');
  return cfg;
}

const ZERO32 = new Uint8Array(32);
const isZero = (b: Uint8Array) => b.every((x) => x === 0);
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const ADDRESS_MASK = (1n << 160n) - 1n;
const toAddr = (v: bigint) => setLengthLeft(bigIntToBytes(v & ADDRESS_MASK), 20);

export class PrestateTracer implements Tracer {
  readonly wantsSteps = true;
  private readonly pre = new Map<string, Account>();
  private readonly post = new Map<string, Account>();
  private readonly created = new Set<string>();
  private readonly deleted = new Set<string>();
  private env!: TxEnv;
  private done = false;

  constructor(private readonly cfg: PrestateConfig) {}

  async onTxStart(env: TxEnv): Promise<void> {
    this.env = env;
    if (env.isCreate) this.created.add(hexOf(env.to));
    // geth eth/tracers/native/prestate.go OnTxStart: the recipient's delegation target (as the state is
    // before the tx's authorizations apply), sender, recipient, coinbase, then each authority
    if (!env.isCreate) await this.lookupDelegationTarget(env.to);
    await this.lookupAccount(env.from);
    await this.lookupAccount(env.to);
    await this.lookupAccount(env.coinbase);
    for (const a of env.authorities) await this.lookupAccount(a);
  }

  /** under EIP-7702, a call to a delegated account also reads its delegation target (geth's prestate tracer) */
  private async lookupDelegationTarget(addr: Uint8Array): Promise<void> {
    if (!this.env.delegations) return;
    const target = delegationTarget(await this.env.state.getCode(new Address(addr)));
    if (target !== undefined) await this.lookupAccount(target);
  }

  private async lookupCallee(addr: Uint8Array): Promise<void> {
    await this.lookupAccount(addr);
    await this.lookupDelegationTarget(addr);
  }

  onStep(s: Step): Promise<void> | undefined {
    const op = s.op;
    const n = s.stackLength;
    const top = (i: number) => s.stack[n - 1 - i]!;
    if (n >= 1 && (op === OP.SLOAD || op === OP.SSTORE)) return this.lookupStorage(s.address, top(0));
    if (n >= 1 && (op === 0x3c || op === 0x3f || op === 0x3b || op === 0x31 || op === OP.SELFDESTRUCT)) {
      if (op === OP.SELFDESTRUCT && this.created.has(hexOf(s.address))) this.deleted.add(hexOf(s.address));
      return this.lookupAccount(toAddr(top(0)));
    }
    if (n >= 5 && (op === OP.DELEGATECALL || op === OP.CALL || op === OP.STATICCALL || op === OP.CALLCODE)) {
      return this.lookupCallee(toAddr(top(1)));
    }
    if (op === OP.CREATE) return this.onCreate(s);
    if (n >= 4 && op === OP.CREATE2) {
      const offset = Number(top(1));
      const size = Number(top(2));
      const init = new Uint8Array(size);
      if (offset < s.memorySize) init.set(s.memory.subarray(offset, Math.min(offset + size, s.memorySize)));
      const addr = generateAddress2(s.address, bytes32(top(3)), init);
      this.created.add(hexOf(addr));
      return this.lookupAccount(addr);
    }
    return undefined;
  }

  private async onCreate(s: Step): Promise<void> {
    const nonce = (await s.state.getAccount(new Address(s.address)))?.nonce ?? 0n;
    const addr = generateAddress(s.address, bigIntToBytes(nonce));
    this.created.add(hexOf(addr));
    await this.lookupAccount(addr);
  }

  private async lookupAccount(addr: Uint8Array): Promise<void> {
    const key = hexOf(addr);
    if (this.pre.has(key)) return;
    const sm = this.env.state;
    const a = new Address(addr);
    const acct = await sm.getAccount(a);
    const code = acct ? await sm.getCode(a) : new Uint8Array();
    const balance = acct?.balance ?? 0n;
    const nonce = acct?.nonce ?? 0n;
    const codeHash = acct && !same(acct.codeHash, KECCAK256_NULL) && !isZero(acct.codeHash) ? acct.codeHash : undefined;
    this.pre.set(key, {
      balance,
      nonce,
      code: code.length > 0 && !this.cfg.disableCode ? code : undefined,
      codeHash,
      storage: this.cfg.disableStorage ? undefined : new Map(),
      empty: !(nonce > 0n || code.length > 0 || balance !== 0n),
    });
  }

  private async lookupStorage(addr: Uint8Array, slot: bigint): Promise<void> {
    if (this.cfg.disableStorage) return;
    const acct = this.pre.get(hexOf(addr));
    if (!acct) return;
    const key = hexOf(bytes32(slot));
    if (acct.storage!.has(key)) return;
    acct.storage!.set(key, await this.slot(addr, bytes32(slot)));
  }

  private async slot(addr: Uint8Array, key: Uint8Array): Promise<Uint8Array> {
    const raw = await this.env.state.getStorage(new Address(addr), key);
    return raw.length === 0 ? ZERO32 : setLengthLeft(raw, 32);
  }

  async onTxEnd(): Promise<void> {
    this.done = true;
    if (this.cfg.diffMode) await this.diff();
    if (this.cfg.includeEmpty) return;
    for (const [k, a] of this.pre) if (a.empty) this.pre.delete(k);
  }

  private async diff(): Promise<void> {
    const sm = this.env.state;
    for (const [key, before] of this.pre) {
      if (this.deleted.has(key)) continue;
      const a = new Address(Uint8Array.from(Buffer.from(key.slice(2), 'hex')));
      const acct = await sm.getAccount(a);
      const after: Account = { balance: 0n, nonce: 0n, code: undefined, codeHash: undefined, storage: new Map(), empty: false };
      let modified = false;
      const balance = acct?.balance ?? 0n;
      const nonce = acct?.nonce ?? 0n;
      const codeHash = acct?.codeHash ?? KECCAK256_NULL;
      if (balance !== before.balance) {
        modified = true;
        after.balanceChanged = true;
        after.balance = balance;
      }
      if (nonce !== before.nonce) {
        modified = true;
        after.nonce = nonce;
      }
      if (!same(codeHash, before.codeHash ?? KECCAK256_NULL)) {
        modified = true;
        after.codeHash = codeHash;
      }
      if (!this.cfg.disableCode) {
        const code = acct ? await sm.getCode(a) : new Uint8Array();
        if (!same(code, before.code ?? new Uint8Array())) {
          modified = true;
          after.code = code;
        }
      }
      if (!this.cfg.disableStorage && before.storage) {
        for (const [slot, val] of [...before.storage]) {
          if (isZero(val)) before.storage.delete(slot);
          const now = await this.slot(a.bytes, Uint8Array.from(Buffer.from(slot.slice(2), 'hex')));
          if (same(val, now)) {
            before.storage.delete(slot);
          } else {
            modified = true;
            if (!isZero(now)) after.storage!.set(slot, now);
          }
        }
      }
      if (modified) {
        this.post.set(key, after);
      } else {
        this.pre.delete(key);
      }
    }
  }

  result(): unknown {
    if (!this.done) throw new TraceError('prestate tracer did not see the end of the transaction');
    if (!this.cfg.diffMode) return accounts(this.pre, true);
    return { post: accounts(this.post, false), pre: accounts(this.pre, true) };
  }
}

/** geth's account JSON: balance (pre: always; post: when changed), code, codeHash, nonce (non-zero), storage (non-empty) */
function accounts(m: Map<string, Account>, isPre: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [addr, a] of m) {
    const j: Record<string, unknown> = {};
    if (isPre || a.balanceChanged) j.balance = '0x' + a.balance.toString(16);
    if (a.code !== undefined) j.code = hexOf(a.code);
    if (a.codeHash !== undefined) j.codeHash = hexOf(a.codeHash);
    if (a.nonce !== 0n) j.nonce = Number(a.nonce);
    if (a.storage !== undefined && a.storage.size > 0) {
      const s: Record<string, string> = {};
      for (const [k, v] of a.storage) s[k] = hexOf(v);
      j.storage = s;
    }
    out[addr] = j;
  }
  return out;
}
