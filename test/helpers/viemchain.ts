/** viem's chain object for a ferry test node (chain id 9000; the URL comes from each client's transport). */
import { EVM_CHAIN_ID } from './node.js';

export const ferryChain = {
  id: EVM_CHAIN_ID,
  name: 'ferry',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
} as const;
