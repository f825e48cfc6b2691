/**
 * The network scenario (abci-network-scenario.ts) on CometBFT v0.39 with its application-side mempool
 * (`[mempool] type = "app"`): CometBFT hands txs to ferry (CheckTx, InsertTx), gossips what ferry's
 * ReapTxs returns, and proposes blocks ferry builds from its own pool (docs/abci.md "CometBFT versions").
 */
import { describeNetwork } from './abci-network-scenario.js';

describeNetwork('0.39', { transport: 'grpc', mempool: 'app' });
