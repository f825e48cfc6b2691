/**
 * Impersonation under `ferry start --dev` (docs/dev-mode.md): viem's test client impersonates an
 * address the node has no key for, and eth_sendTransaction as that address (viem's json-rpc
 * account) is executed; both surfaces show the impersonated sender (receipt, eth_getTransactionByHash,
 * Surface B's tx / tx_search and the MsgEthereumTx inside the native tx), and a trace replays it.
 * After stopImpersonatingAccount the send is refused with geth's "unknown account", and the same
 * placeholder-signed bytes are refused by CheckTx. autoImpersonateAccount covers every address;
 * `cast send --unlocked --from <impersonated>` goes through the same path. After a restart without
 * the dev namespaces the committed transaction reads back the same, and placeholder-signed bytes are
 * refused: impersonation never exists outside dev.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createTestClient, createWalletClient, http, serializeTransaction, toHex, type Address, type Hash, type Hex } from 'viem';
import { devAddress } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, VIEM_CHAIN, type FerryNode } from '../helpers/node.js';
import { call, rpc } from '../helpers/rpc.js';

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');

const chain = VIEM_CHAIN;

/** addresses no one holds a key for */
const WHALE = '0x00000000000000000000000000000000000000aa' as Address;
const AUTO = '0x1234567890abcdef1234567890abcdef12345678' as Address;
const CAST_SENDER = '0x00000000000000000000000000000000000000cc' as Address;
const SINK = '0x000000000000000000000000000000000000dead' as Address;
const RESTART = '0x00000000000000000000000000000000000000bb' as Address;

/** An EIP-1559 transfer from `from` with the impersonation placeholder signature (r = 2^160 + from, s = 1). */
function placeholderSigned(from: Address, nonce: number): Hex {
  return serializeTransaction(
    { chainId: EVM_CHAIN_ID, type: 'eip1559', nonce, to: SINK, value: 1n, gas: 21_000n, maxFeePerGas: 10n ** 12n, maxPriorityFeePerGas: 1n },
    { r: toHex((1n << 160n) + BigInt(from), { size: 32 }), s: toHex(1n, { size: 32 }), yParity: 0 },
  );
}

