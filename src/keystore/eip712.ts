/**
 * EIP-712 typed-data hashing, version 4 (arrays and nested structs), as eth_signTypedData_v4 signs:
 *   keccak256(0x19 0x01 ‖ hashStruct(EIP712Domain, domain) ‖ hashStruct(primaryType, message))
 * (the message part is left out when primaryType is EIP712Domain, as MetaMask's eth-sig-util and
 * ethers do). Values come as clients send them: integers as JSON numbers, decimal or 0x-hex strings;
 * bytes as 0x-hex; booleans as JSON booleans. When `types` has no EIP712Domain entry it is inferred
 * from the domain's fields (name, version, chainId, verifyingContract, salt), as ethers does.
 */
import { asBuffer, concatBytes } from '../lib/bytes.js';
import { invalidArgument, type DomainError } from '../lib/errors.js';
import { keccak256 } from './crypto.js';

export interface TypedField {
  name: string;
  type: string;
}

export interface TypedData {
  types: Record<string, TypedField[]>;
  primaryType: string;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
}

/** nesting of structs and arrays followed before giving up */
export const MAX_TYPED_DATA_DEPTH = 32;
const DOMAIN = 'EIP712Domain';
const DOMAIN_FIELDS: readonly TypedField[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
];
const WORD = 32;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INT_TYPE = /^(u?)int(\d*)$/;
const BYTES_TYPE = /^bytes(\d+)$/;
const ARRAY_TYPE = /^(.*)\[(\d*)\]$/;

