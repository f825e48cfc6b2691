/**
 * The seam between Surface B's listener (server/comet.ts: HTTP, WebSocket, limits) and its handler
 * (cometrpc/service.ts: routes, envelopes, subscriptions). Both sides import it from here; node/
 * wires the two.
 */

export interface CometHttpRequest {
  method: string;
  /** URL path, e.g. `/block` or `/` */
  path: string;
  query: URLSearchParams;
  /** undefined when the body was over the limit */
  body: string | undefined;
  /** `IP:port` of the client */
  remoteAddr: string;
  /** the Host header (for the endpoint list) */
  host: string;
}

export interface CometHttpResponse {
  status: number;
  contentType: string;
  /** undefined: an empty body */
  body: string | undefined;
  /** adds `Cache-Control: public, max-age=86400` */
  cacheable: boolean;
}

/** A WebSocket connection as the handler sees it. */
export interface CometWsPeer {
  readonly remoteAddr: string;
  /**
   * queues a text message; `done` runs once it was written to the socket, or with an error when it
   * could not be (closed, or the listener's outgoing limits were hit: it then closes the connection)
   */
  send(text: string, done?: (err?: Error) => void): void;
  /** cuts the connection at once */
  close(): void;
}

export interface CometWsSession {
  message(text: string): void;
  /** the connection is gone */
  closed(): void;
}

export interface CometRpcHandler {
  http(req: CometHttpRequest): Promise<CometHttpResponse>;
  websocket(peer: CometWsPeer): CometWsSession;
}
