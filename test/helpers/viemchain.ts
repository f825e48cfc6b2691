/** viem's description of a ferry dev chain, for the viem tests. */
import { defineChain, type Chain } from 'viem';
import { EVM_CHAIN_ID } from './node.js';

/** The dev chain (id EVM_CHAIN_ID, native token ETH) served at these RPC URLs (none: the client passes its own transport). */
export function ferryChain(http: string[] = [], webSocket?: string[]): Chain {
  return defineChain({
    id: EVM_CHAIN_ID,
    name: 'ferry dev',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: webSocket === undefined ? { http } : { http, webSocket } },
  });
}
