/**
 * The node page (served at /explorer by the JSON-RPC HTTP listener; bundled by esbuild at `npm run
 * build`). It reads the chain with Surface A's own JSON-RPC over HTTP (same origin) and follows it
 * live with eth_subscribe("newHeads") on the WebSocket listener. Views (hash routes):
 *   #/                 latest blocks with their txs, mempool, plots
 *   #/block/<n>        one block
 *   #/tx/<hash>        a transaction: EVM hash and native (CometBFT) hash, receipt, decoded logs, and with
 *                      the `ots` namespace its internal operations and call frames (ots_getInternalOperations,
 *                      ots_traceTransaction)
 *   #/address/<addr>[/<block>]   balance, nonce, code; with `ots`, the contract's creator and the address's
 *                      history before <block> (ots_getContractCreator, ots_searchTransactionsBefore, paged)
 * Without the `ots` namespace (`--json-rpc.api`), those parts are left out (docs/compatibility.md).
 */

interface Config {
  wsPort?: number;
  cometUrl?: string;
  chainId: string;
  evmChainId: number;
}
interface Tx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  nonce: string;
  gas: string;
  input: string;
  blockNumber: string | null;
  transactionIndex: string | null;
  type: string;
  /** type 0x4 (EIP-7702 set code) */
  authorizationList?: { chainId: string; address: string; nonce: string }[];
}
interface Block {
  number: string;
  hash: string;
  timestamp: string;
  gasUsed: string;
  gasLimit: string;
  baseFeePerGas?: string;
  miner: string;
  transactions: Tx[];
}
interface Log {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
}
interface Receipt {
  status: string;
  gasUsed: string;
  effectiveGasPrice: string;
  contractAddress: string | null;
  logs: Log[];
  blockNumber: string;
}

/** transactions one page of an address's history shows (ots_searchTransactionsBefore's pageSize) */
const HISTORY_PAGE = 25;
/** ots_getInternalOperations' types */
const OPERATIONS = ['transfer', 'self-destruct', 'create', 'create2'];

/** blocks kept for the list and the plots */
const KEEP_BLOCKS = 60;
const LIST_BLOCKS = 15;
const STATS_POLL_MS = 2_000;
const RECONNECT_MS = 2_000;

/** Known event signatures (topic0 → decoder): ERC-20 and ERC-721 Transfer, Approval. */
const EVENTS: Record<string, { name: string; params: string[] }> = {
  '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef': { name: 'Transfer', params: ['from', 'to', 'value'] },
  '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925': { name: 'Approval', params: ['owner', 'spender', 'value'] },
};

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const num = (hex: string | null | undefined): number => (hex ? Number(BigInt(hex)) : 0);
const short = (h: string): string => (h.length > 18 ? `${h.slice(0, 10)}…${h.slice(-6)}` : h);
const link = (kind: 'block' | 'tx' | 'address', id: string, text = short(id)): string => `<a href="#/${kind}/${esc(id)}" class="mono">${esc(text)}</a>`;

function formatEther(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const frac = (wei % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac.slice(0, 8)}` : `${whole}`;
}

let rpcId = 1;
async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

// ---- state ---------------------------------------------------------------------------------------

const blocks: Block[] = [];
const rpcRates: number[] = [];
let lastRequests: { at: number; count: number } | undefined;
let config: Config;

function remember(b: Block): void {
  if (blocks.some((x) => x.hash === b.hash)) return;
  blocks.push(b);
  blocks.sort((a, c) => num(a.number) - num(c.number));
  while (blocks.length > KEEP_BLOCKS) blocks.shift();
}

// ---- plots (SVG) ---------------------------------------------------------------------------------

function plot(title: string, values: number[], unit: string, id: string): string {
  const W = 300;
  const H = 120;
  const max = Math.max(1e-9, ...values);
  const step = values.length > 1 ? W / (values.length - 1) : W;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(H - 6 - (v / max) * (H - 14)).toFixed(1)}`).join(' ');
  const latest = values.length ? values[values.length - 1]! : undefined;
  return `<div class="plot" id="${id}"><h2>${esc(title)} <span class="now">${latest === undefined ? '—' : `${+latest.toFixed(3)} ${esc(unit)}`} (max ${+max.toFixed(3)})</span></h2>
    <svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${esc(title)}">
      <polyline fill="none" stroke="#0b6bcb" stroke-width="2" vector-effect="non-scaling-stroke" points="${points}"/>
    </svg></div>`;
}

