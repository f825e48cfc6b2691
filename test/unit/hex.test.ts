import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bigIntToBytes, bytesToBigInt, compareBytes, concatBytes, equalBytes } from '../../src/lib/bytes.js';
import { DomainError } from '../../src/lib/errors.js';
import {
  bytesToHex,
  decodeGoHex,
  hexToBytes,
  parseData,
  parseQuantity,
  parseQuantityNumber,
  toData,
  toQuantity,
} from '../../src/lib/hex.js';
import { address, bool, data, hash, optional, quantity, quantityNumber, string } from '../../src/jsonrpc/codecs.js';

/** Asserts fn throws invalidArgument with exactly this message. */
function rejects(fn: () => unknown, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError, `not a DomainError: ${String(err)}`);
    assert.equal(err.kind, 'invalidArgument');
    assert.equal(err.message, message);
    return true;
  });
}

describe('hex encoders', () => {
  it('toQuantity is compact, zero is 0x0', () => {
    assert.equal(toQuantity(0), '0x0');
    assert.equal(toQuantity(0n), '0x0');
    assert.equal(toQuantity(1024), '0x400');
    assert.equal(toQuantity(255n), '0xff');
    assert.equal(toQuantity(Number.MAX_SAFE_INTEGER), '0x1fffffffffffff');
    assert.equal(toQuantity((1n << 256n) - 1n), '0x' + 'f'.repeat(64));
  });
  it('toQuantity refuses negatives and fractions', () => {
    assert.throws(() => toQuantity(-1), RangeError);
    assert.throws(() => toQuantity(-1n), RangeError);
    assert.throws(() => toQuantity(1.5), RangeError);
    assert.throws(() => toQuantity(Number.NaN), RangeError);
  });
  it('toData is 0x + lowercase even hex, empty is 0x', () => {
    assert.equal(toData(new Uint8Array()), '0x');
    assert.equal(toData(new Uint8Array([0, 1, 0xab, 0xff])), '0x0001abff');
    // a view into a larger buffer encodes only its own bytes
    const big = new Uint8Array([1, 2, 3, 4, 5]);
    assert.equal(toData(big.subarray(1, 3)), '0x0203');
  });
  it('bytesToHex / hexToBytes round-trip', () => {
    const b = new Uint8Array([0xde, 0xad, 0xbe, 0xef]);
    assert.equal(bytesToHex(b), 'deadbeef');
    assert.deepEqual(hexToBytes('0xdeadbeef'), b);
    assert.deepEqual(hexToBytes('DEADBEEF'), b);
    assert.equal(Object.getPrototypeOf(hexToBytes('0x00')), Uint8Array.prototype);
  });
});

