/**
 * web3.js 4 against the real ferry process: `web3.eth.personal` creates, imports, unlocks, signs,
 * recovers, sends and locks; `web3.eth` signs and sends through the unlocked node account. Every
 * request carries a fresh JWT (personal is private).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { Web3, HttpProvider } from 'web3';
import { makeJwt, readJwtSecret } from '../../src/server/auth.js';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { waitForReceipt } from '../helpers/rpc.js';

const ARGS = ['--json-rpc.api', 'eth,net,web3,personal', '--consensus.timeout_commit', '200ms'];
const MESSAGE = '0x' + Buffer.from('hello from web3.js').toString('hex');

let node: FerryNode;

/** A Web3 whose provider sends a fresh bearer token (tokens are valid for ±60 s around their iat). */
function web3(): Web3 {
  const token = makeJwt(readJwtSecret(join(node.home, 'config', 'jwt.hex')));
  return new Web3(new HttpProvider(node.url, { providerOptions: { headers: { Authorization: `Bearer ${token}` } } }));
}

before(async () => {
  node = await startFerry({ args: ARGS });
});

after(async () => {
  assert.equal(await node.stop(), 0);
});

describe('web3.js web3.eth.personal', () => {
  const dev = devAddress(5);
  /** an account made by the node, for the tests to send to and from */
  let fresh: string;

  before(async () => {
    assert.equal((await web3().eth.personal.importRawKey(devKeys()[5]!.slice(2), 'dev pw')).toLowerCase(), dev.toLowerCase());
    fresh = await web3().eth.personal.newAccount('web3 pw');
  });

  it('newAccount creates an account that getAccounts lists', async () => {
    const made = await web3().eth.personal.newAccount('another pw');
    assert.match(made, /^0x[0-9a-fA-F]{40}$/);
    assert.notEqual(made.toLowerCase(), fresh.toLowerCase());
    const accounts = await web3().eth.personal.getAccounts();
    assert.ok(accounts.includes(made), `${made} in ${accounts}`);
  });

  it('importRawKey (no 0x) and unlockAccount', async () => {
    const key = Wallet.createRandom();
    const imported = await web3().eth.personal.importRawKey(key.privateKey.slice(2), 'key pw');
    assert.equal(imported.toLowerCase(), key.address.toLowerCase());
    await assert.rejects(web3().eth.personal.unlockAccount(imported, 'not it', 60), /could not decrypt key with given password/);
    assert.equal(await web3().eth.personal.unlockAccount(imported, 'key pw', 600), true);
    // unlocked: the node signs for it without a passphrase
    const sig = (await web3().eth.sign(MESSAGE, imported)) as string;
    assert.equal(web3().eth.accounts.recover(MESSAGE, sig).toLowerCase(), key.address.toLowerCase());
  });

  it('sign (with the passphrase) and ecRecover round-trip; eth.sign of the unlocked account agrees', async () => {
    const sig = await web3().eth.personal.sign(MESSAGE, dev, 'dev pw');
    assert.equal((await web3().eth.personal.ecRecover(MESSAGE, sig)).toLowerCase(), dev.toLowerCase());
    assert.equal(web3().eth.accounts.recover(MESSAGE, sig).toLowerCase(), dev.toLowerCase());
    assert.equal(await web3().eth.personal.unlockAccount(dev, 'dev pw', 600), true);
    assert.equal(await web3().eth.sign(MESSAGE, dev), sig);
  });

  it('sendTransaction with the passphrase moves value to the new account', async () => {
    const value = 10n ** 17n;
    const before = await web3().eth.getBalance(fresh);
    const hash = await web3().eth.personal.sendTransaction({ from: dev, to: fresh, value, gas: 21000 }, 'dev pw');
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal(await web3().eth.getBalance(fresh), before + value);
  });

  it('eth.sendTransaction from the unlocked node account (eth_sendTransaction)', async () => {
    assert.equal(await web3().eth.personal.unlockAccount(dev, 'dev pw', 600), true);
    const before = await web3().eth.getBalance(fresh);
    const receipt = await web3().eth.sendTransaction({ from: dev, to: fresh, value: 5n });
    assert.equal(receipt.status, 1n);
    assert.equal(await web3().eth.getBalance(fresh), before + 5n);
  });

  it('the new account, funded, sends with its passphrase; lockAccount locks', async () => {
    const funding = await web3().eth.personal.sendTransaction({ from: dev, to: fresh, value: 10n ** 16n, gas: 21000 }, 'dev pw');
    assert.equal((await waitForReceipt(node.url, funding)).status, '0x1');
    const hash = await web3().eth.personal.sendTransaction({ from: fresh, to: dev, value: 1n, gas: 21000 }, 'web3 pw');
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal(await web3().eth.personal.unlockAccount(dev, 'dev pw', 600), true);
    assert.equal(await web3().eth.personal.lockAccount(dev), true);
    await assert.rejects(web3().eth.sign(MESSAGE, dev), /authentication needed: password or unlock/);
  });
});