function plotsHtml(): string {
  const interval = blocks.slice(1).map((b, i) => num(b.timestamp) - num(blocks[i]!.timestamp));
  return `<section><h2>Chain</h2><div class="plots">
    ${plot('Block time', interval, 's', 'plot-blocktime')}
    ${plot('Transactions per block', blocks.map((b) => b.transactions.length), 'txs', 'plot-txs')}
    ${plot('Gas used', blocks.map((b) => num(b.gasUsed)), 'gas', 'plot-gas')}
    ${plot('RPC rate', rpcRates, 'req/s', 'plot-rpc')}
  </div>${rpcRates.length === 0 ? '<p class="muted">RPC rate: start the node with <code>--metrics</code> to count requests.</p>' : ''}</section>`;
}

// ---- views ---------------------------------------------------------------------------------------

async function mempoolHtml(): Promise<string> {
  try {
    const content = await rpc<{ pending: Record<string, Record<string, Tx>>; queued: Record<string, Record<string, Tx>> }>('txpool_content');
    const rows: string[] = [];
    for (const [kind, bySender] of Object.entries(content)) {
      for (const txs of Object.values(bySender)) {
        for (const tx of Object.values(txs)) rows.push(`<tr><td>${kind}</td><td>${link('tx', tx.hash)}</td><td>${link('address', tx.from)}</td><td>${num(tx.nonce)}</td></tr>`);
      }
    }
    return `<section id="mempool"><h2>Mempool (${rows.length})</h2>${rows.length ? `<table><tr><th>state</th><th>tx</th><th>from</th><th>nonce</th></tr>${rows.join('')}</table>` : '<p class="muted">empty</p>'}</section>`;
  } catch {
    const pending = await rpc<string>('eth_getBlockTransactionCountByNumber', ['pending']).catch(() => null);
    return `<section id="mempool"><h2>Mempool</h2><p>${pending === null ? 'unknown' : `${num(pending)} pending`} <span class="muted">(enable the txpool namespace for its content)</span></p></section>`;
  }
}

function blocksHtml(): string {
  const rows = blocks
    .slice(-LIST_BLOCKS)
    .reverse()
    .map((b) => {
      const txs = b.transactions.map((t) => `${link('tx', t.hash)} <span class="muted">${short(t.from)} → ${t.to ? short(t.to) : 'create'}</span>`).join('<br>');
      return `<tr data-block="${num(b.number)}"><td>${link('block', String(num(b.number)), String(num(b.number)))}</td><td class="mono">${short(b.hash)}</td><td>${new Date(num(b.timestamp) * 1000).toLocaleTimeString()}</td><td>${num(b.gasUsed).toLocaleString()}</td><td>${txs || '<span class="muted">no txs</span>'}</td></tr>`;
    })
    .join('');
  return `<section id="blocks"><h2>Latest blocks</h2><table><tr><th>block</th><th>hash</th><th>time</th><th>gas used</th><th>transactions</th></tr>${rows}</table></section>`;
}

async function homeView(): Promise<string> {
  return plotsHtml() + blocksHtml() + (await mempoolHtml());
}

async function blockView(id: string): Promise<string> {
  const b = await rpc<Block | null>('eth_getBlockByNumber', [/^\d+$/.test(id) ? '0x' + BigInt(id).toString(16) : id, true]);
  if (!b) return `<section><h2>Block ${esc(id)}</h2><p>not found</p></section>`;
  const txs = b.transactions.map((t) => `<tr><td>${num(t.transactionIndex)}</td><td>${link('tx', t.hash)}</td><td>${link('address', t.from)}</td><td>${t.to ? link('address', t.to) : 'create'}</td><td>${formatEther(BigInt(t.value))}</td></tr>`).join('');
  return `<section id="block"><h2>Block ${num(b.number)}</h2><dl>
    <dt>hash</dt><dd class="mono">${esc(b.hash)}</dd>
    <dt>time</dt><dd>${new Date(num(b.timestamp) * 1000).toISOString()}</dd>
    <dt>gas used</dt><dd>${num(b.gasUsed).toLocaleString()} of ${num(b.gasLimit).toLocaleString()}</dd>
    <dt>base fee</dt><dd>${b.baseFeePerGas ? `${num(b.baseFeePerGas)} wei` : '—'}</dd>
    <dt>proposer (miner)</dt><dd>${link('address', b.miner, b.miner)}</dd>
  </dl><h2>Transactions (${b.transactions.length})</h2>${txs ? `<table><tr><th>#</th><th>hash</th><th>from</th><th>to</th><th>value (ETH)</th></tr>${txs}</table>` : '<p class="muted">none</p>'}</section>`;
}

function word(data: string, i: number): string {
  return '0x' + data.slice(2 + i * 64, 2 + (i + 1) * 64);
}

