/**
 * Node-held accounts against the real ferry process: ethers' JsonRpcSigner through an unlocked
 * account; every transition of the account table (docs/accounts-and-auth.md) over RPC (including expiry and lock on
 * restart); eth_sendTransaction's defaults; key files shared with ethers through `ferry keys`;
 * miner_setEtherbase and miner_setGasPrice taking effect (and surviving a restart).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  FetchRequest,
  JsonRpcProvider,
  Network,
  Transaction,
  Wallet,
  encryptKeystoreJson,
  hashMessage,
  parseEther,
  recoverAddress,
  verifyMessage,
  verifyTypedData,
} from 'ethers';
import { makeJwt, readJwtSecret } from '../../src/server/auth.js';
import { devAddress, devKeys } from '../helpers/accounts.js';
import { EVM_CHAIN_ID, startFerry, type FerryNode } from '../helpers/node.js';
import { FERRY_BIN } from '../helpers/paths.js';
import { call, rpc, waitFor, waitForReceipt, type RpcResponse } from '../helpers/rpc.js';

const run = promisify(execFile);
const ARGS = ['--json-rpc.api', 'eth,net,web3,personal,miner,txpool', '--consensus.timeout_commit', '200ms'];
const LOCKED = 'authentication needed: password or unlock';
const BAD_PASSWORD = 'could not decrypt key with given password';
const GWEI = 10n ** 9n;
/** init code whose deployed runtime code is the single byte 0x01 */
const INIT_CODE = '0x60016000526001601ff3';
/** INIT_CODE after SSTORE(i, 1) for slots 0..4: a creation needing more than 90,000 gas */
const STORING_INIT_CODE = '0x' + [0, 1, 2, 3, 4].map((i) => `600160${i.toString(16).padStart(2, '0')}55`).join('') + INIT_CODE.slice(2);
/** init code that reverts with the 4 bytes 0xdeadbeef */
const REVERTING_INIT_CODE = '0x63deadbeef6000526004601cfd';

let node: FerryNode;

function token(): string {
  return makeJwt(readJwtSecret(join(node.home, 'config', 'jwt.hex')));
}

/** A JSON-RPC call with a fresh bearer token (personal_*, miner_*). */
async function authed<T = any>(method: string, params: unknown[] = []): Promise<RpcResponse<T>> {
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  return (await res.json()) as RpcResponse<T>;
}

async function priv<T = any>(method: string, params: unknown[] = []): Promise<T> {
  const r = await authed<T>(method, params);
  if (r.error) throw new Error(`${method} failed: ${r.error.code} ${r.error.message}`);
  return r.result as T;
}

/** The error message of a call expected to fail (authenticated). */
async function privError(method: string, params: unknown[]): Promise<string> {
  const r = await authed(method, params);
  assert.ok(r.error, `${method} should fail, got ${JSON.stringify(r.result)}`);
  return r.error.message;
}

async function publicError(method: string, params: unknown[]): Promise<string> {
  const r = await rpc(node.url, method, params);
  assert.ok(r.error, `${method} should fail, got ${JSON.stringify(r.result)}`);
  return r.error.message;
}

/** ethers provider that sends a fresh token with every request */
function provider(): JsonRpcProvider {
  const req = new FetchRequest(node.url);
  req.preflightFunc = async (r) => {
    r.setHeader('Authorization', `Bearer ${token()}`);
    return r;
  };
  return new JsonRpcProvider(req, Network.from(EVM_CHAIN_ID), { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 });
}

const balance = async (a: string): Promise<bigint> => BigInt(await call<string>(node.url, 'eth_getBalance', [a, 'latest']));
const ferry = (...args: string[]) => run(process.execPath, [FERRY_BIN, ...args, '--home', node.home], { timeout: 60_000 });

before(async () => {
  node = await startFerry({ args: ARGS });
});

after(async () => {
  assert.equal(await node.stop(), 0);
});

