/** Listen addresses: `host:port` (app.toml) and `tcp://host:port` (config.toml `laddr`). */

export interface HostPort {
  /** IPv4, hostname, or IPv6 without brackets */
  host: string;
  /** 0 = any free port */
  port: number;
}

const MAX_PORT = 65_535;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HOSTNAME = /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const IPV6 = /^[0-9a-fA-F:.]+$/;
const PORT = /^\d{1,5}$/;
const TCP_SCHEME = 'tcp://';

/** `host:port` with a non-empty host (`[::1]:8545` for IPv6); undefined when malformed. */
export function parseHostPort(text: string): HostPort | undefined {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return undefined;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    if (!IPV6.test(host) || !host.includes(':')) return undefined;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon <= 0) return undefined;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (!validHost(host)) return undefined;
  }
  if (!PORT.test(portText)) return undefined;
  const port = Number(portText);
  if (port > MAX_PORT) return undefined;
  return { host, port };
}

/** `tcp://host:port`; undefined when malformed or another scheme. */
export function parseLaddr(text: string): HostPort | undefined {
  if (!text.startsWith(TCP_SCHEME)) return undefined;
  return parseHostPort(text.slice(TCP_SCHEME.length));
}

/** `host:port` for printing, with brackets around IPv6. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

function validHost(host: string): boolean {
  const v4 = IPV4.exec(host);
  if (v4) return v4.slice(1).every((octet) => Number(octet) <= 255);
  return HOSTNAME.test(host);
}

const UNIX_SCHEME = 'unix://';

/** An ABCI listen address: `tcp://host:port` or `unix:///path/to.sock` (CometBFT's `proxy_app` forms). */
export type AbciAddress = { tcp: HostPort } | { unix: string };

/** undefined when malformed or another scheme */
export function parseAbciAddress(text: string): AbciAddress | undefined {
  if (text.startsWith(UNIX_SCHEME)) {
    const path = text.slice(UNIX_SCHEME.length);
    return path.length > 0 ? { unix: path } : undefined;
  }
  const tcp = parseLaddr(text);
  return tcp ? { tcp } : undefined;
}
