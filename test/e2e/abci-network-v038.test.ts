/** The network scenario (abci-network-scenario.ts) on CometBFT v0.38, the line Evmos-era chains run. */
import { describeNetwork } from './abci-network-scenario.js';

describeNetwork('0.38');
