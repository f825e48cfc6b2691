/**
 * The predeploys' vendored runtime code (src/config/predeploys.ts) against what their authors publish:
 * - keccak(code) is the code hash each entry states (the account's codeHash on Ethereum mainnet);
 * - the published deployment transaction (test/fixtures/predeploy-deployments.json: the raw signed tx of
 *   the deterministic-deployment-proxy and multicall3 READMEs, the fields EIP-2935 lists) recovers to the
 *   signer they name, its CREATE address (sender, nonce 0) is the predeploy's address, and its initcode,
 *   run in the EVM, deploys exactly the vendored runtime code.
 * So a changed byte in the code, a wrong hash or a wrong address each fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { createLegacyTx, createTxFromRLP, type LegacyTx } from '@ethereumjs/tx';
import { createContractAddress } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { devGenesis } from '../../src/config/genesis.js';
import { CREATE2_DEPLOYER, HISTORY_STORAGE, MULTICALL3, PREDEPLOYS, type Predeploy } from '../../src/config/predeploys.js';
import { REPO_ROOT } from '../helpers/paths.js';

interface Deployment {
  source: string;
  signer: string;
  raw?: string;
  fields?: Record<string, string | null>;
}

const fixtures = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'predeploy-deployments.json'), 'utf8')) as Record<string, Deployment>;
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));
const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');
// the pre-signed transactions carry no chain id (pre-EIP-155), so any chain's rules decode them; Cancun has PUSH0
const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun });

function deploymentTx(d: Deployment): LegacyTx {
  if (d.raw !== undefined) return createTxFromRLP(bytes(d.raw), { common }) as LegacyTx;
  const f = d.fields!;
  return createLegacyTx(
    {
      nonce: BigInt(f.nonce!),
      gasPrice: BigInt(f.gasPrice!),
      gasLimit: BigInt(f.gas!),
      value: BigInt(f.value!),
      data: bytes(f.input!),
      v: BigInt(f.v!),
      r: BigInt(f.r!),
      s: BigInt(f.s!),
    },
    { common },
  );
}

/** The runtime code the tx's initcode deploys, run from its own sender (a fresh account, nonce 0). */
async function deployedCode(tx: LegacyTx): Promise<{ address: string; code: Uint8Array }> {
  const evm = await createEVM({ common });
  const res = await evm.runCall({ caller: tx.getSenderAddress(), data: tx.data, gasLimit: tx.gasLimit, value: 0n });
  assert.equal(res.execResult.exceptionError, undefined, 'the initcode runs without error');
  const created = res.createdAddress!;
  return { address: created.toString(), code: await evm.stateManager.getCode(created) };
}

function check(p: Predeploy): void {
  it(`${p.name}: code hash, published deployment, address`, async () => {
    assert.equal(hex(keccak_256(bytes(p.code))), p.codeHash, 'keccak(code) is the stated code hash');
    const d = fixtures[p.address];
    assert.ok(d, `a published deployment for ${p.address}`);
    const tx = deploymentTx(d);
    assert.equal(tx.to, undefined, 'a contract creation');
    assert.equal(tx.nonce, 0n);
    assert.equal(tx.getSenderAddress().toString(), d.signer.toLowerCase(), 'signed by the published signer');
    if (d.fields?.hash) assert.equal(hex(tx.hash()), d.fields.hash, 'the published tx hash');
    assert.equal(createContractAddress(tx.getSenderAddress(), 0n).toString(), p.address.toLowerCase(), 'CREATE(signer, 0)');
    const { address, code } = await deployedCode(tx);
    assert.equal(address, p.address.toLowerCase());
    assert.equal(hex(code), '0x' + p.code, 'the vendored code is what the deployment creates');
  });
}

describe('predeploys (src/config/predeploys.ts)', () => {
  for (const p of PREDEPLOYS) check(p);

  it('the three of issue 21, once each, in address order, with EIP-55 addresses', () => {
    assert.deepEqual(PREDEPLOYS, [HISTORY_STORAGE, CREATE2_DEPLOYER, MULTICALL3]);
    const keys = PREDEPLOYS.map((p) => p.address.toLowerCase());
    assert.deepEqual([...keys].sort(), keys);
    assert.equal(CREATE2_DEPLOYER.address, '0x4e59b44847b379578588920cA78FbF26c0B4956C');
    assert.equal(MULTICALL3.address, '0xcA11bde05977b3631167028862bE2a173976CA11');
    assert.equal(HISTORY_STORAGE.address, '0x0000F90827F1C53a10cb7A02335B175320002935');
    for (const p of PREDEPLOYS) assert.ok(p.source.startsWith('https://') && p.licence.length > 0, p.name);
  });

  it('a new dev genesis holds each one: code, nonce, no balance, no storage', () => {
    const g = devGenesis({ validatorPubKey: new Uint8Array(32) });
    for (const p of PREDEPLOYS) {
      const a = g.evm.alloc.get(p.address.toLowerCase());
      assert.ok(a, p.name);
      assert.equal(hex(a.code ?? new Uint8Array()), '0x' + p.code);
      assert.equal(a.nonce, p.nonce);
      assert.equal(a.balance, 0n);
      assert.equal(a.storage, undefined);
    }
  });
});