describe('ethers JsonRpcSigner through an unlocked ferry account', () => {
  let addr: string;
  let p: JsonRpcProvider;

  before(async () => {
    addr = await priv<string>('personal_importRawKey', [devKeys()[1], 'signer pw']);
    assert.equal(addr, devAddress(1).toLowerCase());
    p = provider();
  });

  after(() => p.destroy());

  it('getSigner finds the account in eth_accounts; unlock, send a transaction, sign a message', async () => {
    const signer = await p.getSigner(addr);
    assert.equal(await signer.unlock('signer pw'), true);
    const to = Wallet.createRandom().address;
    const tx = await signer.sendTransaction({ to, value: parseEther('1.5') });
    const receipt = await tx.wait();
    assert.equal(receipt!.status, 1);
    assert.equal(receipt!.from.toLowerCase(), addr);
    assert.equal(await balance(to), parseEther('1.5'));

    const sig = await signer.signMessage('hello ferry');
    assert.equal(verifyMessage('hello ferry', sig).toLowerCase(), addr);
  });

  it('signTypedData (eth_signTypedData_v4) verifies with ethers', async () => {
    const signer = await p.getSigner(addr);
    const domain = { name: 'Ferry', version: '1', chainId: EVM_CHAIN_ID, verifyingContract: '0x000000000000000000000000000000000000dEaD' };
    const types = { Order: [{ name: 'owner', type: 'address' }, { name: 'amount', type: 'uint256' }, { name: 'memo', type: 'string' }] };
    const value = { owner: addr, amount: 123n, memo: 'ferry' };
    const sig = await signer.signTypedData(domain, types, value);
    assert.equal(verifyTypedData(domain, types, value, sig).toLowerCase(), addr);
  });

  it('signTransaction (eth_signTransaction) returns a raw transaction the node then accepts', async () => {
    const signer = await p.getSigner(addr);
    const to = Wallet.createRandom().address;
    const raw = await signer.signTransaction({ to, value: 7n });
    const tx = Transaction.from(raw);
    assert.equal(tx.from!.toLowerCase(), addr);
    assert.equal(tx.chainId, BigInt(EVM_CHAIN_ID));
    const hash = await call<string>(node.url, 'eth_sendRawTransaction', [raw]);
    assert.equal(hash, tx.hash);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal(await balance(to), 7n);
  });
});

