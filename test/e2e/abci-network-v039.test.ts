/**
 * The network scenario (abci-network-scenario.ts) on CometBFT v0.39, the line cosmos/evm v0.7 pins, with
 * its default (flood) mempool: blocks, agreement per height, a killed validator catching up, a ferry
 * killed mid-load replayed without divergence.
 */
import { describeNetwork } from './abci-network-scenario.js';

describeNetwork('0.39');
