/**
 * JSON helpers that never recurse, for values a client sent: V8's JSON.parse handles any nesting,
 * but JSON.stringify overflows the stack at a few thousand levels, so error texts that quote a
 * client's value use jsonText, and a request's nesting can be bounded with nestingTooDeep before
 * anything walks it.
 */

type Frame = { items: unknown[]; i: number } | { obj: Record<string, unknown>; keys: string[]; i: number };

/** JSON.stringify of a parsed JSON value (null, booleans, numbers, strings, arrays, objects), without recursion. */
export function jsonText(value: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (v: unknown): void => {
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ items: v, i: 0 });
    } else if (v !== null && typeof v === 'object') {
      out.push('{');
      stack.push({ obj: v as Record<string, unknown>, keys: Object.keys(v), i: 0 });
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  };
  open(value);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if ('items' in f) {
      if (f.i === f.items.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (f.i > 0) out.push(',');
      open(f.items[f.i++]);
    } else {
      if (f.i === f.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      if (f.i > 0) out.push(',');
      const key = f.keys[f.i++]!;
      out.push(JSON.stringify(key), ':');
      open(f.obj[key]);
    }
  }
  return out.join('');
}

/**
 * The first `[` or `{` of well-formed JSON text that opens a container nested deeper than
 * `maxDepth`, scanning in text order as encoding/json does; undefined when none does.
 */
export function nestingTooDeep(text: string, maxDepth: number): '[' | '{' | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return c === 0x5b ? '[' : '{';
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}