function bad(message: string): DomainError<'invalidArgument'> {
  return invalidArgument(`invalid typed data: ${message}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the JSON shape of typed data (object, or the JSON string of one, as ethers and viem send). */
export function parseTypedData(v: unknown): TypedData {
  let obj = v;
  if (typeof v === 'string') {
    try {
      obj = JSON.parse(v);
    } catch {
      throw bad('not JSON');
    }
  }
  if (!isObject(obj)) throw bad('expected an object with types, primaryType, domain and message');
  const { types, primaryType, domain, message } = obj;
  if (!isObject(types)) throw bad('types must be an object');
  if (typeof primaryType !== 'string') throw bad('primaryType must be a string');
  if (!isObject(domain)) throw bad('domain must be an object');
  if (message !== undefined && !isObject(message)) throw bad('message must be an object');
  const out: Record<string, TypedField[]> = {};
  for (const [name, fields] of Object.entries(types)) {
    if (!IDENT.test(name)) throw bad(`invalid type name ${JSON.stringify(name)}`);
    if (!Array.isArray(fields)) throw bad(`types.${name} must be an array`);
    out[name] = fields.map((f) => {
      if (!isObject(f) || typeof f.name !== 'string' || typeof f.type !== 'string') throw bad(`types.${name} has a field without name and type`);
      return { name: f.name, type: f.type };
    });
  }
  if (out[DOMAIN] === undefined) out[DOMAIN] = DOMAIN_FIELDS.filter((f) => domain[f.name] !== undefined && domain[f.name] !== null);
  if (out[primaryType] === undefined) throw bad(`primaryType ${primaryType} is not defined in types`);
  return { types: out, primaryType, domain, message: message ?? {} };
}

function baseType(type: string): string {
  const m = ARRAY_TYPE.exec(type);
  return m ? baseType(m[1]!) : type;
}

/** Struct types `type` refers to, itself included. */
function dependencies(types: TypedData['types'], type: string, found: Set<string>): Set<string> {
  const t = baseType(type);
  if (found.has(t) || types[t] === undefined) return found;
  found.add(t);
  for (const f of types[t]!) dependencies(types, f.type, found);
  return found;
}

/** `Mail(Person from,Person to,string contents)Person(string name,address wallet)` */
export function encodeType(types: TypedData['types'], primary: string): string {
  const deps = dependencies(types, primary, new Set());
  deps.delete(primary);
  const format = (t: string) => `${t}(${types[t]!.map((f) => `${f.type} ${f.name}`).join(',')})`;
  return [primary, ...[...deps].sort()].map(format).join('');
}

function typeHash(types: TypedData['types'], primary: string): Uint8Array {
  return keccak256(new TextEncoder().encode(encodeType(types, primary)));
}

function hexBytes(v: unknown, what: string): Uint8Array {
  if (typeof v !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(v)) throw bad(`${what}: expected 0x-prefixed hex bytes`);
  return new Uint8Array(Buffer.from(v.slice(2), 'hex'));
}

function integer(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^-?(0x[0-9a-fA-F]+|\d+)$/.test(s)) return s.startsWith('-') ? -BigInt(s.slice(1)) : BigInt(s);
  }
  throw bad(`${what}: expected an integer`);
}

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(WORD);
  asBuffer(out).write(BigInt.asUintN(256, n).toString(16).padStart(64, '0'), 'hex');
  return out;
}

function encodeValue(types: TypedData['types'], type: string, value: unknown, what: string, depth: number): Uint8Array {
  if (depth > MAX_TYPED_DATA_DEPTH) throw bad(`nested deeper than ${MAX_TYPED_DATA_DEPTH}`);
  if (value === undefined || value === null) throw bad(`${what}: missing value`);
  const array = ARRAY_TYPE.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw bad(`${what}: expected an array`);
    if (array[2] !== '' && value.length !== Number(array[2])) throw bad(`${what}: expected ${array[2]} items`);
    return keccak256(concatBytes(...value.map((item, i) => encodeValue(types, array[1]!, item, `${what}[${i}]`, depth + 1))));
  }
  if (types[type] !== undefined) {
    if (!isObject(value)) throw bad(`${what}: expected an object`);
    return hashStructAt(types, type, value, what, depth + 1);
  }
  if (type === 'string') {
    if (typeof value !== 'string') throw bad(`${what}: expected a string`);
    return keccak256(new TextEncoder().encode(value));
  }
  if (type === 'bytes') return keccak256(hexBytes(value, what));
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw bad(`${what}: expected a boolean`);
    return word(value ? 1n : 0n);
  }
  if (type === 'address') {
    const a = hexBytes(value, what);
    if (a.length !== 20) throw bad(`${what}: expected a 20-byte address`);
    return word(BigInt('0x' + (Buffer.from(a).toString('hex') || '0')));
  }
  const bytesN = BYTES_TYPE.exec(type);
  if (bytesN) {
    const n = Number(bytesN[1]);
    if (n < 1 || n > WORD) throw bad(`unknown type ${type}`);
    const b = hexBytes(value, what);
    if (b.length !== n) throw bad(`${what}: expected ${n} bytes`);
    const out = new Uint8Array(WORD);
    out.set(b);
    return out;
  }
  const int = INT_TYPE.exec(type);
  if (int) {
    const bits = int[2] === '' ? 256 : Number(int[2]);
    if (bits < 8 || bits > 256 || bits % 8 !== 0) throw bad(`unknown type ${type}`);
    const n = integer(value, what);
    const unsigned = int[1] === 'u';
    const min = unsigned ? 0n : -(1n << BigInt(bits - 1));
    const max = unsigned ? (1n << BigInt(bits)) - 1n : (1n << BigInt(bits - 1)) - 1n;
    if (n < min || n > max) throw bad(`${what}: ${n} does not fit ${type}`);
    return word(n);
  }
  throw bad(`unknown type ${type}`);
}

function hashStructAt(types: TypedData['types'], type: string, value: Record<string, unknown>, what: string, depth: number): Uint8Array {
  const parts = [typeHash(types, type)];
  for (const f of types[type]!) parts.push(encodeValue(types, f.type, value[f.name], `${what}.${f.name}`, depth));
  return keccak256(concatBytes(...parts));
}

export function hashStruct(types: TypedData['types'], type: string, value: Record<string, unknown>): Uint8Array {
  return hashStructAt(types, type, value, type, 0);
}

/** The digest eth_signTypedData_v4 signs. */
export function typedDataHash(td: TypedData): Uint8Array {
  const parts = [Uint8Array.of(0x19, 0x01), hashStruct(td.types, DOMAIN, td.domain)];
  if (td.primaryType !== DOMAIN) parts.push(hashStruct(td.types, td.primaryType, td.message));
  return keccak256(concatBytes(...parts));
}
