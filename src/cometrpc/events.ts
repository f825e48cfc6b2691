/**
 * The event bus of Surface B (CometBFT's types/event_bus.go + libs/pubsub): subscriptions by query,
 * per client (remote address) and per query, and the events of each committed block and of each
 * consensus step, published in CometBFT's order:
 *
 *   NewRound, NewRoundStep(Propose), CompleteProposal, NewRoundStep(Prevote), Vote(prevote),
 *   ValidBlock, Polka, Lock, NewRoundStep(Precommit), Vote(precommit), NewRoundStep(Commit),
 *   NewBlock, NewBlockHeader, NewBlockEvents, Tx (one per tx), ValidatorSetUpdates (if any),
 *   NewRoundStep(NewHeight of the next height)
 *
 * Matching uses pubsub semantics (eventquery). Block events are built lazily, once per event, and
 * only when some subscription could want them; their JSON is serialized once and shared by every
 * subscriber. Delivery is the sink's business (a WebSocket session bounds it per subscription).
 */
import { QuerySyntaxError, compileQuery, queryString, Token, type CompiledQuery, type EventMap } from '../eventquery/index.js';
import { invalidArgument, invalidRequest, limitExceeded, notFound } from '../lib/errors.js';
import type { AbciEvent, BlockStore, CometBlockRecord, RoundStepEvent } from './backend.js';
import {
  blockIdJson,
  blockJson,
  eventJson,
  finalizeBlockJson,
  headerJson,
  hexUpper,
  roundStepData,
  txResultEventJson,
  validatorJson,
} from './format.js';
import type { EventDataJson } from './jsontypes.js';
import { createHash } from 'node:crypto';

/** CometBFT's maxQueryLength (subscribe and tx_search) */
export const MAX_QUERY_LENGTH = 512;
/** CometBFT's text for a query over MAX_QUERY_LENGTH (rpc/core/events.go, tx.go) */
export const QUERY_TOO_LONG = 'maximum query length exceeded';
export const EVENT_TYPE_KEY = 'tm.event';
/** the height key of a Tx event */
export const TX_HEIGHT_KEY = 'tx.height';
/** how a block event's phase is marked (Cosmos SDK ≥ 0.50 on CometBFT 0.38), and the key forms it enables */
export const MODE_ATTRIBUTE = 'mode';
export const PHASE_PREFIX: Readonly<Record<string, string>> = { BeginBlock: 'begin_block', EndBlock: 'end_block' };

export interface EventLimits {
  maxClients: number;
  maxPerClient: number;
}

/** One published event. `dataText`/`eventsText` are serialized once, on first use. */
export class BusEvent {
  private data?: string;
  private events?: string;

  constructor(
    /** the tm.event value */
    readonly type: string,
    private readonly buildData: () => EventDataJson,
    /** the `events` map sent to subscribers */
    readonly eventMap: Map<string, string[]>,
    /** what queries match against: the map plus the begin_block/end_block key forms */
    readonly matchMap: EventMap,
  ) {}

  dataText(): string {
    return (this.data ??= JSON.stringify(this.buildData()));
  }

  eventsText(): string {
    return (this.events ??= JSON.stringify(Object.fromEntries(this.eventMap)));
  }
}

export interface Subscription {
  readonly clientId: string;
  /** the query as the client sent it (echoed in every notification) */
  readonly text: string;
  /** normalised query: the subscription's identity within its client */
  readonly key: string;
  readonly query: CompiledQuery;
  /** the `tm.event` value the query requires, if it names exactly one (a prefilter) */
  readonly eventType: string | undefined;
  deliver(ev: BusEvent): void;
  /** called once when the bus ends the subscription (not on unsubscribe); reason as CometBFT words it */
  cancelled?(reason: string): void;
}

/** `type.key → values` of ABCI events (validateAndStringifyEvents: empty types/keys skipped). */
function stringifyEvents(events: readonly AbciEvent[], into = new Map<string, string[]>()): Map<string, string[]> {
  for (const e of events) {
    if (e.type === '') continue;
    for (const a of e.attributes) {
      if (a.key === '') continue;
      const k = `${e.type}.${a.key}`;
      const list = into.get(k);
      if (list) list.push(a.value);
      else into.set(k, [a.value]);
    }
  }
  return into;
}

/** The begin_block/end_block key forms of block events marked with a `mode` attribute. */
function phaseKeys(events: readonly AbciEvent[], base: Map<string, string[]>): EventMap {
  const phased = events.filter((e) => e.attributes.some((a) => a.key === MODE_ATTRIBUTE && PHASE_PREFIX[a.value]));
  if (phased.length === 0) return base;
  const out = new Map(base);
  for (const e of phased) {
    const prefix = PHASE_PREFIX[e.attributes.find((a) => a.key === MODE_ATTRIBUTE)!.value]!;
    stringifyEvents([{ type: `${prefix}.${e.type}`, attributes: e.attributes }], out);
  }
  return out;
}

function withType(type: string, rest?: Map<string, string[]>): Map<string, string[]> {
  const m = new Map<string, string[]>([[EVENT_TYPE_KEY, [type]]]);
  if (rest) for (const [k, v] of rest) m.set(k, k === EVENT_TYPE_KEY ? [...v, type] : v);
  return m;
}