describe('eth_sendTransaction defaults', () => {
  let from: string;

  before(async () => {
    from = await priv<string>('personal_importRawKey', [devKeys()[2].slice(2), 'pw2']);
    assert.equal(await priv('personal_unlockAccount', [from, 'pw2', 0]), true);
  });

  it('creates a contract without `to` or `gas`: the gas is eth_estimateGas of the same request', async () => {
    const estimate = await call<string>(node.url, 'eth_estimateGas', [{ from, data: STORING_INIT_CODE }]);
    assert.ok(BigInt(estimate) > 90_000n, estimate);
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from, data: STORING_INIT_CODE }]);
    const receipt = await waitForReceipt(node.url, hash);
    assert.equal(receipt.status, '0x1');
    assert.equal(await call(node.url, 'eth_getCode', [receipt.contractAddress, 'latest']), '0x01');
    assert.equal(BigInt(await call(node.url, 'eth_getStorageAt', [receipt.contractAddress, '0x4', 'latest'])), 1n);
    const tx = await call(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(tx.gas, estimate);
    assert.equal(tx.to, null);
    assert.equal(tx.type, '0x2');
  });

  it('personal_sendTransaction without `gas` estimates it too', async () => {
    const estimate = await call<string>(node.url, 'eth_estimateGas', [{ from, data: STORING_INIT_CODE }]);
    const hash = await priv<string>('personal_sendTransaction', [{ from, data: STORING_INIT_CODE }, 'pw2']);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal((await call(node.url, 'eth_getTransactionByHash', [hash])).gas, estimate);
  });

  it('an estimate that reverts answers eth_estimateGas\'s error (code 3, the revert data) and sends nothing', async () => {
    const nonce = await call<string>(node.url, 'eth_getTransactionCount', [from, 'pending']);
    const estimated = await rpc(node.url, 'eth_estimateGas', [{ from, data: REVERTING_INIT_CODE }]);
    const sent = await rpc(node.url, 'eth_sendTransaction', [{ from, data: REVERTING_INIT_CODE }]);
    assert.deepEqual(sent.error, { code: 3, message: 'execution reverted', data: '0xdeadbeef' });
    assert.deepEqual(sent.error, estimated.error);
    assert.equal(await call(node.url, 'eth_getTransactionCount', [from, 'pending']), nonce);
  });

  it('accepts `gasLimit` as an alias of `gas`, and refuses the two disagreeing', async () => {
    const to = Wallet.createRandom().address;
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from, to, value: '0x1', gasLimit: '0x5208' }]);
    await waitForReceipt(node.url, hash);
    assert.equal((await call(node.url, 'eth_getTransactionByHash', [hash])).gas, '0x5208');
    const r = await rpc(node.url, 'eth_sendTransaction', [{ from, to, gas: '0x5208', gasLimit: '0x5209' }]);
    assert.equal(r.error?.code, -32602);
    assert.match(r.error!.message, /both "gas" and "gasLimit"/);
  });

  it('a legacy gasPrice makes a type-0 transaction; contract creation needs data', async () => {
    const to = Wallet.createRandom().address;
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from, to, gasPrice: '0x' + (2n * GWEI).toString(16) }]);
    await waitForReceipt(node.url, hash);
    const tx = await call(node.url, 'eth_getTransactionByHash', [hash]);
    assert.equal(tx.type, '0x0');
    assert.equal(tx.gasPrice, '0x77359400');
    assert.equal(await publicError('eth_sendTransaction', [{ from }]), 'contract creation without any data provided');
  });

  it('`nonce` replaces an own pending transaction (queued after a gap), with the price bump', async () => {
    const pending = BigInt(await call<string>(node.url, 'eth_getTransactionCount', [from, 'pending']));
    const nonce = '0x' + (pending + 3n).toString(16); // a gap: stays queued, never mined
    const to = Wallet.createRandom().address;
    const first = await call<string>(node.url, 'eth_sendTransaction', [{ from, to, nonce, maxPriorityFeePerGas: '0x3b9aca00' }]);
    assert.match(
      await publicError('eth_sendTransaction', [{ from, to, nonce, maxPriorityFeePerGas: '0x3b9aca00', value: '0x2' }]),
      /replacement transaction underpriced/,
    );
    const second = await call<string>(node.url, 'eth_sendTransaction', [{ from, to, nonce, maxPriorityFeePerGas: '0x77359400' }]);
    assert.notEqual(second, first);
    const content = await call(node.url, 'txpool_contentFrom', [from]);
    assert.deepEqual(Object.keys(content.pending), []);
    assert.equal(content.queued[String(pending + 3n)].hash, second);
    assert.equal(await call(node.url, 'eth_getTransactionByHash', [first]), null);
  });

  it('concurrent sends from one account get consecutive nonces', async () => {
    const to = Wallet.createRandom().address;
    const hashes = await Promise.all([1, 2, 3, 4].map((v) => call<string>(node.url, 'eth_sendTransaction', [{ from, to, value: '0x' + v.toString(16) }])));
    for (const h of hashes) assert.equal((await waitForReceipt(node.url, h)).status, '0x1');
    assert.equal(await balance(to), 10n);
  });
});

