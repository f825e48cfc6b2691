/** The console.sol decoder: known Hardhat selectors, argument decoding, and what it ignores. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AbiCoder, getAddress, id } from 'ethers';
import { decodeConsoleLog } from '../../src/evm/consolelog.js';

const enc = (sig: string, types: string[], values: unknown[]) =>
  Buffer.from(id(sig).slice(2, 10) + AbiCoder.defaultAbiCoder().encode(types, values).slice(2), 'hex');

describe('decodeConsoleLog', () => {
  it('decodes the generated signatures, both uint spellings, and the typed forms', () => {
    // Hardhat's well-known selector of log(string,uint256)
    assert.equal(id('log(string,uint256)').slice(0, 10), '0xb60e72cc');
    assert.equal(decodeConsoleLog(enc('log(string,uint256)', ['string', 'uint256'], ['n', 5n])), 'n 5');
    assert.equal(decodeConsoleLog(enc('log(string,uint)', ['string', 'uint256'], ['n', 5n])), 'n 5');
    assert.equal(
      decodeConsoleLog(enc('log(bool,address,string,uint256)', ['bool', 'address', 'string', 'uint256'], [false, '0x' + 'ab'.repeat(20), 'x', 1n])),
      `false ${getAddress('0x' + 'ab'.repeat(20))} x 1`,
    );
    assert.equal(decodeConsoleLog(enc('logInt(int256)', ['int256'], [-3n])), '-3');
    assert.equal(decodeConsoleLog(enc('logBytes2(bytes2)', ['bytes2'], ['0xbeef'])), '0xbeef');
    assert.equal(decodeConsoleLog(enc('logBytes(bytes)', ['bytes'], ['0x010203'])), '0x010203');
    assert.equal(decodeConsoleLog(Buffer.from(id('log()').slice(2, 10), 'hex')), '');
  });

  it('ignores unknown selectors and short data', () => {
    assert.equal(decodeConsoleLog(enc('transfer(address,uint256)', ['address', 'uint256'], ['0x' + '00'.repeat(20), 1n])), undefined);
    assert.equal(decodeConsoleLog(enc('log(string,uint256)', ['string', 'uint256'], ['n', 5n]).subarray(0, 40)), undefined);
    assert.equal(decodeConsoleLog(new Uint8Array([1, 2])), undefined);
  });
});