/** The tm.event value a query pins with `tm.event = '…'`, if any. */
function requiredEventType(q: CompiledQuery): string | undefined {
  const c = q.query.conditions.find((x) => x.tag === EVENT_TYPE_KEY && x.op === Token.eq && x.arg?.type === Token.string);
  return c?.arg?.text;
}

/** a subscription's query, parsed (CometBFT's "failed to parse query: …") */
function parsed(queryText: string): CompiledQuery {
  try {
    return compileQuery(queryText);
  } catch (e) {
    if (e instanceof QuerySyntaxError) throw invalidArgument(`failed to parse query: ${e.message}`);
    throw e;
  }
}

export function txHashOf(tx: Uint8Array): Uint8Array {
  return createHash('sha256').update(tx).digest();
}

/** the event types publishBlock makes from a committed block */
const BLOCK_EVENT_TYPES = ['NewBlock', 'NewBlockHeader', 'NewBlockEvents', 'Tx', 'ValidatorSetUpdates'] as const;
/** every event type that is not a consensus step (onStart publishes the sync statuses) */
const NOT_STEP_TYPES: ReadonlySet<string> = new Set([...BLOCK_EVENT_TYPES, 'BlockSyncStatus', 'StateSyncStatus']);

export class EventBus {
  private readonly clients = new Map<string, Map<string, Subscription>>();
  /** subscriptions by required tm.event ('' = any) */
  private readonly byType = new Map<string, Set<Subscription>>();
  private lastPublished: bigint;
  private stepsWanted = false;
  /**
   * Hears whether some subscription could want a consensus step's event (NewRound, Vote, ...): the
   * engine makes and posts them only then (node/chainworker.ts; docs/benchmarks.md "The fixed cost
   * of a block, part 2").
   */
  onStepsWanted: ((wanted: boolean) => void) | undefined;

  constructor(
    private readonly backend: BlockStore,
    private readonly limits: EventLimits,
  ) {
    this.lastPublished = backend.latestHeight();
  }

  numClients(): number {
    return this.clients.size;
  }

  numClientSubscriptions(clientId: string): number {
    return this.clients.get(clientId)?.size ?? 0;
  }

  /** Checks CometBFT's limits and parses; throws DomainErrors with CometBFT's texts. */
  prepare(clientId: string, queryText: string): { query: CompiledQuery; key: string; eventType: string | undefined } {
    if (this.numClients() >= this.limits.maxClients && !this.clients.has(clientId)) {
      throw limitExceeded(`max_subscription_clients ${this.limits.maxClients} reached`);
    }
    if (this.numClientSubscriptions(clientId) >= this.limits.maxPerClient) {
      throw limitExceeded(`max_subscriptions_per_client ${this.limits.maxPerClient} reached`);
    }
    if (queryText.length > MAX_QUERY_LENGTH) throw limitExceeded(QUERY_TOO_LONG);
    const query = parsed(queryText);
    const key = queryString(query.query);
    if (this.clients.get(clientId)?.has(key)) throw invalidRequest('already subscribed');
    return { query, key, eventType: requiredEventType(query) };
  }

  add(sub: Subscription): void {
    let subs = this.clients.get(sub.clientId);
    if (!subs) this.clients.set(sub.clientId, (subs = new Map()));
    subs.set(sub.key, sub);
    const t = sub.eventType ?? '';
    let set = this.byType.get(t);
    if (!set) this.byType.set(t, (set = new Set()));
    set.add(sub);
    this.stepsChanged();
  }

  private drop(sub: Subscription): void {
    const subs = this.clients.get(sub.clientId);
    if (subs?.get(sub.key) === sub) {
      subs.delete(sub.key);
      if (subs.size === 0) this.clients.delete(sub.clientId);
    }
    this.byType.get(sub.eventType ?? '')?.delete(sub);
    this.stepsChanged();
  }

  /** Whether a subscription could match a consensus step's event: any that does not pin a block or status event type. */
  private stepsChanged(): void {
    let wanted = false;
    for (const [type, set] of this.byType) if (set.size > 0 && !NOT_STEP_TYPES.has(type)) wanted = true;
    if (wanted === this.stepsWanted) return;
    this.stepsWanted = wanted;
    this.onStepsWanted?.(wanted);
  }

  /** unsubscribe: the query is parsed and normalised; throws CometBFT's texts */
  unsubscribe(clientId: string, queryText: string): void {
    const key = queryString(parsed(queryText).query);
    const sub = this.clients.get(clientId)?.get(key);
    if (!sub) throw notFound('subscription not found');
    this.drop(sub);
  }

  unsubscribeAll(clientId: string): void {
    const subs = this.clients.get(clientId);
    if (!subs) throw notFound('subscription not found');
    for (const s of [...subs.values()]) this.drop(s);
  }

  /** Removes a subscription and tells its owner why (pubsub's cancellation). */
  cancel(sub: Subscription, reason: string): void {
    this.drop(sub);
    sub.cancelled?.(reason);
  }