describe('parseQuantity', () => {
  it('accepts compact quantities', () => {
    assert.equal(parseQuantity('0x0', 0), 0n);
    assert.equal(parseQuantity('0x400', 0), 1024n);
    assert.equal(parseQuantity('0xABCdef', 0), 0xabcdefn);
    assert.equal(parseQuantity('0X1f', 0), 31n);
    assert.equal(parseQuantity('0x' + 'f'.repeat(64), 0), (1n << 256n) - 1n);
  });
  it('rejects every bad form of geth common/hexutil, with its texts naming the argument', () => {
    rejects(() => parseQuantity('0x', 0), 'invalid argument 0: hex string "0x"');
    rejects(() => parseQuantity('0x0400', 1), 'invalid argument 1: hex number with leading zero digits');
    rejects(() => parseQuantity('0x00', 0), 'invalid argument 0: hex number with leading zero digits');
    rejects(() => parseQuantity('400', 2), 'invalid argument 2: hex string without 0x prefix');
    rejects(() => parseQuantity('', 0), 'invalid argument 0: empty hex string');
    rejects(() => parseQuantity('0xg', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseQuantity('0x1 ', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseQuantity('0x-1', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseQuantity('0x1' + '0'.repeat(64), 0), 'invalid argument 0: hex number > 256 bits');
  });
  it('rejects non-strings', () => {
    for (const v of [1, true, null, {}, [], 10n]) {
      rejects(() => parseQuantity(v, 3), 'invalid argument 3: json: cannot unmarshal non-string into Go value of type hexutil.Big');
    }
  });
});

describe('parseQuantityNumber', () => {
  it('accepts safe integers', () => {
    assert.equal(parseQuantityNumber('0x0', 0), 0);
    assert.equal(parseQuantityNumber('0x10', 0), 16);
    assert.equal(parseQuantityNumber('0x1fffffffffffff', 0), Number.MAX_SAFE_INTEGER);
  });
  it('rejects values above 2^53 - 1 and bad forms', () => {
    rejects(() => parseQuantityNumber('0x20000000000000', 0), 'invalid argument 0: hex number > 53 bits');
    rejects(() => parseQuantityNumber('0xffffffffffffffff', 1), 'invalid argument 1: hex number > 53 bits');
    rejects(() => parseQuantityNumber('0x', 0), 'invalid argument 0: hex string "0x"');
    rejects(() => parseQuantityNumber('0x01', 0), 'invalid argument 0: hex number with leading zero digits');
    rejects(() => parseQuantityNumber('10', 0), 'invalid argument 0: hex string without 0x prefix');
    rejects(() => parseQuantityNumber(16, 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type hexutil.Uint64');
  });
});

describe('parseData', () => {
  it('accepts even hex, 0x is empty', () => {
    assert.deepEqual(parseData('0x', 0), new Uint8Array());
    assert.deepEqual(parseData('0x00ff', 0), new Uint8Array([0, 255]));
    assert.deepEqual(parseData('0XABcd', 0), new Uint8Array([0xab, 0xcd]));
    assert.equal(Object.getPrototypeOf(parseData('0x01', 0)), Uint8Array.prototype);
  });
  it('rejects odd length, missing prefix, bad digits, empty string', () => {
    rejects(() => parseData('0x0', 0), 'invalid argument 0: hex string of odd length');
    rejects(() => parseData('0x123', 1), 'invalid argument 1: hex string of odd length');
    rejects(() => parseData('00ff', 0), 'invalid argument 0: hex string without 0x prefix');
    rejects(() => parseData('', 0), 'invalid argument 0: empty hex string');
    rejects(() => parseData('0xzz', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseData('0x00zz', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseData('0x0g', 0), 'invalid argument 0: invalid hex string');
    rejects(() => parseData(12, 0), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type hexutil.Bytes');
  });
  it('checks the size when given, in geth words', () => {
    const addr = '0x' + 'ab'.repeat(20);
    assert.equal(parseData(addr, 0, 20).length, 20);
    rejects(() => parseData('0x' + 'ab'.repeat(19), 0, 20), 'invalid argument 0: hex string has length 38, want 40 for common.Address');
    rejects(() => parseData('0x' + 'ab'.repeat(33), 1, 32), 'invalid argument 1: hex string has length 66, want 64 for common.Hash');
    rejects(() => parseData('0x' + 'ab'.repeat(7), 0, 8), 'invalid argument 0: hex string has length 14, want 16 for [8]byte');
    // geth checks odd length before size
    rejects(() => parseData('0x' + 'a'.repeat(39), 0, 20), 'invalid argument 0: hex string of odd length');
    rejects(() => parseData('0x' + 'zz'.repeat(20), 0, 20), 'invalid argument 0: invalid hex string');
    rejects(() => parseData(null, 0, 20), 'invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Address');
  });
  it('errors keep the bare geth reason (and what kind of error it is) for nested-field codecs', () => {
    const problemOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof DomainError && err.is('invalidArgument'));
        return err.detail;
      }
      assert.fail('did not throw');
    };
    assert.deepEqual(problemOf(() => parseQuantity('0x', 2)), { index: 2, reason: 'hex string "0x"', hexDecode: true });
    assert.deepEqual(problemOf(() => parseQuantityNumber('0x0400', 0)), { index: 0, reason: 'hex number with leading zero digits', hexDecode: true });
    assert.deepEqual(problemOf(() => parseData('0x1', 0)), { index: 0, reason: 'hex string of odd length', hexDecode: true });
    assert.deepEqual(problemOf(() => parseData(5, 0, 20)), {
      index: 0,
      reason: 'json: cannot unmarshal non-string into Go value of type common.Address',
      mismatch: { found: 'non-string', goType: 'common.Address' },
    });
    assert.deepEqual(problemOf(() => parseData('0x', 1, 20)), { index: 1, reason: 'hex string has length 0, want 40 for common.Address' });
  });
  it('handles large inputs (128 KiB of data)', () => {
    const bytes = new Uint8Array(128 * 1024).map((_, i) => i & 0xff);
    assert.deepEqual(parseData(toData(bytes), 0), bytes);
  });
});

describe('generic codecs', () => {
  it('quantity / quantityNumber / data / address / hash decode and name the argument', () => {
    assert.equal(quantity.decode('0x10', 0), 16n);
    assert.equal(quantityNumber.decode('0x10', 0), 16);
    assert.deepEqual(data.decode('0x01', 0), new Uint8Array([1]));
    assert.equal(address.decode('0x' + '11'.repeat(20), 0).length, 20);
    assert.equal(hash.decode('0x' + '11'.repeat(32), 0).length, 32);
    rejects(() => address.decode('0x' + '11'.repeat(32), 4), 'invalid argument 4: hex string has length 64, want 40 for common.Address');
    rejects(() => hash.decode('0x' + '11'.repeat(20), 2), 'invalid argument 2: hex string has length 40, want 64 for common.Hash');
    rejects(() => quantity.decode('0x0400', 1), 'invalid argument 1: hex number with leading zero digits');
  });
  it('bool and string check the JSON kind like Go', () => {
    assert.equal(bool.decode(true, 0), true);
    assert.equal(bool.decode(false, 0), false);
    rejects(() => bool.decode('true', 1), 'invalid argument 1: json: cannot unmarshal string into Go value of type bool');
    rejects(() => bool.decode(1, 1), 'invalid argument 1: json: cannot unmarshal number into Go value of type bool');
    assert.equal(string.decode('abc', 0), 'abc');
    rejects(() => string.decode({}, 0), 'invalid argument 0: json: cannot unmarshal object into Go value of type string');
    rejects(() => string.decode([], 0), 'invalid argument 0: json: cannot unmarshal array into Go value of type string');
  });
  it('optional passes undefined/null through and decodes the rest', () => {
    const q = optional(quantity);
    assert.equal(q.optional, true);
    assert.equal(q.decode(undefined, 0), undefined);
    assert.equal(q.decode(null, 0), undefined);
    assert.equal(q.decode('0x2', 0), 2n);
    rejects(() => q.decode('0x', 0), 'invalid argument 0: hex string "0x"');
  });
});

describe('bytes helpers', () => {
  it('equal, compare, concat', () => {
    const a = new Uint8Array([1, 2]);
    assert.equal(equalBytes(a, new Uint8Array([1, 2])), true);
    assert.equal(equalBytes(a, new Uint8Array([1, 3])), false);
    assert.equal(equalBytes(a, new Uint8Array([1, 2, 0])), false);
    assert.ok(compareBytes(a, new Uint8Array([1, 3])) < 0);
    assert.equal(compareBytes(a, a), 0);
    assert.deepEqual(concatBytes(a, new Uint8Array(), new Uint8Array([3])), new Uint8Array([1, 2, 3]));
  });
  it('bigint <-> bytes, minimal and padded', () => {
    assert.deepEqual(bigIntToBytes(0n), new Uint8Array());
    assert.deepEqual(bigIntToBytes(0x1234n), new Uint8Array([0x12, 0x34]));
    assert.deepEqual(bigIntToBytes(0x123n), new Uint8Array([0x01, 0x23]));
    assert.deepEqual(bigIntToBytes(0x123n, 4), new Uint8Array([0, 0, 0x01, 0x23]));
    assert.throws(() => bigIntToBytes(0x10000n, 2), RangeError);
    assert.throws(() => bigIntToBytes(-1n), RangeError);
    assert.equal(bytesToBigInt(new Uint8Array()), 0n);
    assert.equal(bytesToBigInt(new Uint8Array([0, 0, 1, 0])), 256n);
    const max = (1n << 256n) - 1n;
    assert.equal(bytesToBigInt(bigIntToBytes(max, 32)), max);
  });
});

describe("decodeGoHex: Go's encoding/hex.DecodeString", () => {
  it('decodes upper and lower case digits without a prefix', () => {
    assert.deepEqual(decodeGoHex('0aFf'), new Uint8Array([0x0a, 0xff]));
    assert.deepEqual(decodeGoHex(''), new Uint8Array([]));
  });
  it("names the first bad byte of the UTF-8 as Go's %#U does, before an odd length", () => {
    rejects(() => decodeGoHex('0x0a'), "encoding/hex: invalid byte: U+0078 'x'");
    rejects(() => decodeGoHex('0g1'), "encoding/hex: invalid byte: U+0067 'g'");
    rejects(() => decodeGoHex('abc'), 'encoding/hex: odd length hex string');
    // a control byte is not quoted; a non-ASCII char is its first UTF-8 byte (é = c3 a9)
    rejects(() => decodeGoHex('a\n'), 'encoding/hex: invalid byte: U+000A');
    rejects(() => decodeGoHex('\u00e9'), "encoding/hex: invalid byte: U+00C3 '\u00c3'");
  });
  it('throws the error the caller builds from the text', () => {
    assert.throws(() => decodeGoHex('zz', (t) => new RangeError('x: ' + t)), { name: 'RangeError', message: "x: encoding/hex: invalid byte: U+007A 'z'" });
  });
});
