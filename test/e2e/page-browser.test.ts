/**
 * The node page (/explorer) in real headless Chromium (Debian's `chromium`, found on PATH, driven by
 * playwright-core; nothing downloads a browser) against the real ferry process: it loads without
 * console errors, follows new blocks over the WebSocket, shows a tx sent with ethers with both its
 * EVM and native hash (checked against Surface B), decodes an ERC-20 Transfer, shows an account with
 * its history and a contract with its creator (the `ots` namespace), and draws its plots. Screenshots go to the test's temporary directory (printed). Without Chromium the
 * browser tests are skipped (counted as skipped), and fail under CI=true (test/helpers/prereq.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ContractFactory, JsonRpcProvider, type Contract } from 'ethers';
import { chromium, type Browser, type Page } from 'playwright-core';
import { devAddress, devWallet } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { missingPrerequisite, onPath } from '../helpers/prereq.js';
import { call } from '../helpers/rpc.js';
import { compileToken } from '../helpers/solc.js';

/** `chromium` on PATH (Debian's package; .ci/run looks it up the same way and installs it when missing) */
const CHROMIUM = onPath('chromium');
const WAIT_MS = 60_000;
/** false, or why the browser tests are skipped (each counted as skipped; a failure under CI=true) */
const skip = CHROMIUM ? false : missingPrerequisite('the node page browser tests', 'no `chromium` on PATH (apt-get install -y chromium)');