  /** Ends every subscription (node shutdown): "CometBFT exited", as upstream words it. */
  close(): void {
    for (const subs of [...this.clients.values()]) for (const s of [...subs.values()]) this.cancel(s, 'CometBFT exited');
  }

  private wanted(type: string): boolean {
    return (this.byType.get(type)?.size ?? 0) > 0 || (this.byType.get('')?.size ?? 0) > 0;
  }

  private publish(ev: BusEvent): void {
    for (const set of [this.byType.get(ev.type), this.byType.get('')]) {
      if (!set) continue;
      for (const sub of [...set]) if (sub.query.matches(ev.matchMap)) sub.deliver(ev);
    }
  }

  /**
   * BlockSyncStatus and StateSyncStatus, published once when the service starts: ferry never syncs
   * from peers, so it is caught up from its first moment (tendermint's payload `{complete, height}`).
   */
  onStart(): void {
    const height = this.backend.latestHeight().toString();
    for (const [type, dataType] of [
      ['BlockSyncStatus', 'tendermint/event/FastSyncStatus'],
      ['StateSyncStatus', 'tendermint/event/StateSyncStatus'],
    ] as const) {
      if (!this.wanted(type)) continue;
      const map = withType(type);
      this.publish(new BusEvent(type, () => ({ type: dataType, value: { complete: true, height } }), map, map));
    }
  }

  /** A consensus step of the engine. */
  onRoundStep(e: RoundStepEvent): void {
    if (!this.wanted(e.type)) return;
    const map = withType(e.type);
    this.publish(new BusEvent(e.type, () => roundStepData(e), map, map));
  }

  /**
   * A dev revert rewound the chain to `height` (docs/dev-mode.md): nothing is published for the
   * removed blocks (CometBFT has no reorg event); NewBlock and the other block events resume at
   * height + 1, a reused height with a new block.
   */
  onRewound(height: bigint): void {
    if (height < this.lastPublished) this.lastPublished = height;
  }

  /** Blocks up to `height` are committed: publish the events of each new one, in order. */
  onCommitted(height: bigint): void {
    // no subscription wants a block's events: the blocks are not read (a commit costs the RPC thread nothing here)
    if (!BLOCK_EVENT_TYPES.some((t) => this.wanted(t))) {
      if (this.lastPublished < height) this.lastPublished = height;
      return;
    }
    while (this.lastPublished < height) {
      this.lastPublished++;
      const rec = this.backend.block(this.lastPublished);
      if (rec) this.publishBlock(rec);
    }
  }

  private publishBlock(rec: CometBlockRecord): void {
    const height = rec.block.header.height;
    const blockEvents = rec.results.events;
    if (this.wanted('NewBlock')) {
      const map = withType('NewBlock', stringifyEvents(blockEvents));
      const data = (): EventDataJson => ({
        type: 'tendermint/event/NewBlock',
        value: { block: blockJson(rec.block), block_id: blockIdJson(rec.blockId), result_finalize_block: finalizeBlockJson(rec.results) },
      });
      this.publish(new BusEvent('NewBlock', data, map, phaseKeys(blockEvents, map)));
    }
    if (this.wanted('NewBlockHeader')) {
      const map = withType('NewBlockHeader');
      this.publish(new BusEvent('NewBlockHeader', () => ({ type: 'tendermint/event/NewBlockHeader', value: { header: headerJson(rec.block.header) } }), map, map));
    }
    if (this.wanted('NewBlockEvents')) {
      const map = withType('NewBlockEvents', stringifyEvents(blockEvents));
      const data = (): EventDataJson => ({
        type: 'tendermint/event/NewBlockEvents',
        value: { height: height.toString(), events: blockEvents.length === 0 ? null : blockEvents.map(eventJson), num_txs: String(rec.block.data.txs.length) },
      });
      this.publish(new BusEvent('NewBlockEvents', data, map, phaseKeys(blockEvents, map)));
    }
    if (this.wanted('Tx')) {
      rec.block.data.txs.forEach((tx, i) => {
        const result = rec.results.txResults[i]!;
        const map = new Map<string, string[]>([
          [EVENT_TYPE_KEY, ['Tx']],
          ['tx.hash', [hexUpper(txHashOf(tx))]],
          [TX_HEIGHT_KEY, [height.toString()]],
        ]);
        stringifyEvents(result.events, map);
        const data = (): EventDataJson => ({ type: 'tendermint/event/Tx', value: { TxResult: txResultEventJson(height, i, tx, result) } });
        this.publish(new BusEvent('Tx', data, map, map));
      });
    }
    const updates = rec.results.validatorUpdates ?? [];
    if (updates.length > 0 && this.wanted('ValidatorSetUpdates')) {
      const map = withType('ValidatorSetUpdates');
      const data = (): EventDataJson => ({
        type: 'tendermint/event/ValidatorSetUpdates',
        value: {
          validator_updates: updates.map((u) =>
            validatorJson({ address: txHashOf(u.pubKey).subarray(0, 20), pubKey: u.pubKey, votingPower: u.power }),
          ),
        },
      });
      this.publish(new BusEvent('ValidatorSetUpdates', data, map, map));
    }
  }
}
