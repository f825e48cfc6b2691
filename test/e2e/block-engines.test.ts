/**
 * The two block engines (app.toml `block-engine`, docs/configuration.md) make the same chain: two dev
 * nodes, one running a block's contract txs on revm (evm/revmtx.ts), one running every tx on
 * ethereumjs' runTx, are sent the same signed txs one block at a time — deployments, ERC-20 transfers
 * that succeed and revert, storage set and cleared, a revert with a reason, a tx that runs out of gas,
 * creations and selfdestructs, calls with value, a precompile call — and every block's state root,
 * receipts root, bloom and gas, and every receipt, must be equal. Each node's start-up log must name its
 * engine. Without the addon the test is skipped, except under CI=true, where the addon must have been
 * built (test/unit/revm-addon.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Interface, Wallet, getCreateAddress } from 'ethers';
import { loadRevm } from '../../src/evm/revm.js';
import { devKeys } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { call } from '../helpers/rpc.js';
import { compileContract } from '../helpers/solc.js';

const addon = loadRevm().addon !== undefined;
const tokenC = compileContract('Token.sol', 'Token');
const sinkC = compileContract('BlockSink.sol', 'BlockSink');
const TOKEN = new Interface(tokenC.abi);
const SINK = new Interface(sinkC.abi);
const GWEI = 10n ** 9n;
const CHAIN_ID = 9000;

/**
 * From Prague on, a block's state holds its parent's hash (EIP-2935's history contract), and the two homes'
 * block hashes differ (each home has its own validator, who signs and proposes its blocks): there the
 * state roots are not compared, only everything else. test/unit/revm-block.test.ts compares the roots under
 * Prague and Osaka in one process.
 */