function decodeLog(log: Log): string {
  const ev = EVENTS[log.topics[0] ?? ''];
  if (!ev) return '<span class="muted">unknown event</span>';
  // indexed addresses in topics 1..2; the value in topic 3 (ERC-721) or the data (ERC-20)
  const addr = (t: string | undefined) => (t ? '0x' + t.slice(26) : '?');
  const value = log.topics.length > 3 ? BigInt(log.topics[3]!) : log.data.length >= 66 ? BigInt(word(log.data, 0)) : undefined;
  return `<strong>${ev.name}</strong>(${ev.params[0]}: ${link('address', addr(log.topics[1]))}, ${ev.params[1]}: ${link('address', addr(log.topics[2]))}, ${ev.params[2]}: <span class="mono">${value ?? '?'}</span>)`;
}

/** A set-code tx's authorizations: which code each signer delegates to (the zero address revokes). */
function authorizations(tx: Tx): string {
  const list = tx.authorizationList;
  if (!list) return '';
  const rows = list
    .map((a, i) => `<tr><td>${i}</td><td>${num(a.chainId)}</td><td>${link('address', a.address, a.address)}</td><td>${num(a.nonce)}</td></tr>`)
    .join('');
  return `<h2>Authorizations (${list.length})</h2><table id="tx-auths"><tr><th>#</th><th>chain id</th><th>delegate to</th><th>nonce</th></tr>${rows}</table>`;
}

/** an `ots` answer, or undefined when the namespace is off or the call fails (that part of a view is left out) */
async function ots<T>(method: string, params: unknown[]): Promise<T | undefined> {
  try {
    return await rpc<T>(method, params);
  } catch {
    return undefined;
  }
}

/** the tx's internal operations and call frames (ots_getInternalOperations, ots_traceTransaction) */
async function internalsHtml(hash: string): Promise<string> {
  const [ops, frames] = await Promise.all([
    ots<{ type: number; from: string; to: string; value: string }[]>('ots_getInternalOperations', [hash]),
    ots<{ type: string; depth: number; from: string; to: string | null; value: string | null }[]>('ots_traceTransaction', [hash]),
  ]);
  let html = '';
  if (ops && ops.length > 0) {
    const rows = ops.map((o) => `<tr><td>${OPERATIONS[o.type] ?? o.type}</td><td>${link('address', o.from)}</td><td>${link('address', o.to)}</td><td>${formatEther(BigInt(o.value))}</td></tr>`).join('');
    html += `<h2>Internal operations (${ops.length})</h2><table id="tx-internal"><tr><th>type</th><th>from</th><th>to</th><th>value (ETH)</th></tr>${rows}</table>`;
  }
  if (frames && frames.length > 1) {
    const rows = frames
      .map((f) => `<tr><td style="padding-left:${f.depth}em">${esc(f.type)}</td><td>${link('address', f.from)}</td><td>${f.to ? link('address', f.to) : ''}</td><td>${formatEther(BigInt(f.value ?? '0x0'))}</td></tr>`)
      .join('');
    html += `<h2>Calls (${frames.length})</h2><table id="tx-calls"><tr><th>type</th><th>from</th><th>to</th><th>value (ETH)</th></tr>${rows}</table>`;
  }
  return html;
}

