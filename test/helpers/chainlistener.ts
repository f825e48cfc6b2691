/**
 * A ChainListener (src/node/chainclient.ts) for tests that only send requests to a chain thread:
 * it collects the messages in `seen` and ignores every event; ABCI queries are answered "not ready".
 */
import { ChainClient, type ChainListener } from '../../src/node/chainclient.js';
import type { FromChain } from '../../src/node/protocol.js';

export function quietListener(seen: FromChain[] = []): ChainListener {
  return {
    onMessage: (m) => seen.push(m),
    onCommitted: () => undefined,
    onCheats: () => undefined,
    onRewound: () => undefined,
    onPool: () => undefined,
    onRoundStep: () => undefined,
    query: () => ChainClient.notReady(),
  };
}