describe('node page in headless Chromium', () => {
  let node: FerryNode;
  let browser: Browser;
  let page: Page;
  let provider: JsonRpcProvider;
  const errors: string[] = [];
  const shots = mkdtempSync(join(tmpdir(), 'ferry-page-'));

  before(async () => {
    if (skip) return;
    node = await startFerry({ args: ['--consensus.timeout_commit', '500ms', '--json-rpc.api', 'eth,net,web3,txpool,ots', '--metrics', '--json-rpc.metrics-address', '127.0.0.1:0'] });
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    process.stderr.write(`page screenshots: ${shots}\n`);
  });

  after(async () => {
    await browser?.close();
    provider?.destroy();
    await node?.stop();
  });

  it('loads, goes live over the WebSocket and shows each new block as it is made', { skip }, async () => {
    await page.goto(`${node.url}/explorer`);
    await page.waitForSelector('#live.on', { timeout: WAIT_MS });
    await page.waitForSelector('#blocks tr[data-block]', { timeout: WAIT_MS });
    const shown = Number(await page.textContent('#head'));
    // a block made after the page loaded arrives by eth_subscribe and gets its row
    await page.waitForSelector(`#blocks tr[data-block="${shown + 1}"]`, { timeout: WAIT_MS });
    const chainHead = BigInt(await call<string>(node.url, 'eth_blockNumber'));
    assert.ok(chainHead >= BigInt(shown + 1));
    await page.screenshot({ path: join(shots, 'home.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('follows a transfer sent with ethers to its page: EVM hash, native hash, receipt', { skip }, async () => {
    const tx = await devWallet(3, provider).sendTransaction({ to: devAddress(4), value: 12345n });
    const receipt = (await tx.wait())!;
    // the tx appears in the live block list, linked to its page
    const row = page.locator(`#blocks a[href="#/tx/${tx.hash}"]`);
    await row.waitFor({ timeout: WAIT_MS });
    await row.click();
    await page.waitForFunction(`/^0x[0-9A-F]{64}/.test(document.getElementById('native-hash')?.textContent ?? '')`, undefined, { timeout: WAIT_MS });
    assert.equal(await page.textContent('#evm-hash'), tx.hash);
    const native = (await page.textContent('#native-hash'))!.slice(0, 66);
    // Surface B knows the tx by that native hash, at the receipt's height
    const res = (await (await fetch(`${node.cometUrl}/tx?hash=${native}`)).json()) as { result: { hash: string; height: string } };
    assert.equal(res.result.hash, native.slice(2));
    assert.equal(BigInt(res.result.height), BigInt(receipt.blockNumber));
    assert.match((await page.textContent('#tx-status'))!, /success/);
    await page.screenshot({ path: join(shots, 'tx.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('decodes an ERC-20 Transfer event and shows an account with balance, nonce and code', { skip }, async () => {
    const compiled = compileToken();
    const owner = devWallet(5, provider);
    const token = (await new ContractFactory(compiled.abi, compiled.bytecode, owner).deploy('Page', 'PG', 1000n)) as Contract;
    await token.waitForDeployment();
    const sent = await token.getFunction('transfer')(devAddress(6), 77n);
    await sent.wait();
    await page.goto(`${node.url}/explorer#/tx/${sent.hash}`);
    await page.waitForSelector('#tx-events', { timeout: WAIT_MS });
    const decoded = (await page.textContent('#tx-events'))!;
    assert.match(decoded, /Transfer\(from: 0x[0-9a-f…]+, to: 0x[0-9a-f…]+, value: 77\)/);
    await page.screenshot({ path: join(shots, 'erc20.png'), fullPage: true });

    const address = await token.getAddress();
    await page.goto(`${node.url}/explorer#/address/${address}`);
    await page.waitForSelector('#address', { timeout: WAIT_MS });
    assert.match((await page.textContent('#address'))!, /bytes: 0x/);
    await page.goto(`${node.url}/explorer#/address/${owner.address}`);
    // the token's view has a #nonce too (a contract's is 1): wait until the owner's view replaced it
    await page.waitForFunction(`document.querySelector('#address dd.mono')?.textContent?.toLowerCase() === '${owner.address.toLowerCase()}'`, undefined, { timeout: WAIT_MS });
    assert.equal(Number(await page.textContent('#nonce')), await provider.getTransactionCount(owner.address));
    assert.deepEqual(errors, []);
  });

  it("links an account to its whole history and a contract to its creator (ots_searchTransactionsBefore, ots_getContractCreator)", { skip }, async () => {
    const owner = devWallet(7, provider);
    const compiled = compileToken();
    const token = (await new ContractFactory(compiled.abi, compiled.bytecode, owner).deploy('Hist', 'HS', 1000n)) as Contract;
    await token.waitForDeployment();
    const deployHash = token.deploymentTransaction()!.hash;
    const sent = await token.getFunction('transfer')(devAddress(8), 5n);
    await sent.wait();
    await page.goto(`${node.url}/explorer#/address/${owner.address}`);
    await page.waitForSelector('#history tr td', { timeout: WAIT_MS });
    const history = await page.$$eval('#history a[href^="#/tx/"]', (as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(history, [`#/tx/${sent.hash}`, `#/tx/${deployHash}`], 'newest first, from the address index');
    // the token never sent anything, yet its history holds both txs (recipient of the call, created by the deploy)
    const address = (await token.getAddress()).toLowerCase();
    await page.goto(`${node.url}/explorer#/address/${address}`);
    await page.waitForSelector('#creator', { timeout: WAIT_MS });
    assert.match((await page.textContent('#creator'))!, new RegExp(owner.address.slice(0, 10), 'i'));
    assert.equal(await page.getAttribute('#creator a[href^="#/tx/"]', 'href'), `#/tx/${deployHash}`);
    assert.equal((await page.$$('#history a[href^="#/tx/"]')).length, 2);
    await page.screenshot({ path: join(shots, 'history.png'), fullPage: true });
    // the deploy's page shows the creation as an internal operation (ots_getInternalOperations)
    await page.goto(`${node.url}/explorer#/tx/${deployHash}`);
    await page.waitForSelector('#tx-internal', { timeout: WAIT_MS });
    assert.match((await page.textContent('#tx-internal'))!, /create/);
    assert.ok(await page.$(`#tx-internal a[href="#/address/${address}"]`), 'the created contract links to its account view');
    assert.deepEqual(errors, []);
  });

  it('draws the block-time, txs, gas and RPC-rate plots', { skip }, async () => {
    await page.goto(`${node.url}/explorer#/`);
    // a plot has drawn once its polyline has two points or more
    const points = (id: string) =>
      page.waitForFunction(`(document.querySelector('#${id} polyline')?.getAttribute('points') ?? '').trim().split(' ').length >= 2`, undefined, { timeout: WAIT_MS });
    await Promise.all(['plot-blocktime', 'plot-txs', 'plot-gas', 'plot-rpc'].map(points));
    await page.screenshot({ path: join(shots, 'plots.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});

describe('node page routes', () => {
  let node: FerryNode;
  before(async () => {
    node = await startFerry({ args: ['--json-rpc.node-page', 'false'] });
  });
  after(async () => {
    await node?.stop();
  });

  it('json-rpc.node-page = false: no page, /health still answers', async () => {
    assert.equal((await fetch(`${node.url}/explorer`)).status, 404);
    const health = await fetch(`${node.url}/health`);
    assert.equal(health.status, 200);
    const body = (await health.json()) as { status: string; height: string; chainThread: boolean };
    assert.equal(body.status, 'ok');
    assert.equal(body.chainThread, true);
    assert.ok(BigInt(body.height) <= BigInt(await call<string>(node.url, 'eth_blockNumber')));
    assert.equal((await fetch(`${node.url}/health`, { method: 'POST' })).status, 405);
  });
});