async function txView(hash: string): Promise<string> {
  const [tx, receipt, ids, internals] = await Promise.all([
    rpc<Tx | null>('eth_getTransactionByHash', [hash]),
    rpc<Receipt | null>('eth_getTransactionReceipt', [hash]),
    fetch(`/explorer/api/tx?hash=${encodeURIComponent(hash)}`).then((r) => (r.ok ? (r.json() as Promise<{ nativeHash: string }>) : undefined)),
    internalsHtml(hash),
  ]);
  if (!tx) return `<section><h2>Transaction</h2><p class="mono">${esc(hash)}: not found</p></section>`;
  const native = ids?.nativeHash;
  const logs = (receipt?.logs ?? [])
    .map((l) => `<tr><td>${num(l.logIndex)}</td><td>${link('address', l.address)}</td><td>${decodeLog(l)}</td><td class="mono">${l.topics.map(esc).join('<br>')}<br>${esc(l.data)}</td></tr>`)
    .join('');
  return `<section id="tx"><h2>Transaction</h2><dl>
    <dt>EVM hash</dt><dd class="mono" id="evm-hash">${esc(tx.hash)}</dd>
    <dt>native hash</dt><dd class="mono" id="native-hash">${native ? `${esc(native)}${config.cometUrl ? ` <a href="${esc(config.cometUrl)}/tx?hash=${esc(native)}">(Surface B tx)</a>` : ''}` : '<span class="muted">pending</span>'}</dd>
    <dt>status</dt><dd id="tx-status">${receipt ? (receipt.status === '0x1' ? '<span class="ok">success</span>' : '<span class="fail">reverted</span>') : '<span class="muted">pending</span>'}</dd>
    <dt>block</dt><dd>${tx.blockNumber ? link('block', String(num(tx.blockNumber)), String(num(tx.blockNumber))) : 'pending'}</dd>
    <dt>from</dt><dd>${link('address', tx.from, tx.from)}</dd>
    <dt>to</dt><dd>${tx.to ? link('address', tx.to, tx.to) : `create → ${receipt?.contractAddress ? link('address', receipt.contractAddress, receipt.contractAddress) : '?'}`}</dd>
    <dt>value</dt><dd>${formatEther(BigInt(tx.value))} ETH</dd>
    <dt>nonce</dt><dd>${num(tx.nonce)}</dd>
    <dt>gas used</dt><dd>${receipt ? `${num(receipt.gasUsed).toLocaleString()} at ${num(receipt.effectiveGasPrice)} wei` : '—'}</dd>
    <dt>type</dt><dd id="tx-type">${num(tx.type)}${tx.type === '0x4' ? ' (EIP-7702 set code)' : ''}</dd>
    <dt>input</dt><dd class="mono">${esc(tx.input.length > 266 ? tx.input.slice(0, 266) + '…' : tx.input)}</dd>
  </dl>${authorizations(tx)}<h2>Events (${receipt?.logs.length ?? 0})</h2>${logs ? `<table id="tx-events"><tr><th>#</th><th>address</th><th>decoded</th><th>topics / data</th></tr>${logs}</table>` : '<p class="muted">none</p>'}${receipt ? internals : ''}</section>`;
}

interface SearchPage {
  txs: Tx[];
  receipts: (Receipt & { timestamp: string })[];
  lastPage: boolean;
}

/** the address's transactions before block `before` (0: from the head), newest first, with a link to the older ones */
function historyHtml(addr: string, page: SearchPage): string {
  const rows = page.txs
    .map((t, i) => {
      const r = page.receipts[i]!;
      const status = r.status === '0x1' ? '<span class="ok">ok</span>' : '<span class="fail">reverted</span>';
      return `<tr><td>${link('block', String(num(t.blockNumber)), String(num(t.blockNumber)))}</td><td>${link('tx', t.hash)}</td><td>${link('address', t.from)}</td><td>${t.to ? link('address', t.to) : 'create'}</td><td>${formatEther(BigInt(t.value))}</td><td>${status}</td></tr>`;
    })
    .join('');
  const oldest = page.txs.at(-1)?.blockNumber;
  const older = !page.lastPage && oldest ? `<p><a id="older" href="#/address/${esc(addr)}/${num(oldest)}">older →</a></p>` : '';
  const table = rows ? `<table id="history"><tr><th>block</th><th>hash</th><th>from</th><th>to</th><th>value (ETH)</th><th>status</th></tr>${rows}</table>` : '<p class="muted" id="history">none</p>';
  return `<h2>Transactions (sender, recipient or reached by an internal call)</h2>${table}${older}`;
}

async function addressView(addr: string, before = 0): Promise<string> {
  const [balance, nonce, code, page] = await Promise.all([
    rpc<string>('eth_getBalance', [addr, 'latest']),
    rpc<string>('eth_getTransactionCount', [addr, 'latest']),
    rpc<string>('eth_getCode', [addr, 'latest']),
    ots<SearchPage>('ots_searchTransactionsBefore', [addr, before, HISTORY_PAGE]),
  ]);
  const creator = code === '0x' ? undefined : await ots<{ hash: string; creator: string } | null>('ots_getContractCreator', [addr]);
  const seen = blocks.flatMap((b) => b.transactions).filter((t) => t.from.toLowerCase() === addr.toLowerCase() || t.to?.toLowerCase() === addr.toLowerCase());
  const recent = `<h2>Recent transactions</h2>${seen.length ? seen.map((t) => link('tx', t.hash, t.hash)).join('<br>') : '<p class="muted">none in the last blocks</p>'}`;
  return `<section id="address"><h2>Account</h2><dl>
    <dt>address</dt><dd class="mono">${esc(addr)}</dd>
    <dt>balance</dt><dd id="balance">${formatEther(BigInt(balance))} ETH</dd>
    <dt>nonce</dt><dd id="nonce">${num(nonce)}</dd>
    <dt>code</dt><dd class="mono">${code === '0x' ? '<span class="muted">none (externally owned)</span>' : /^0xef0100[0-9a-f]{40}$/i.test(code) ? `delegated (EIP-7702) to ${link('address', '0x' + code.slice(8), '0x' + code.slice(8))}` : `${(code.length - 2) / 2} bytes: ${esc(code.slice(0, 130))}…`}</dd>
    ${creator ? `<dt>created by</dt><dd id="creator">${link('address', creator.creator, creator.creator)} in ${link('tx', creator.hash)}</dd>` : ''}
  </dl>${page ? historyHtml(addr, page) : recent}</section>`;
}

