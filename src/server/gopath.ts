/**
 * Go's net/http ServeMux path cleaning, which CometBFT's RPC server inherits (its routes hang on a
 * ServeMux): a request whose path holds `.`/`..` elements or repeated slashes is not routed but
 * redirected to the cleaned path, query kept (go/src/net/http/server.go findHandler and cleanPath,
 * go/src/path/path.go Clean, Redirect; go/src/net/url/url.go shouldEscape for the Location).
 * The status is 307, as CometBFT v0.38.26 built with Go 1.26 answers (ServeMux answered 301 before
 * Go 1.22's routing; docs/cometbft-rpc.md).
 */

export const MUX_REDIRECT_STATUS = 307;
export const MUX_REDIRECT_TEXT = 'Temporary Redirect';

/** go/src/path/path.go Clean: the shortest equivalent path (rooted paths stay rooted) */
export function goPathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const el of p.split('/')) {
    if (el === '' || el === '.') continue;
    if (el === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(el);
  }
  const joined = out.join('/');
  if (rooted) return '/' + joined;
  return joined === '' ? '.' : joined;
}

/** go/src/net/http/server.go cleanPath: Clean, rooted, keeping a trailing slash */
export function goCleanPath(p: string): string {
  if (p === '') return '/';
  if (!p.startsWith('/')) p = '/' + p;
  let np = goPathClean(p);
  if (p.endsWith('/') && np !== '/') np += '/';
  return np;
}

/** bytes a Go URL path keeps as they are (url.go shouldEscape, encodePath mode) */
const PATH_KEEP = /[A-Za-z0-9\-_.~$&+,/:;=@]/;

/** go/src/net/url/url.go escape(path, encodePath): every other byte as %XX (upper case) */
function escapeGoPath(p: string): string {
  let out = '';
  for (const ch of p) {
    if (PATH_KEEP.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** go/src/net/http/server.go htmlEscape */
const htmlEscape = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);

export interface MuxRedirect {
  location: string;
  /** the body net/http's Redirect writes for a GET (HEAD and other methods: none) */
  body: string;
}

/**
 * The redirect ServeMux answers for an origin-form request-target (`/path?query`) whose escaped path
 * is not clean; undefined when it is clean (or the target is not origin-form: `*`, absolute-form).
 */
export function muxRedirect(target: string): MuxRedirect | undefined {
  if (!target.startsWith('/')) return undefined;
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q + 1);
  const clean = goCleanPath(path);
  if (clean === path) return undefined;
  const location = escapeGoPath(clean) + (query === '' ? '' : '?' + query);
  return { location, body: `<a href="${htmlEscape(location)}">${MUX_REDIRECT_TEXT}</a>.\n\n` };
}