describe('the account table of docs/accounts-and-auth.md over RPC', () => {
  const message = '0x' + Buffer.from('state machine').toString('hex');
  let acct: string;
  let funded: string;

  before(async () => {
    acct = await priv<string>('personal_newAccount', ['pa55']);
    funded = await priv<string>('personal_importRawKey', [devKeys()[3], 'funded pw']);
  });

  it('a new account is listed and locked', async () => {
    const acct = await priv<string>('personal_newAccount', ['new pw']);
    assert.ok((await priv<string[]>('personal_listAccounts')).includes(acct));
    assert.ok((await call<string[]>(node.url, 'eth_accounts')).includes(acct));
    const wallets = await priv<{ url: string; status: string; accounts: { address: string; url: string }[] }[]>('personal_listWallets');
    const w = wallets.find((x) => x.accounts[0]!.address === acct)!;
    assert.equal(w.status, 'Locked');
    assert.match(w.url, /^keystore:\/\/\/.*\/keystore\/UTC--.*--[0-9a-f]{40}$/);
    assert.equal(await publicError('eth_sign', [acct, message]), LOCKED);
  });

  it('locked → unlock with a wrong passphrase → still locked', async () => {
    assert.equal(await priv('personal_lockAccount', [acct]), true);
    assert.equal(await privError('personal_unlockAccount', [acct, 'wrong', 300]), BAD_PASSWORD);
    assert.equal(await publicError('eth_sign', [acct, message]), LOCKED);
  });

  it('locked → unlock → unlocked (eth_sign works) → lock → locked', async () => {
    assert.equal(await priv('personal_lockAccount', [acct]), true);
    assert.equal(await publicError('eth_sign', [acct, message]), LOCKED);
    assert.equal(await priv('personal_unlockAccount', [acct, 'pa55', 300]), true);
    const wallets = await priv<{ status: string; accounts: { address: string }[] }[]>('personal_listWallets');
    assert.equal(wallets.find((x) => x.accounts[0]!.address === acct)!.status, 'Unlocked');
    const sig = await call<string>(node.url, 'eth_sign', [acct, message]);
    assert.equal(recoverAddress(hashMessage(Buffer.from('state machine')), sig).toLowerCase(), acct);
    assert.equal(await priv('personal_lockAccount', [acct]), true);
    assert.equal(await publicError('eth_sign', [acct, message]), LOCKED);
    assert.equal(await publicError('eth_sendTransaction', [{ from: acct, to: acct }]), LOCKED);
  });

  it('unlocked → the duration elapses → locked', async () => {
    assert.equal(await priv('personal_unlockAccount', [acct, 'pa55', 1]), true);
    await call(node.url, 'eth_sign', [acct, message]);
    // the 1 s unlock runs out by itself: signing starts failing with the locked error
    await waitFor('the unlock to expire', async () => {
      const r = await rpc(node.url, 'eth_sign', [acct, message]);
      return r.error === undefined ? undefined : r.error;
    }, 10_000, 50);
    assert.equal(await publicError('eth_sign', [acct, message]), LOCKED);
  });

  it('personal_sendTransaction with the passphrase sends from a locked account and leaves it locked', async () => {
    assert.equal(await priv('personal_lockAccount', [funded]), true);
    const to = Wallet.createRandom().address;
    const nonceBefore = await call<string>(node.url, 'eth_getTransactionCount', [funded, 'pending']);
    assert.equal(await privError('personal_sendTransaction', [{ from: funded, to, value: '0x5' }, 'nope']), BAD_PASSWORD);
    assert.equal(await call(node.url, 'eth_getTransactionCount', [funded, 'pending']), nonceBefore, 'nothing was sent');
    const hash = await priv<string>('personal_sendTransaction', [{ from: funded, to, value: '0x5' }, 'funded pw']);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal(await balance(to), 5n);
    assert.equal(await publicError('eth_sign', [funded, message]), LOCKED, 'not unlocked for other calls');
  });

  it('personal_sendTransaction on an unlocked account leaves it unlocked', async () => {
    await priv('personal_unlockAccount', [funded, 'funded pw', 0]);
    const hash = await priv<string>('personal_sendTransaction', [{ from: funded, to: funded, value: '0x0' }, 'funded pw']);
    await waitForReceipt(node.url, hash);
    await call(node.url, 'eth_sign', [funded, message]);
  });

  it('personal_sign (with or without the passphrase) and eth_sign agree; personal_ecRecover round-trips', async () => {
    assert.equal(await priv('personal_unlockAccount', [funded, 'funded pw', 300]), true);
    const withPass = await priv<string>('personal_sign', [message, funded, 'funded pw']);
    const unlockedOnly = await priv<string>('personal_sign', [message, funded]);
    const ethSign = await call<string>(node.url, 'eth_sign', [funded, message]);
    assert.equal(withPass, ethSign);
    assert.equal(unlockedOnly, ethSign);
    assert.equal(await priv('personal_ecRecover', [message, withPass]), funded);
    assert.equal(await privError('personal_sign', [message, funded, 'nope']), BAD_PASSWORD);
    assert.equal(await privError('personal_ecRecover', [message, withPass.slice(0, -2)]), 'signature must be 65 bytes long');
    assert.equal(await privError('personal_ecRecover', [message, withPass.slice(0, -2) + '01']), 'invalid Ethereum signature (V is not 27 or 28)');
  });

  it('errors: an existing key, an unknown account, hardware-wallet methods', async () => {
    assert.equal(await privError('personal_importRawKey', [devKeys()[3], 'again']), 'account already exists');
    assert.equal(await privError('personal_importRawKey', ['0x1234', 'x']), 'invalid private key: expected 32 bytes as hex');
    const stranger = Wallet.createRandom().address;
    assert.equal(await privError('personal_unlockAccount', [stranger, 'x', 1]), 'no key for given address or file');
    assert.equal(await publicError('eth_sign', [stranger, message]), 'unknown account');
    assert.match(await privError('personal_initializeWallet', ['keycard://x']), /^personal_initializeWallet is not supported/);
    assert.match(await privError('personal_unpair', ['keycard://x', '1234']), /^personal_unpair is not supported/);
  });
});

