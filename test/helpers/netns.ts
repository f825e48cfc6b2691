/**
 * Linux network namespaces for fault injection on a real network (docs/abci.md "Fault injection"):
 * every node of a CometNet gets its own namespace, joined to one bridge in the root namespace by a
 * veth pair, so each node has an address of its own (10.77.<net>.<10+i>) and the test reaches all of
 * them from the root namespace (the bridge is 10.77.<net>.1). A partition between two groups of nodes
 * is a set of blackhole routes in each side's namespaces towards the other side's addresses: packets
 * between the groups are dropped both ways while the test still reaches every node. Needs root (or
 * CAP_NET_ADMIN and CAP_SYS_ADMIN) and `ip` (iproute2); `netnsAvailable` says whether this machine can.
 */
import { execFileSync } from 'node:child_process';

/** the private /16 the namespaces' addresses come from */
const NET_PREFIX = '10.77';
/** node i's host part is NODE_HOST_BASE + i */
const NODE_HOST_BASE = 10;
const BRIDGE_HOST = 1;

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function ipOk(args: string[]): boolean {
  try {
    ip(args);
    return true;
  } catch {
    return false;
  }
}

/** Whether namespaces can be made here: tries one and removes it. */
export function netnsAvailable(): { ok: true } | { ok: false; reason: string } {
  const probe = `ferry-probe-${process.pid}`;
  try {
    ip(['netns', 'add', probe]);
    ip(['netns', 'del', probe]);
    return { ok: true };
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    return { ok: false, reason: `cannot create a network namespace (${stderr || (e as Error).message}); needs root or CAP_NET_ADMIN and the ip tool` };
  }
}

export class NetnsNetwork {
  private readonly partitioned = new Set<string>();
  private up = false;

  /** `net`: which 10.77.<net>.0/24 and which names (ferry<net>-…), so two networks never collide */
  private constructor(
    readonly net: number,
    readonly size: number,
  ) {}

  static create(size: number, net = process.pid % 250): NetnsNetwork {
    const n = new NetnsNetwork(net, size);
    n.setUp();
    return n;
  }

  get bridge(): string {
    return `fbr${this.net}`;
  }

  namespace(i: number): string {
    return `ferry${this.net}-n${i}`;
  }

  address(i: number): string {
    return `${NET_PREFIX}.${this.net}.${NODE_HOST_BASE + i}`;
  }

  /** the command prefix that runs a program inside node i's namespace (`ip netns exec` execs it: same pid) */
  exec(i: number): string[] {
    return ['ip', 'netns', 'exec', this.namespace(i)];
  }

  private setUp(): void {
    this.tearDown(); // leftovers of an earlier run that died
    ip(['link', 'add', this.bridge, 'type', 'bridge']);
    ip(['addr', 'add', `${NET_PREFIX}.${this.net}.${BRIDGE_HOST}/24`, 'dev', this.bridge]);
    ip(['link', 'set', this.bridge, 'up']);
    for (let i = 0; i < this.size; i++) {
      const ns = this.namespace(i);
      const host = `fv${this.net}h${i}`;
      const peer = `fv${this.net}p${i}`;
      ip(['netns', 'add', ns]);
      ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', peer]);
      ip(['link', 'set', peer, 'netns', ns]);
      ip(['link', 'set', host, 'master', this.bridge]);
      ip(['link', 'set', host, 'up']);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'addr', 'add', `${this.address(i)}/24`, 'dev', peer]);
      ip(['-n', ns, 'link', 'set', peer, 'up']);
    }
    this.up = true;
  }

  /** Drops every packet between a node of `a` and a node of `b` (both ways) until `heal`. */
  partition(a: readonly number[], b: readonly number[]): void {
    for (const i of a) for (const j of b) {
      this.blackhole(i, j);
      this.blackhole(j, i);
    }
  }

  private blackhole(from: number, to: number): void {
    const key = `${from}>${to}`;
    if (this.partitioned.has(key)) return;
    ip(['-n', this.namespace(from), 'route', 'add', 'blackhole', `${this.address(to)}/32`]);
    this.partitioned.add(key);
  }

  /** Removes every partition. */
  heal(): void {
    for (const key of this.partitioned) {
      const [from, to] = key.split('>').map(Number) as [number, number];
      ipOk(['-n', this.namespace(from), 'route', 'del', 'blackhole', `${this.address(to)}/32`]);
    }
    this.partitioned.clear();
  }

  /** Removes the namespaces and the bridge (the veth pairs go with their namespaces). */
  tearDown(): void {
    for (let i = 0; i < this.size; i++) ipOk(['netns', 'del', this.namespace(i)]);
    for (let i = 0; i < this.size; i++) ipOk(['link', 'del', `fv${this.net}h${i}`]);
    ipOk(['link', 'del', this.bridge]);
    this.up = false;
    this.partitioned.clear();
  }

  get active(): boolean {
    return this.up;
  }
}