for (const fork of ['cancun', 'osaka'] as const) describe(`${fork}: revm and ethereumjs block engines make the same chain`, { skip: addon ? false : 'the revm addon was not built' }, () => {
  let revm: FerryNode;
  let ejs: FerryNode;
  const wallet = new Wallet(devKeys()[0]!);
  const other = new Wallet(devKeys()[1]!);
  const stranger = Wallet.createRandom().address;

  before(async () => {
    // Cancun: the e2e homes' fork; Osaka: a new home's default (docs/configuration.md "Hardforks")
    [revm, ejs] = await Promise.all([
      startFerry({ args: ['--dev', '--hardfork', fork, '--block-engine', 'revm'] }),
      startFerry({ args: ['--dev', '--hardfork', fork, '--block-engine', 'ethereumjs'] }),
    ]);
    // a dev node's fee recipient is its own validator's address: one recipient for both, so the fees land alike
    const coinbase = Wallet.createRandom().address;
    await Promise.all([revm, ejs].map((n) => call(n.url, 'anvil_setCoinbase', [coinbase])));
  });

  after(async () => {
    await Promise.all([revm?.stop(), ejs?.stop()]);
  });

  it("each node's start-up log names its block engine", () => {
    const engineOf = (n: FerryNode): string => {
      const line = readFileSync(n.logFile, 'utf8').split('\n').find((l) => l.includes('"block engine"'));
      assert.ok(line, `no "block engine" line in ${n.logFile}`);
      return JSON.parse(line).engine as string;
    };
    assert.match(engineOf(revm), /^revm/);
    assert.equal(engineOf(ejs), 'ethereumjs');
  });

  it('the same txs give the same blocks and receipts on both', async () => {
    const nonces = new Map<Wallet, number>([[wallet, 0], [other, 0]]);
    const sign = async (from: Wallet, fields: { to?: string; data?: string; value?: bigint; gasLimit: number }): Promise<string> => {
      const nonce = nonces.get(from)!;
      nonces.set(from, nonce + 1);
      return from.signTransaction({ chainId: CHAIN_ID, type: 2, nonce, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, value: 0n, ...fields });
    };
    const token = getCreateAddress({ from: wallet.address, nonce: 0 });
    const sink = getCreateAddress({ from: wallet.address, nonce: 1 });
    const deployToken = tokenC.bytecode + TOKEN.encodeDeploy(['Ferry', 'FRY', 10n ** 24n]).slice(2);
    const txs: string[] = [
      await sign(wallet, { data: deployToken, gasLimit: 3_000_000 }),
      await sign(wallet, { data: sinkC.bytecode, gasLimit: 3_000_000 }),
      await sign(wallet, { to: token, data: TOKEN.encodeFunctionData('transfer', [other.address, 10n ** 20n]), gasLimit: 100_000 }),
      await sign(other, { to: token, data: TOKEN.encodeFunctionData('transfer', [stranger, 10n ** 18n]), gasLimit: 100_000 }),
      // more than the sender holds: the token reverts
      await sign(other, { to: token, data: TOKEN.encodeFunctionData('transfer', [stranger, 10n ** 30n]), gasLimit: 100_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('set', [7n, 42n]), gasLimit: 100_000 }),
      // cleared: the refund
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('set', [7n, 0n]), gasLimit: 100_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('fail', ['no reason at all']), gasLimit: 100_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('burn', []), gasLimit: 200_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('spawn', ['0x' + '11'.repeat(32), true, false, true, stranger]), value: 5n, gasLimit: 500_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('spawn', ['0x' + '22'.repeat(32), false, false, false, stranger]), value: 3n, gasLimit: 500_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('destroyLast', [stranger]), gasLimit: 200_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('spawn', ['0x' + '33'.repeat(32), false, true, false, stranger]), gasLimit: 500_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('forward', [stranger, 9n, '0x']), value: 9n, gasLimit: 200_000 }),
      await sign(wallet, { to: sink, data: SINK.encodeFunctionData('probe', ['0x0000000000000000000000000000000000000002', '0x616263']), gasLimit: 200_000 }),
      await sign(other, { to: sink, value: 1n, gasLimit: 100_000 }),
      await sign(other, { to: stranger, value: 1n, gasLimit: 21_000 }),
    ];
    // one tx a block: a dev node answers a send once its block is committed (docs/dev-mode.md "Automine");
    // both nodes' blocks get the same timestamps
    const start = Math.floor(Date.now() / 1000) + 10;
    for (const [i, raw] of txs.entries()) {
      await Promise.all([revm, ejs].map((n) => call(n.url, 'evm_setNextBlockTimestamp', [start + i])));
      await Promise.all([revm, ejs].map((n) => call(n.url, 'eth_sendRawTransaction', [raw])));
    }
    const head = await call<string>(revm.url, 'eth_blockNumber');
    assert.equal(await call<string>(ejs.url, 'eth_blockNumber'), head);
    assert.ok(Number(head) >= txs.length, `head ${head} holds every tx`);
    const statuses: string[] = [];
    for (let h = 1; h <= Number(head); h++) {
      const [a, b] = await Promise.all([revm, ejs].map((n) => call(n.url, 'eth_getBlockByNumber', ['0x' + h.toString(16), false])));
      for (const k of [...(fork === 'cancun' ? ['stateRoot'] : []), 'receiptsRoot', 'transactionsRoot', 'logsBloom', 'gasUsed', 'baseFeePerGas', 'transactions']) {
        assert.deepEqual(a[k], b[k], `block ${h} ${k}`);
      }
      for (const hash of a.transactions as string[]) {
        const [ra, rb] = await Promise.all([revm, ejs].map((n) => call(n.url, 'eth_getTransactionReceipt', [hash])));
        for (const r of [ra, rb]) {
          delete r.blockHash;
          for (const l of r.logs) delete l.blockHash;
        }
        assert.deepEqual(ra, rb, `receipt of ${hash}`);
        statuses.push(ra.status);
      }
    }
    // the blocks hold failures and successes alike (the reverts, the gas run out, the refused creation)
    assert.ok(statuses.includes('0x0') && statuses.includes('0x1'), `statuses ${statuses.join(',')}`);
    assert.equal(statuses.length, txs.length);
  });
});