describe('key files shared with ethers (`ferry keys`)', () => {
  it('a JSON file ethers encrypted is imported with `ferry keys import`, listed at once, and unlocks with its passphrase', async () => {
    const wallet = Wallet.createRandom();
    const json = await encryptKeystoreJson({ address: wallet.address, privateKey: wallet.privateKey }, 'from ethers');
    const file = join(node.home, 'ethers-key.json');
    const pwFile = join(node.home, 'ethers-pw.txt');
    writeFileSync(file, json);
    writeFileSync(pwFile, 'from ethers\n');
    const { stdout } = await ferry('keys', 'import', file, '--password-file', pwFile);
    assert.match(stdout, new RegExp(`^Imported ${wallet.address} into .*/keystore/UTC--`));
    const addr = wallet.address.toLowerCase();
    assert.ok((await call<string[]>(node.url, 'eth_accounts')).includes(addr), 'the running node lists it');
    assert.equal(await priv('personal_unlockAccount', [addr, 'from ethers', 60]), true);
    const sig = await call<string>(node.url, 'eth_sign', [addr, '0x01']);
    assert.equal(verifyMessage(new Uint8Array([1]), sig), wallet.address);
    const { stdout: list } = await ferry('keys', 'list');
    assert.match(list, new RegExp(`Account #\\d+: \\{${addr.slice(2)}\\} keystore:///`));
  });

  it('a file ferry wrote (personal_newAccount, `ferry keys new`) opens with ethers Wallet.fromEncryptedJson', async () => {
    const addr = await priv<string>('personal_newAccount', ['ferry made this']);
    const dir = join(node.home, 'keystore');
    const name = readdirSync(dir).find((n) => n.endsWith(addr.slice(2)))!;
    const wallet = await Wallet.fromEncryptedJson(readFileSync(join(dir, name), 'utf8'), 'ferry made this');
    assert.equal(wallet.address.toLowerCase(), addr);

    const pwFile = join(node.home, 'new-pw.txt');
    writeFileSync(pwFile, 'cli pw\n');
    const { stdout } = await ferry('keys', 'new', '--password-file', pwFile);
    const created = /Public address of the key:\s+(0x[0-9a-fA-F]{40})\nPath of the secret key file: (\S+)/.exec(stdout)!;
    assert.ok(created, stdout);
    const cliWallet = await Wallet.fromEncryptedJson(readFileSync(created[2]!, 'utf8'), 'cli pw');
    assert.equal(cliWallet.address, created[1]);
    assert.ok((await call<string[]>(node.url, 'eth_accounts')).includes(created[1]!.toLowerCase()));
  });
});

