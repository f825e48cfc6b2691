/** Subscriptions (rpc/core/events.go): subscribe, unsubscribe, unsubscribe_all — WebSocket only. */
import { invalidRequest } from '../../lib/errors.js';
import type { EventBus } from '../events.js';
import { stringParam } from '../params.js';
import { route, type CometRoute } from '../route.js';
import type { EmptyResult } from './status.js';

export function eventRoutes(bus: EventBus) {
  return {
    subscribe: route(
      [stringParam('query')],
      ([query], ctx): EmptyResult => {
        if (!ctx.session) throw invalidRequest('subscribe is only available over WebSocket');
        const p = bus.prepare(ctx.remoteAddr, query);
        ctx.session.subscribe(ctx.requestId, query, p.query, p.key, p.eventType);
        return {};
      },
      { wsOnly: true },
    ),
    unsubscribe: route(
      [stringParam('query')],
      ([query], ctx): EmptyResult => {
        bus.unsubscribe(ctx.remoteAddr, query);
        return {};
      },
      { wsOnly: true },
    ),
    unsubscribe_all: route(
      [],
      (_args, ctx): EmptyResult => {
        bus.unsubscribeAll(ctx.remoteAddr);
        return {};
      },
      { wsOnly: true },
    ),
  } satisfies Record<string, CometRoute>;
}
