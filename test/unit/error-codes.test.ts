/**
 * Wire error codes live only in the surface maps (docs/architecture.md "Errors"): code below and
 * beside them throws domain error kinds (src/lib/errors.ts), and each surface's map picks the number.
 * This scans the code of src/ (comments left out, strings kept) for JSON-RPC codes (-32xxx) and for
 * a non-zero ABCI code written as a literal `code: N` / `code === N`, and fails on any outside the maps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SRC_DIR, findInCode, sourceFiles } from '../helpers/sources.js';

/** The maps, relative to src/: the only files that may write a wire code. */
const SURFACE_MAPS: readonly string[] = [
  'evmrpc/errors.ts', // Surface A: geth's codes
  'cometrpc/errors.ts', // Surface B: CometBFT's codes
  'jsonrpc/errors.ts', // the JSON-RPC 2.0 envelope's own codes
  'chain/checkcodes.ts', // CheckTx: ABCI codes by refusal reason
  'chain/query.ts', // ABCI Query: Cosmos SDK codes by failure
];

const JSON_RPC_CODE = /-32\d{3}\b/g;
const ABCI_CODE_LITERAL = /\bcode\s*(?::|===|!==|==|!=)\s*[1-9]\d*\b/g;

const SRC = SRC_DIR;

/** `file: match` for every wire code in the given files (path relative to src/ → source). */
function wireCodes(files: ReadonlyMap<string, string>): string[] {
  return findInCode(files, (file) => (SURFACE_MAPS.includes(file) ? [] : [JSON_RPC_CODE, ABCI_CODE_LITERAL]));
}

describe('wire error codes stay in the surface maps', () => {
  it('the scan finds codes in code and strings, not in comments or in the maps', () => {
    const found = wireCodes(
      new Map([
        ['chain/a.ts', 'throw new FerryError(-32000, "x"); // -32602 in a comment is fine'],
        ['node/b.ts', "const m = `failed with -32603`; if (r.code !== 19) return { code: 2, log: '' };"],
        ['evm/c.ts', '/* -32000 and code: 5 */ const ok = { code: 0 }; if (r.code === 0) n = -32;'],
        ['evmrpc/errors.ts', 'const Code = { server: -32000 };'],
        ['chain/checkcodes.ts', 'if (code === 20) return { code: 13 };'],
      ]),
    );
    assert.deepEqual(found, ['chain/a.ts: -32000', 'node/b.ts: -32603', 'node/b.ts: code !== 19', 'node/b.ts: code: 2']);
  });
  it('src/ writes no JSON-RPC or ABCI code outside the maps', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.size > 0, 'no source files found under ' + SRC);
    assert.deepEqual(wireCodes(files), []);
  });
});