describe('miner and restarts', () => {
  let sender: string;

  before(async () => {
    sender = await priv<string>('personal_importRawKey', [devKeys()[4], 'pw4']);
  });

  it('miner_setEtherbase: eth_coinbase and the `miner` of new blocks follow; tips are paid to it', async () => {
    const etherbase = '0x00000000000000000000000000000000000fee00';
    assert.equal(await priv('personal_unlockAccount', [sender, 'pw4', 0]), true);
    assert.notEqual(await call(node.url, 'eth_coinbase'), etherbase);
    assert.equal(await priv('miner_setEtherbase', [etherbase]), true);
    assert.equal(await call(node.url, 'eth_coinbase'), etherbase);
    const hash = await call<string>(node.url, 'eth_sendTransaction', [{ from: sender, to: sender, maxPriorityFeePerGas: '0x3b9aca00' }]);
    const receipt = await waitForReceipt(node.url, hash);
    const block = await call(node.url, 'eth_getBlockByNumber', [receipt.blockNumber, false]);
    assert.equal(block.miner, etherbase);
    assert.equal(await balance(etherbase), 21000n * GWEI);
  });

  it('miner_setGasPrice writes minimum-gas-prices into app.toml', async () => {
    assert.equal(await priv('miner_setGasPrice', ['0x12a05f200']), true); // 5 gwei
    assert.match(readFileSync(join(node.home, 'config', 'app.toml'), 'utf8'), /^minimum-gas-prices = "5000000000aferry"$/m);
  });

  it('after a restart: every account is locked, the etherbase is kept, the new minimum gas price applies', async () => {
    const etherbase = '0x00000000000000000000000000000000000fee01';
    assert.equal(await priv('personal_unlockAccount', [sender, 'pw4', 0]), true);
    assert.equal(await priv('miner_setEtherbase', [etherbase]), true);
    assert.equal(await priv('miner_setGasPrice', ['0x12a05f200']), true); // 5 gwei
    assert.equal(await node.stop(), 0);
    node = await startFerry({ home: node.home, args: ARGS });
    assert.equal(await publicError('eth_sign', [sender, '0x01']), LOCKED, 'unlocked without expiry before the restart');
    assert.equal(await call(node.url, 'eth_coinbase'), etherbase);
    const low = await privError('personal_sendTransaction', [{ from: sender, to: sender, maxFeePerGas: '0x3b9aca00', maxPriorityFeePerGas: '0x1' }, 'pw4']);
    assert.equal(low, 'transaction underpriced');
    const hash = await priv<string>('personal_sendTransaction', [{ from: sender, to: sender, maxFeePerGas: '0x165a0bc00', maxPriorityFeePerGas: '0x1' }, 'pw4']);
    const receipt = await waitForReceipt(node.url, hash);
    assert.equal((await call(node.url, 'eth_getBlockByNumber', [receipt.blockNumber, false])).miner, etherbase);
  });

  it('started with --minimum-gas-prices: the flag wins, and miner_setGasPrice says so in the log', async () => {
    assert.equal(await priv('miner_setGasPrice', ['0x12a05f200']), true); // app.toml: 5 gwei
    assert.equal(await node.stop(), 0);
    node = await startFerry({ home: node.home, args: [...ARGS, '--minimum-gas-prices', '0aferry'] });
    const hash = await priv<string>('personal_sendTransaction', [{ from: sender, to: sender, maxFeePerGas: '0x3b9aca00', maxPriorityFeePerGas: '0x1' }, 'pw4']);
    assert.equal((await waitForReceipt(node.url, hash)).status, '0x1');
    assert.equal(await priv('miner_setGasPrice', ['0x1']), true);
    await waitFor('the log line', async () => (/--minimum-gas-prices, which takes precedence/.test(node.logTail(20)) ? true : null), 5_000);
  });
});
