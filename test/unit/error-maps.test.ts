/**
 * The error maps: each is exhaustive over the domain error kinds (a compile-time proof below), and
 * maps as docs/architecture.md "Errors" says — Surface A with geth's codes, CheckTx with its ABCI
 * codes by refusal reason.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evmErrors } from '../../src/evmrpc/errors.js';
import { CheckCode, checkTxCode, checkTxResult } from '../../src/chain/checkcodes.js';
import { toJsonRpcError, type JsonRpcError } from '../../src/jsonrpc/errors.js';
import {
  DomainError,
  badConfig,
  simulateRejected,
  domainErrorData,
  fromDomainErrorData,
  invalidArgument,
  invalidRequest,
  mapDomainError,
  resultTooLarge,
  reverted,
  txRejected,
  type ErrorKind,
  type ErrorMap,
  type TxRejectReason,
  pruned,
} from '../../src/lib/errors.js';

// ---- compile-time proof: a map without every kind does not type-check (tsc fails the build if
// the @ts-expect-error below stops being an error, i.e. if ErrorMap stopped being exhaustive)
const { badConfig: dropped, ...withoutOneKind } = evmErrors;
void dropped;
// @ts-expect-error -- a kind (badConfig) is not mapped
const incomplete: ErrorMap<JsonRpcError> = withoutOneKind;
void incomplete;
// the same for the CheckTx reasons: `checkTxCode` takes exactly the TxRejectReason union
// @ts-expect-error -- not a TxRejectReason
void (() => checkTxCode('nonsense'));

/** one DomainError of every kind (the record type makes this list exhaustive too) */
const SAMPLES: { [K in ErrorKind]: DomainError<K> } = {
  invalidArgument: invalidArgument('invalid argument 0: x', { index: 0, reason: 'x' }),
  invalidRequest: invalidRequest('bad'),
  methodNotFound: new DomainError('methodNotFound', 'the method x_y does not exist/is not available', { method: 'x_y' }),
  unauthorized: new DomainError('unauthorized', 'unauthorized', undefined),
  notFound: new DomainError('notFound', 'header not found', undefined),
  limitExceeded: new DomainError('limitExceeded', 'too many', undefined),
  resultTooLarge: resultTooLarge('response too large'),
  reverted: reverted('execution reverted: no', Uint8Array.from([0x08, 0xc3, 0x79, 0xa0])),
  executionFailed: new DomainError('executionFailed', 'out of gas', undefined),
  txRejected: txRejected('known', 'already known'),
  timeout: new DomainError('timeout', 'execution aborted (timeout = 5s)', undefined),
  notIncluded: new DomainError('notIncluded', "The transaction was added to the transaction pool but wasn't processed in 1s", { txHash: new Uint8Array(32).fill(0xab) }),
  cancelled: new DomainError('cancelled', 'gone', undefined),
  unavailable: new DomainError('unavailable', 'node is shutting down', undefined),
  unsupported: new DomainError('unsupported', 'not supported', undefined),
  pruned: pruned('history', 'pruned history unavailable'),
  corrupt: new DomainError('corrupt', 'bad key file', undefined),
  badConfig: badConfig('json-rpc.api', 'unknown namespace'),
  simulateRejected: simulateRejected('blockNumberOrder', 'block numbers must be in order: 1 <= 2'),
};

describe('Surface A error map (geth)', () => {
  it("maps every kind to geth's code and keeps the message", () => {
    const codes = Object.fromEntries(Object.entries(SAMPLES).map(([k, e]) => [k, mapDomainError(evmErrors, e).code]));
    assert.deepEqual(codes, {
      invalidArgument: -32602,
      invalidRequest: -32000,
      methodNotFound: -32601,
      unauthorized: -32001,
      notFound: -32000,
      limitExceeded: -32000,
      resultTooLarge: -32003,
      reverted: 3,
      executionFailed: -32000,
      txRejected: -32000,
      timeout: -32000,
      notIncluded: 4,
      cancelled: -32000,
      unavailable: -32000,
      unsupported: -32000,
      pruned: 4444,
      corrupt: -32000,
      badConfig: -32000,
      simulateRejected: -38020,
    });
    for (const e of Object.values(SAMPLES)) assert.equal(mapDomainError(evmErrors, e).message, e.message);
    // pruned state is geth's catch-all -32000 (core/state/database_history.go has no error code)
    assert.equal(mapDomainError(evmErrors, pruned('state', 'historical state 00 is not available')).code, -32000);
  });
  it('a revert carries its output as 0x-hex data (empty output: "0x"); no other kind but notIncluded has data', () => {
    assert.deepEqual(toJsonRpcError(SAMPLES.reverted, undefined, evmErrors), { code: 3, message: 'execution reverted: no', data: '0x08c379a0' });
    assert.deepEqual(toJsonRpcError(reverted('execution reverted', new Uint8Array()), undefined, evmErrors), {
      code: 3,
      message: 'execution reverted',
      data: '0x',
    });
    for (const [k, e] of Object.entries(SAMPLES)) if (k !== 'reverted' && k !== 'notIncluded') assert.equal('data' in mapDomainError(evmErrors, e), false, k);
  });
  it('a synchronous send that timed out is code 4 with the tx hash as data (EIP-7966, geth txSyncTimeoutError)', () => {
    assert.deepEqual(toJsonRpcError(SAMPLES.notIncluded, undefined, evmErrors), {
      code: 4,
      message: "The transaction was added to the transaction pool but wasn't processed in 1s",
      data: '0x' + 'ab'.repeat(32),
    });
  });
  it('a DomainError crosses a worker boundary as data and comes back the same', () => {
    for (const e of Object.values(SAMPLES)) {
      const back = fromDomainErrorData(structuredClone(domainErrorData(e)));
      assert.ok(back instanceof DomainError);
      assert.deepEqual([back.kind, back.message, back.detail], [e.kind, e.message, e.detail]);
    }
  });
});

describe('CheckTx error map (ABCI codes)', () => {
  const REASONS: readonly TxRejectReason[] = ['decode', 'known', 'poolFull', 'underpriced', 'nonceTooLow', 'nonceTooHigh', 'insufficientFunds', 'gas', 'invalid'];
  it('gives each refusal reason its Cosmos SDK code and the message as the log', () => {
    assert.deepEqual(
      REASONS.map((r) => [r, checkTxCode(r)]),
      [
        ['decode', 2],
        ['known', 19],
        ['poolFull', 20],
        ['underpriced', 13],
        ['nonceTooLow', 32],
        ['nonceTooHigh', 32],
        ['insufficientFunds', 5],
        ['gas', 11],
        ['invalid', 2],
      ],
    );
    const r = checkTxResult(txRejected('poolFull', 'txpool is full'));
    assert.deepEqual([r.code, r.log, r.codespace], [CheckCode.mempoolFull, 'txpool is full', 'evm']);
    const ok = checkTxResult();
    assert.deepEqual([ok.code, ok.log, ok.codespace], [0, '', '']);
  });
});