describe('impersonation under ferry start --dev', () => {
  let node: FerryNode;
  let test: ReturnType<typeof createTestClient>;
  let pub: ReturnType<typeof createPublicClient>;
  let wallet: ReturnType<typeof createWalletClient>;

  const fund = async (to: Address, value: bigint) => {
    const hash = await call<Hash>(node.url, 'eth_sendTransaction', [{ from: devAddress(0), to, value: '0x' + value.toString(16) }]);
    assert.equal((await pub.waitForTransactionReceipt({ hash })).status, 'success');
  };

  before(async () => {
    node = await startFerry({ args: ['--dev'] });
    test = createTestClient({ chain, mode: 'anvil', transport: http(node.url) });
    pub = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
    wallet = createWalletClient({ chain, transport: http(node.url) });
    await fund(WHALE, 10n ** 18n);
    await fund(CAST_SENDER, 10n ** 18n);
  });

  after(async () => {
    if (node) assert.equal(await node.stop(), 0);
  });

  it('a keyless address cannot send until impersonated; then its tx is executed with it as sender on both surfaces', async () => {
    const refused = await rpc(node.url, 'eth_sendTransaction', [{ from: WHALE, to: SINK, value: '0x1' }]);
    assert.equal(refused.error?.message, 'unknown account');

    await test.impersonateAccount({ address: WHALE });
    const before = await pub.getBalance({ address: WHALE });
    const sinkBefore = await pub.getBalance({ address: SINK });
    const hash = await wallet.sendTransaction({ account: WHALE, to: SINK, value: 1000n, chain });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.from, WHALE);
    assert.equal(await pub.getBalance({ address: SINK }), sinkBefore + 1000n);
    assert.equal(await pub.getBalance({ address: WHALE }), before - 1000n - receipt.gasUsed * receipt.effectiveGasPrice);
    assert.equal(await pub.getTransactionCount({ address: WHALE }), 1);

    const tx = await pub.getTransaction({ hash });
    assert.equal(tx.from, WHALE);
    // the placeholder signature: s = 1, r = 2^160 + the sender
    assert.equal(BigInt(tx.s), 1n);
    assert.equal(BigInt(tx.r), (1n << 160n) + BigInt(WHALE));
    const raw = await call<Hex>(node.url, 'debug_getRawTransaction', [hash]);

    // Surface B: the native tx in the block, its events naming the impersonated sender
    const found = await (await fetch(`${node.cometUrl}/tx_search?query=${encodeURIComponent(`"ethereum_tx.ethereumTxHash='${hash}'"`)}`)).json() as any;
    assert.equal(found.result.total_count, '1');
    const res = found.result.txs[0];
    assert.equal(res.height, String(receipt.blockNumber));
    assert.equal(res.tx_result.code, 0);
    const attrs = (type: string) => res.tx_result.events.find((e: any) => e.type === type).attributes as { key: string; value: string }[];
    assert.equal(attrs('ethereum_tx').find((a) => a.key === 'sender')!.value, WHALE);
    assert.equal(attrs('message').find((a) => a.key === 'sender')!.value, WHALE);
    const byHash = await (await fetch(`${node.cometUrl}/tx?hash=0x${res.hash}`)).json() as any;
    assert.equal(byHash.result.height, res.height);
    // the MsgEthereumTx carries the sender (field 5) and the placeholder-signed envelope (field 6)
    const native = Buffer.from(byHash.result.tx, 'base64');
    assert.ok(native.includes(Buffer.from(WHALE.slice(2), 'hex')), 'the native tx names the sender');
    assert.ok(native.includes(Buffer.from(raw.slice(2), 'hex')), 'the native tx holds the EVM envelope');

    // a replay (debug_traceTransaction) runs it as the same sender
    const trace = await call<any>(node.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }]);
    assert.equal(trace.from, WHALE);
    assert.equal(BigInt(trace.value), 1000n);
  });

  it('after stopImpersonatingAccount the send and the placeholder-signed bytes are refused', async () => {
    const nonce = await pub.getTransactionCount({ address: WHALE });
    // while impersonated, placeholder-signed bytes are admitted like eth_sendTransaction's
    await test.impersonateAccount({ address: WHALE });
    const hash = await call<Hash>(node.url, 'eth_sendRawTransaction', [placeholderSigned(WHALE, nonce)]);
    assert.equal((await pub.waitForTransactionReceipt({ hash })).from, WHALE);
    assert.equal((await rpc(node.url, 'anvil_stopImpersonatingAccount', [WHALE])).result, null);
    const refused = await rpc(node.url, 'eth_sendTransaction', [{ from: WHALE, to: SINK, value: '0x1' }]);
    assert.equal(refused.error?.message, 'unknown account');
    const raw = await rpc(node.url, 'eth_sendRawTransaction', [placeholderSigned(WHALE, nonce + 1)]);
    assert.match(raw.error?.message ?? 'admitted', /not impersonated/);
    assert.equal(await pub.getTransactionCount({ address: WHALE }), nonce + 1);
  });

  it('autoImpersonateAccount: any keyless address sends until it is turned off', async () => {
    await fund(AUTO, 10n ** 17n);
    await rpc(node.url, 'anvil_autoImpersonateAccount', [true]).then((r) => assert.equal(r.result, null));
    const hash = await wallet.sendTransaction({ account: AUTO, to: SINK, value: 7n, chain });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    assert.equal(receipt.from, AUTO.toLowerCase());
    assert.equal(receipt.status, 'success');
    // Hardhat's name turns it off as well
    await rpc(node.url, 'hardhat_autoImpersonateAccount', [false]).then((r) => assert.equal(r.result, null));
    const refused = await rpc(node.url, 'eth_sendTransaction', [{ from: AUTO, to: SINK, value: '0x1' }]);
    assert.equal(refused.error?.message, 'unknown account');
  });

  it('hardhat_impersonateAccount and cast send --unlocked --from the impersonated address', async () => {
    assert.equal((await rpc(node.url, 'hardhat_impersonateAccount', [CAST_SENDER])).result, null);
    const run = promisify(execFile);
    const out = JSON.parse((await run(CAST, ['send', '--unlocked', '--from', CAST_SENDER, SINK, '--value', '4321', '--json', '--rpc-url', node.url])).stdout);
    assert.equal(out.status, '0x1');
    assert.equal(out.from, CAST_SENDER);
    assert.equal((await rpc(node.url, 'hardhat_stopImpersonatingAccount', [CAST_SENDER])).result, null);
    const refused = await run(CAST, ['send', '--unlocked', '--from', CAST_SENDER, SINK, '--value', '1', '--rpc-url', node.url]).then(
      () => undefined,
      (e: { stderr: string }) => e.stderr,
    );
    assert.match(refused ?? 'sent', /unknown account/);
  });

  it('after a restart without the dev namespaces: the committed tx reads back the same, new placeholder bytes are refused', async () => {
    await fund(RESTART, 10n ** 17n);
    await test.impersonateAccount({ address: RESTART });
    const hash = await wallet.sendTransaction({ account: RESTART, to: SINK, value: 5n, chain });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    const home = node.home;
    assert.equal(await node.stop(), 0);
    node = await startFerry({ home });
    const pub2 = createPublicClient({ chain, transport: http(node.url), cacheTime: 0 });
    const tx = await pub2.getTransaction({ hash });
    assert.equal(tx.from, RESTART);
    const again = await pub2.getTransactionReceipt({ hash });
    assert.equal(again.blockHash, receipt.blockHash);
    assert.equal(again.from, RESTART);
    assert.equal(await pub2.getTransactionCount({ address: RESTART }), 1);
    assert.equal((await rpc(node.url, 'anvil_impersonateAccount', [RESTART])).error?.code, -32601);
    const raw = await rpc(node.url, 'eth_sendRawTransaction', [placeholderSigned(RESTART, 1)]);
    assert.match(raw.error?.message ?? 'admitted', /not impersonated/);
  });
});
