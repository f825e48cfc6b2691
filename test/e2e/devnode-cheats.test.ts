/**
 * State cheats on `ferry dev` (docs/dev-mode.md "State cheats"): viem's test client in Anvil and
 * Hardhat mode sets balances, code, storage and nonces; each is seen at once by `latest` reads,
 * eth_call and the pool's checks, goes into the next block's state (its state root changes, the block
 * before keeps the old value), survives a restart while still pending, and `cast rpc` reaches it too.
 * Bad inputs are refused and change nothing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_BALANCE, devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';

const chain = defineChain({ id: EVM_CHAIN_ID, name: 'ferry', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [] } } });

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');
/** runtime code: returns storage slot 0 (PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN) */
const RETURN_SLOT0 = '0x60005460005260206000f3';
const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`;
const hexAddr = (n: number): Hex => `0x${n.toString(16).padStart(40, '0')}`;

async function abciBalance(node: FerryNode, addr: string): Promise<bigint> {
  const res = (await (await fetch(`${node.cometUrl}/abci_query?path="/evm/balance"&data=${addr}`)).json()) as any;
  return BigInt('0x' + Buffer.from(res.result.response.value, 'base64').toString('hex'));
}

describe('ferry dev: state cheats', () => {
  let node: FerryNode;
  let test: ReturnType<typeof createTestClient>;
  let hardhat: ReturnType<typeof createTestClient>;
  let pub: ReturnType<typeof createPublicClient>;

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    test = createTestClient({ chain, mode: 'anvil', transport: http(node.url) });
    hardhat = createTestClient({ chain, mode: 'hardhat', transport: http(node.url) });
    pub = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('anvil mode: setBalance/setCode/setStorageAt/setNonce are seen at once by latest reads and eth_call, without a block', async () => {
    const a = hexAddr(0xa1);
    const start = await pub.getBlockNumber();
    await test.setBalance({ address: a, value: 123456789n });
    await test.setCode({ address: a, bytecode: RETURN_SLOT0 });
    await test.setStorageAt({ address: a, index: 0, value: word(42n) });
    await test.setStorageAt({ address: a, index: 7, value: word(0xbeefn) });
    await test.setNonce({ address: a, nonce: 9 });
    assert.equal(await pub.getBlockNumber(), start);
    assert.equal(await pub.getBalance({ address: a }), 123456789n);
    assert.equal(await pub.getCode({ address: a }), RETURN_SLOT0);
    assert.equal(await pub.getStorageAt({ address: a, slot: '0x0' }), word(42n));
    assert.equal(await pub.getStorageAt({ address: a, slot: '0x7' }), word(0xbeefn));
    assert.equal(await pub.getTransactionCount({ address: a }), 9);
    // the call workers run the cheated code on the cheated storage
    assert.equal(await call(node.url, 'eth_call', [{ to: a }, 'latest']), word(42n));
    assert.ok(BigInt(await call(node.url, 'eth_estimateGas', [{ to: a }, 'latest'])) > 21000n);
    // a caller's own override still wins over a pending cheat
    assert.equal(await call(node.url, 'eth_call', [{ to: a }, 'latest', { [a]: { stateDiff: { [word(0n)]: word(5n) } } }]), word(5n));
    // Anvil's answers
    assert.equal(await call(node.url, 'anvil_setBalance', [a, '0x75bcd15']), null);
    assert.equal(await call(node.url, 'anvil_setNonce', [a, 9]), null);
    assert.equal(await call(node.url, 'anvil_setCode', [a, RETURN_SLOT0]), null);
    assert.equal(await call(node.url, 'anvil_setStorageAt', [a, '0x0', word(42n)]), true);
  });

  it('the next block applies the cheats: its state root changes, the block before keeps the old values', async () => {
    await test.setAutomine(false);
    try {
      const a = hexAddr(0xa2);
      // control: an empty block without cheats keeps the state root
      await test.mine({ blocks: 1 });
      const parent = await pub.getBlock();
      await test.mine({ blocks: 1 });
      const empty = await pub.getBlock();
      assert.equal(empty.stateRoot, parent.stateRoot);
      await test.setBalance({ address: a, value: 777n });
      await test.setStorageAt({ address: a, index: 3, value: word(3n) });
      // Surface B answers the committed state: the pending cheat is not in it yet
      assert.equal(await abciBalance(node, a), 0n);
      await test.mine({ blocks: 1 });
      const block = await pub.getBlock();
      assert.equal(block.number, empty.number + 1n);
      assert.notEqual(block.stateRoot, empty.stateRoot);
      assert.equal(await pub.getBalance({ address: a, blockNumber: block.number }), 777n);
      assert.equal(await pub.getBalance({ address: a, blockNumber: empty.number }), 0n);
      assert.equal(await pub.getStorageAt({ address: a, slot: '0x3', blockNumber: block.number }), word(3n));
      assert.equal(await pub.getStorageAt({ address: a, slot: '0x3', blockNumber: empty.number }), word(0n));
      assert.equal(await abciBalance(node, a), 777n);
      // the next CometBFT header carries that state root as its app hash
      await test.mine({ blocks: 1 });
      const next = (await (await fetch(`${node.cometUrl}/block?height=${Number(block.number) + 1}`)).json()) as any;
      assert.equal('0x' + next.result.block.header.app_hash.toLowerCase(), block.stateRoot);
    } finally {
      await test.setAutomine(true);
    }
  });

  it('the pool checks see the cheats: a tx after setNonce uses it, an old nonce and a zeroed balance are refused', async () => {
    const key = devKeys()[6] as Hex;
    const from = devAddress(6) as Hex;
    await test.setNonce({ address: from, nonce: 40 });
    const wallet = createWalletClient({ chain, account: privateKeyToAccount(key), transport: http(node.url) });
    await assert.rejects(wallet.sendTransaction({ to: devAddress(7) as Hex, value: 1n, nonce: 0 }), /nonce too low/i);
    const hash = await wallet.sendTransaction({ to: devAddress(7) as Hex, value: 1n });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    assert.equal((await pub.getTransaction({ hash })).nonce, 40);
    assert.equal(await pub.getTransactionCount({ address: from }), 41);
    // a replay of the block starts from the cheats it applied: the trace of the nonce-40 tx succeeds
    const trace = await call<any>(node.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }]);
    assert.equal(trace.from, from.toLowerCase());
    assert.equal(trace.value, '0x1');
    assert.equal(trace.error, undefined);

    const poor = devAddress(8) as Hex;
    await test.setBalance({ address: poor, value: 0n });
    const broke = createWalletClient({ chain, account: privateKeyToAccount(devKeys()[8] as Hex), transport: http(node.url) });
    await assert.rejects(broke.sendTransaction({ to: from, value: 1n }), /insufficient funds/i);
    await test.setBalance({ address: poor, value: DEV_BALANCE });
  });

  it('hardhat mode: the hardhat_ twins set the same fields and answer true', async () => {
    const a = hexAddr(0xb1);
    await hardhat.setBalance({ address: a, value: 5n });
    await hardhat.setCode({ address: a, bytecode: '0x6001' });
    await hardhat.setStorageAt({ address: a, index: 2, value: word(0x22n) });
    await hardhat.setNonce({ address: a, nonce: 3 });
    assert.equal(await pub.getBalance({ address: a }), 5n);
    assert.equal(await pub.getCode({ address: a }), '0x6001');
    assert.equal(await pub.getStorageAt({ address: a, slot: '0x2' }), word(0x22n));
    assert.equal(await pub.getTransactionCount({ address: a }), 3);
    for (const [m, p] of [
      ['hardhat_setBalance', [a, '0x6']],
      ['hardhat_setCode', [a, '0x']],
      ['hardhat_setNonce', [a, '0x4']],
      ['hardhat_setStorageAt', [a, '0x2', word(0n)]],
    ] as const) {
      assert.equal(await call(node.url, m, [...p]), true, m);
    }
    assert.equal(await pub.getBalance({ address: a }), 6n);
    assert.equal(await pub.getCode({ address: a }), undefined);
    assert.equal(await pub.getTransactionCount({ address: a }), 4);
    assert.equal(await pub.getStorageAt({ address: a, slot: '0x2' }), word(0n));
  });

  it('cast rpc anvil_setBalance / anvil_setStorageAt', async () => {
    const a = hexAddr(0xc1);
    const cast = async (...args: string[]) => (await promisify(execFile)(CAST, [...args, '--rpc-url', node.url])).stdout.trim();
    assert.equal(await cast('rpc', 'anvil_setBalance', a, '0xde0b6b3a7640000'), 'null');
    assert.equal(await pub.getBalance({ address: a }), 10n ** 18n);
    assert.equal(await cast('rpc', 'anvil_setStorageAt', a, '0x1', word(9n)), 'true');
    assert.equal(await cast('storage', a, '1'), word(9n));
  });

  it('bad inputs are refused and change nothing', async () => {
    const a = hexAddr(0xd1);
    await test.setBalance({ address: a, value: 11n });
    await test.setStorageAt({ address: a, index: 1, value: word(1n) });
    await test.setNonce({ address: a, nonce: 2 });
    // each refusal with its exact -32602 text (docs/dev-mode.md: bad arguments are invalid params);
    // the address text is geth's hexutil decoder's (common.Address UnmarshalJSON)
    const bad: [string, unknown[], string][] = [
      ['anvil_setStorageAt', [a, '0x1', '0x02'], 'invalid argument 2: storage value must be exactly 32 bytes long (0x and 64 hex digits), got 1 bytes'],
      ['hardhat_setStorageAt', [a, '0x1', '0x' + '00'.repeat(31)], 'invalid argument 2: storage value must be exactly 32 bytes long (0x and 64 hex digits), got 31 bytes'],
      ['anvil_setStorageAt', [a, '0x' + '1'.repeat(65), word(2n)], `invalid argument 1: slot must be a number or a hex string of at most 32 bytes, got "0x${'1'.repeat(65)}"`],
      ['anvil_setBalance', [a.slice(0, 40), '0x1'], 'invalid argument 0: hex string has length 38, want 40 for common.Address'],
      ['anvil_setBalance', [a, '0x1' + '0'.repeat(64)], `invalid argument 1: balance must be a number or a hex string of at most 32 bytes, got "0x1${'0'.repeat(64)}"`],
      ['anvil_setBalance', [a, -1], 'invalid argument 1: balance must be a non-negative integer, got -1'],
      ['anvil_setNonce', [a, '0x10000000000000000'], 'invalid argument 1: nonce 18446744073709551616 is too large (at most 18446744073709551615)'],
      ['anvil_setCode', [a, '0x123'], 'invalid argument 1: code must be hex bytes (0x…, an even number of digits)'],
      ['anvil_loadState', ['0x' + Buffer.from('{"accounts":{"0x12":{}}}').toString('hex')], 'state account 0x12: not a 20-byte 0x address'],
      ['anvil_loadState', ['0x' + Buffer.from(`{"accounts":{"${a}":{"nonce":1,"balance":"0xzz","code":"0x","storage":{}}}}`).toString('hex')], `state account ${a}: balance must be a number or a hex string of at most 32 bytes, got "0xzz"`],
    ];
    for (const [m, p, message] of bad) {
      const res = await rpc(node.url, m, p);
      assert.deepEqual(res.error, { code: -32602, message }, `${m} ${JSON.stringify(p).slice(0, 80)} should be refused`);
    }
    // not JSON: refused as invalid params (the text after the colon is the JSON parser's own)
    const notJson = await rpc(node.url, 'anvil_loadState', ['0x1234']);
    assert.equal(notJson.error?.code, -32602);
    assert.match(notJson.error?.message ?? '', /^the state is not JSON: /);
    // a gzip bomb: more JSON than MAX_STATE_BYTES (64 MiB) once unzipped
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"accounts":{}'), Buffer.alloc(65 * 1024 * 1024, 0x20), Buffer.from('}')]));
    const res = await rpc(node.url, 'anvil_loadState', ['0x' + bomb.toString('hex')]);
    assert.deepEqual(res.error, { code: -32000, message: 'the state is larger than 67108864 bytes of JSON (MAX_STATE_BYTES)' }, 'an oversized state is refused');
    assert.equal(await pub.getBalance({ address: a }), 11n);
    assert.equal(await pub.getStorageAt({ address: a, slot: '0x1' }), word(1n));
    assert.equal(await pub.getTransactionCount({ address: a }), 2);
    assert.equal(await pub.getCode({ address: a }), undefined);
  });
});

describe('ferry dev: pending cheats survive a restart', () => {
  it('a cheat set before SIGTERM is still pending after the restart, then mined', async () => {
    let node = await startFerry({ args: ['--dev'] });
    const a = hexAddr(0xe1);
    try {
      await call(node.url, 'anvil_setBalance', [a, '0x2a']);
      await call(node.url, 'anvil_setStorageAt', [a, '0x4', word(4n)]);
      const height = BigInt(await call(node.url, 'eth_blockNumber'));
      assert.equal(await node.stop(), 0);
      node = await startFerry({ home: node.home, args: ['--dev'] });
      assert.equal(BigInt(await call(node.url, 'eth_blockNumber')), height);
      assert.equal(BigInt(await call(node.url, 'eth_getBalance', [a, 'latest'])), 42n);
      assert.equal(await call(node.url, 'eth_getStorageAt', [a, '0x4', 'latest']), word(4n));
      await call(node.url, 'evm_mine');
      const mined = `0x${(height + 1n).toString(16)}`;
      assert.equal(BigInt(await call(node.url, 'eth_getBalance', [a, mined])), 42n);
      // applied once: after another restart nothing is pending and the mined value stays
      assert.equal(await node.stop(), 0);
      node = await startFerry({ home: node.home, args: ['--dev'] });
      assert.equal(BigInt(await call(node.url, 'eth_getBalance', [a, 'latest'])), 42n);
      assert.equal(await call(node.url, 'eth_getStorageAt', [a, '0x4', mined]), word(4n));
    } finally {
      assert.equal(await node.stop(), 0);
    }
  });
});
