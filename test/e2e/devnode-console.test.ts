/**
 * Solidity console.log: a solc-compiled contract calling the console address (Hardhat's console.sol
 * forms `log(string,uint256)` and `log(string,address,bool)`) has its lines printed in the node's
 * log for a transaction in a block and for an eth_call, and the call's result is unchanged.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Interface, getAddress } from 'ethers';
import { devAddress } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call, waitFor, waitForReceipt } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';

describe('Solidity console.log in the node log', () => {
  let node: FerryNode;
  let contract: string;
  const c = compileContract('ConsoleLogger.sol', 'ConsoleLogger');
  const abi = new Interface(c.abi);
  const logLine = (text: string) =>
    waitFor(`"${text}" in the node log`, async () => (readFileSync(node.logFile, 'utf8').includes(text) ? true : undefined), 20_000);

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from: devAddress(0), data: c.bytecode, gas: '0x200000' }]);
    contract = (await waitForReceipt(node.url, hash)).contractAddress;
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('a transaction: its console.log lines, decoded', async () => {
    assert.ok(!readFileSync(node.logFile, 'utf8').includes('console.log: bumped by 7'));
    const hash = await call<string>(node.url, 'eth_sendTransaction', [
      { from: devAddress(1), to: contract, data: abi.encodeFunctionData('bump', [7]), gas: '0x100000' },
    ]);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    await logLine('console.log: bumped by 7');
    await logLine(`console.log: sender ${getAddress(devAddress(1))} true`);
  });

  it('an eth_call: the line is printed and the result is the contract\'s', async () => {
    const out = await call<string>(node.url, 'eth_call', [{ to: contract, data: abi.encodeFunctionData('peek', [41]) }, 'latest']);
    assert.equal(BigInt(out), 42n);
    await logLine('console.log: peek 41');
  });
});