// ---- routing and live updates -------------------------------------------------------------------

/** one render at a time; a head or a navigation during one asks for another right after it */
let rendering = false;
let renderAgain = false;
async function render(): Promise<void> {
  if (rendering) {
    renderAgain = true;
    return;
  }
  rendering = true;
  try {
    do {
      renderAgain = false;
      const [, kind, id, from] = location.hash.split('/');
      let html: string;
      try {
        if (kind === 'block' && id) html = await blockView(id);
        else if (kind === 'tx' && id) html = await txView(id);
        else if (kind === 'address' && id) html = await addressView(id, from && /^\d+$/.test(from) ? Number(from) : 0);
        else html = await homeView();
      } catch (e) {
        html = `<section><h2>Error</h2><p>${esc((e as Error).message)}</p></section>`;
      }
      $('view').innerHTML = html;
    } while (renderAgain);
  } finally {
    rendering = false;
  }
}

function onHead(b: Block): void {
  remember(b);
  $('head').textContent = String(num(b.number));
  const [, kind] = location.hash.split('/');
  if (!kind || kind === 'tx' || kind === 'address') void render();
}

/** A new head: fetch it, and any block between the last one shown and it (made while the page was
 *  loading, or while the WebSocket was reconnecting), so the list has no gap. */
async function loadHead(n: string): Promise<void> {
  const head = num(n);
  const known = blocks.length ? num(blocks[blocks.length - 1]!.number) : head - 1;
  const from = Math.max(known + 1, head - KEEP_BLOCKS + 1);
  for (let h = from; h <= head; h++) {
    const b = await rpc<Block | null>('eth_getBlockByNumber', ['0x' + h.toString(16), true]);
    if (b) onHead(b);
  }
}

function connect(): void {
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.hostname}:${config.wsPort}`);
  const live = $('live');
  ws.onopen = () => {
    live.textContent = 'live';
    live.className = 'on';
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  };
  ws.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data)) as { method?: string; params?: { result: { number: string } } };
    if (msg.method === 'eth_subscription' && msg.params) void loadHead(msg.params.result.number);
  };
  ws.onclose = () => {
    live.textContent = 'reconnecting';
    live.className = 'off';
    setTimeout(connect, RECONNECT_MS);
  };
}

async function pollStats(): Promise<void> {
  try {
    const s = (await (await fetch('/explorer/api/stats')).json()) as { rpcRequests: number | null };
    if (s.rpcRequests !== null) {
      const now = performance.now();
      if (lastRequests) {
        rpcRates.push((s.rpcRequests - lastRequests.count) / ((now - lastRequests.at) / 1000));
        while (rpcRates.length > KEEP_BLOCKS) rpcRates.shift();
      }
      lastRequests = { at: now, count: s.rpcRequests };
    }
  } catch {
    // the node is restarting: the next poll tries again
  }
}

async function main(): Promise<void> {
  config = (await (await fetch('/explorer/config.json')).json()) as Config;
  $('chain').textContent = `${config.chainId} (EVM ${config.evmChainId})`;
  $('search').addEventListener('submit', (e) => {
    e.preventDefault();
    const q = (new FormData(e.target as HTMLFormElement).get('q') as string).trim();
    if (/^\d+$/.test(q)) location.hash = `#/block/${q}`;
    else if (/^0x[0-9a-fA-F]{64}$/.test(q)) location.hash = `#/tx/${q}`;
    else if (/^0x[0-9a-fA-F]{40}$/.test(q)) location.hash = `#/address/${q}`;
  });
  window.addEventListener('hashchange', () => void render());
  // the last blocks, then live
  const head = num(await rpc<string>('eth_blockNumber'));
  const first = Math.max(0, head - LIST_BLOCKS + 1);
  const recent = await Promise.all(Array.from({ length: head - first + 1 }, (_, i) => rpc<Block | null>('eth_getBlockByNumber', ['0x' + (first + i).toString(16), true])));
  for (const b of recent) if (b) remember(b);
  $('head').textContent = String(head);
  await render();
  connect();
  setInterval(() => void pollStats(), STATS_POLL_MS);
}

void main();
