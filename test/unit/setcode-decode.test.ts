/**
 * EIP-7702 set-code envelopes (type 4) in src/evm/tx.ts: decoded only where the rules include EIP-7702
 * (geth: "transaction type not supported" before Prague), each authorization's signer recovered as
 * go-ethereum core/types/tx_setcode.go Authority does (invalid signature values recover nothing), and
 * the keystore's signer (src/keystore/txsign.ts) writing the same envelope ethers' decoder reads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Transaction, Wallet } from 'ethers';
import { makeCommon, ecdsaSign } from '../../src/evm/common.js';
import { authorityOf, decodeTx } from '../../src/evm/tx.js';
import { isTxRejected } from '../../src/chain/checkcodes.js';
import { signTransaction } from '../../src/keystore/txsign.js';
import { devKeys } from '../helpers/accounts.js';

const unhex = (h: string) => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const GWEI = 10n ** 9n;
const CHAIN = 9000n;
const sponsor = new Wallet(devKeys()[0]!);
const authority = new Wallet(devKeys()[3]!);
const target = '0x5fbdb2315678afecb367f032d93f642f64180aa3';

async function setCodeRaw(): Promise<Uint8Array> {
  const auth = authority.authorizeSync({ address: target, nonce: 4, chainId: CHAIN });
  const fields = {
    type: 4 as const,
    chainId: CHAIN,
    nonce: 0n,
    gasLimit: 100_000n,
    to: unhex('0x000000000000000000000000000000000000dead'),
    value: 0n,
    data: new Uint8Array(),
    maxFeePerGas: 10n * GWEI,
    maxPriorityFeePerGas: GWEI,
    authorizationList: [{ chainId: CHAIN, address: unhex(target), nonce: 4n, yParity: BigInt(auth.signature.yParity), r: BigInt(auth.signature.r), s: BigInt(auth.signature.s) }],
  };
  const key = unhex(sponsor.privateKey);
  return (await signTransaction(fields, async (h) => ecdsaSign(h, key))).raw;
}

describe('set-code (type 4) envelopes', () => {
  it('decode under Prague rules: type 4, fees, the authorization and its recovered authority', async () => {
    const raw = await setCodeRaw();
    const { evm } = decodeTx(raw, makeCommon(CHAIN, 'prague'));
    assert.equal(evm.type, 4);
    assert.equal(evm.maxFeePerGas, 10n * GWEI);
    assert.equal(evm.gasPrice, undefined);
    assert.equal(Buffer.from(evm.from).toString('hex'), sponsor.address.slice(2).toLowerCase());
    const [a] = evm.authorizationList!;
    assert.equal(a!.nonce, 4n);
    assert.equal(Buffer.from(a!.authority!).toString('hex'), authority.address.slice(2).toLowerCase());
    // ethers reads the keystore's envelope the same way
    const parsed = Transaction.from('0x' + Buffer.from(raw).toString('hex'));
    assert.equal(parsed.type, 4);
    assert.equal(parsed.authorizationList?.[0]?.address.toLowerCase(), target);
  });

  it("are refused under Cancun rules with geth's text", async () => {
    const raw = await setCodeRaw();
    assert.throws(
      () => decodeTx(raw, makeCommon(CHAIN, 'cancun')),
      (e: unknown) => isTxRejected(e) && e.message === 'transaction type not supported',
    );
  });

  it('an authorization whose signature values are invalid recovers no authority (the VM skips it)', async () => {
    const raw = await setCodeRaw();
    const [a] = decodeTx(raw, makeCommon(CHAIN, 'prague')).evm.authorizationList!;
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    assert.equal(authorityOf({ ...a!, s: N - a!.s }), undefined, 'high s');
    assert.equal(authorityOf({ ...a!, yParity: 2n }), undefined, 'y parity beyond 1');
    assert.equal(authorityOf({ ...a!, r: 0n }), undefined, 'r = 0');
    assert.notEqual(Buffer.from(authorityOf({ ...a!, nonce: 5n }) ?? []).toString('hex'), authority.address.slice(2).toLowerCase());
  });
});
