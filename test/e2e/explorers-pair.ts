/**
 * The two nodes the explorer tests compare: Anvil and ferry (with the namespaces `api` names),
 * both given the fixed transactions of debug-fixtures.ts, and a per-scenario test helper.
 */
import { after, before, it } from 'node:test';
import { startFerry, type FerryNode } from '../helpers/node.js';
import { SCENARIOS, runFixture, startAnvil, type AnvilNode, type FixtureRun, type Scenario } from './debug-fixtures.js';

export interface Pair {
  ferry: FerryNode;
  anvil: AnvilNode;
  onFerry: FixtureRun;
  onAnvil: FixtureRun;
  stop(): Promise<void>;
}

export async function startPair(api: string): Promise<Pair> {
  const anvil = await startAnvil();
  const ferry = await startFerry({ args: ['--consensus.timeout_commit', '200ms', '--json-rpc.api', api] });
  const [onAnvil, onFerry] = await Promise.all([runFixture(anvil.url), runFixture(ferry.url)]);
  return { ferry, anvil, onFerry, onAnvil, stop: async () => void (await Promise.all([anvil.stop(), ferry.stop()])) };
}

/** one test per scenario */
export function eachScenario(what: string, fn: (s: Scenario) => Promise<void>): void {
  for (const s of SCENARIOS) it(`${what}: ${s}`, () => fn(s));
}

/** Starts the pair before the enclosing suite's tests and stops it after; fields are set once it runs. */
export function usePair(api: string): Pair {
  const pair = {} as Pair;
  before(async () => {
    Object.assign(pair, await startPair(api));
  });
  after(() => pair.stop?.());
  return pair;
}
