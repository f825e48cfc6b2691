/**
 * CPU per Keccak-256 hash and per secp256k1 recovery, the paths of src/evm/common.ts side by side in one
 * process (docs/benchmarks.md "Native Keccak and secp256k1"):
 *
 *   node dist/bench/cryptocost.js [--hashes 200000] [--recoveries 20000] [--rounds 3]
 *
 * Keccak: ferry's addon as evm/common.ts calls it (`addon`), the `keccak` package's binding as it was
 * called before (`package`: one sponge, four native calls per hash) and @noble/hashes (`js`), on inputs of
 * 40, 110 and 532 bytes (a short key, a typical trie node, a large one), each input a fresh array as
 * the trie code hands them over. Recovery: the addon (`addon`) against the `secp256k1` package (`package`),
 * over 64 signatures. Rounds interleave the paths; each figure is µs of process CPU per call.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ecrecover, keccak256 } from '../src/evm/common.js';
import { loadRevm } from '../src/evm/revm.js';

const { values } = parseArgs({
  options: { hashes: { type: 'string', default: '200000' }, recoveries: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } },
});
const HASHES = Number(values.hashes);
const RECOVERIES = Number(values.recoveries);
const ROUNDS = Number(values.rounds);
/** inputs and signatures cycled through */
const SAMPLES = 64;

const require = createRequire(import.meta.url);
interface Sponge {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}
const Keccak = (require('node-gyp-build') as (d: string) => new () => Sponge)(dirname(require.resolve('keccak/package.json')));
const sponge = new Keccak();
const packageKeccak = (msg: Uint8Array): Uint8Array => {
  sponge.initialize(1088, 512);
  sponge.absorb(Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength));
  sponge.absorbLastFewBits(0x01);
  const out = sponge.squeeze(32);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
};
const secp = require('secp256k1') as {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
};

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** µs of CPU per call of `f` over `n` calls */
function perCall(n: number, f: (i: number) => unknown): number {
  const t = cpuUs();
  for (let i = 0; i < n; i++) f(i);
  return (cpuUs() - t) / n;
}
const range = (xs: number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

if (loadRevm().addon?.keccak256 === undefined) console.log(`note: the addon has no keccak256 (${loadRevm().why}); "addon" is the fallback`);
const hashPaths: [string, (m: Uint8Array) => Uint8Array, number][] = [
  ['addon', keccak256, HASHES],
  ['package', packageKeccak, HASHES],
  ['js', (m) => keccak_256(m), HASHES / 10],
];
for (const len of [40, 110, 532]) {
  const source = Uint8Array.from({ length: len + SAMPLES }, (_, i) => (i * 131) & 0xff);
  for (const [name, f] of hashPaths) {
    if (Buffer.compare(f(source.slice(0, len)), keccak_256(source.slice(0, len))) !== 0) throw new Error(`${name} hashes wrongly`);
  }
  const got = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, f, n] of hashPaths) {
      const us = perCall(n, (i) => f(source.slice(i % SAMPLES, (i % SAMPLES) + len)));
      got.set(name, [...(got.get(name) ?? []), us]);
    }
  }
  console.log(`keccak256 ${len} bytes, µs/hash: ${[...got].map(([k, v]) => `${k} ${range(v)}`).join(', ')}`);
}

const signed = Array.from({ length: SAMPLES }, (_, i) => {
  const msg = keccak_256(Uint8Array.of(i));
  const key = keccak_256(Uint8Array.of(i, 1));
  const { signature, recid } = secp.ecdsaSign(msg, key);
  return { msg, recid, r: signature.slice(0, 32), s: signature.slice(32) };
});
const recoverPaths: [string, (i: number) => Uint8Array][] = [
  ['addon', (i) => { const g = signed[i % SAMPLES]!; return ecrecover(g.msg, BigInt(g.recid), g.r, g.s); }],
  ['package', (i) => {
    const g = signed[i % SAMPLES]!;
    const sig = new Uint8Array(64);
    sig.set(g.r, 0);
    sig.set(g.s, 32);
    return secp.ecdsaRecover(sig, g.recid, g.msg, false).subarray(1);
  }],
];
if (Buffer.compare(recoverPaths[0]![1](3), recoverPaths[1]![1](3)) !== 0) throw new Error('the recoveries differ');
const rec = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, f] of recoverPaths) rec.set(name, [...(rec.get(name) ?? []), perCall(RECOVERIES, f)]);
}
console.log(`ecrecover, µs/recovery: ${[...rec].map(([k, v]) => `${k} ${range(v)}`).join(', ')}`);
