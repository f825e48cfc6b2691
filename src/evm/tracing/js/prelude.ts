/**
 * JavaScript evaluated inside the QuickJS sandbox before a tracer: geth's tracer environment
 * (eth/tracers/js/goja.go) written on top of a few host functions (`__host`, removed from the
 * global scope once captured). Values cross the boundary as numbers, strings (hex) and
 * ArrayBuffers; the prelude turns them into geth's JS types: byte buffers are Uint8Array, big
 * numbers are `bigInt` objects (the big-integer API the legacy tracers use, over native BigInt).
 */
export const PRELUDE = String.raw`
(function () {
  'use strict';
  var H = globalThis.__host;
  delete globalThis.__host;
  var G = globalThis;

  // ---- bigInt: the subset of big-integer.js geth's tracers use ----
  function Big(v) { this.v = v; }
  function nat(x) {
    if (x instanceof Big) return x.v;
    if (typeof x === 'bigint') return x;
    if (typeof x === 'number') return BigInt(Math.trunc(x));
    if (typeof x === 'string') return parseRadix(x, 10);
    if (x === undefined || x === null) return 0n;
    throw new TypeError('invalid bigInt value');
  }
  function parseRadix(s, radix) {
    s = String(s).trim();
    var neg = s[0] === '-';
    if (neg || s[0] === '+') s = s.slice(1);
    var prefix = { 16: '0x', 8: '0o', 2: '0b', 10: '' }[radix];
    var v;
    if (prefix !== undefined) {
      if (radix === 16 && /^0x/i.test(s)) s = s.slice(2);
      v = BigInt(prefix + (s === '' ? '0' : s));
    } else {
      v = 0n;
      var r = BigInt(radix);
      for (var i = 0; i < s.length; i++) {
        var d = parseInt(s[i], radix);
        if (isNaN(d)) throw new TypeError('invalid digit ' + s[i]);
        v = v * r + BigInt(d);
      }
    }
    return neg ? -v : v;
  }
  function bigInt(x, radix) {
    if (x instanceof Big) return x;
    if (typeof x === 'string' && radix !== undefined && Number(radix) !== 10) return new Big(parseRadix(x, Number(radix)));
    return new Big(nat(x));
  }
  var P = Big.prototype;
  P.toString = function (radix) { return this.v.toString(radix === undefined ? 10 : radix); };
  P.valueOf = function () { return Number(this.v); };
  P.toJSNumber = P.valueOf;
  P.toJSON = function () { return this.v.toString(10); };
  P.add = P.plus = function (o) { return new Big(this.v + nat(o)); };
  P.subtract = P.minus = function (o) { return new Big(this.v - nat(o)); };
  P.multiply = P.times = function (o) { return new Big(this.v * nat(o)); };
  P.divide = P.over = function (o) { return new Big(this.v / nat(o)); };
  P.mod = P.remainder = function (o) { return new Big(this.v % nat(o)); };
  P.pow = function (o) { return new Big(this.v ** nat(o)); };
  P.compare = P.compareTo = function (o) { var b = nat(o); return this.v < b ? -1 : this.v > b ? 1 : 0; };
  P.equals = P.eq = function (o) { return this.v === nat(o); };
  P.notEquals = P.neq = function (o) { return this.v !== nat(o); };
  P.greater = P.gt = function (o) { return this.v > nat(o); };
  P.lesser = P.lt = function (o) { return this.v < nat(o); };
  P.greaterOrEquals = P.geq = function (o) { return this.v >= nat(o); };
  P.lesserOrEquals = P.leq = function (o) { return this.v <= nat(o); };
  P.isZero = function () { return this.v === 0n; };
  P.isNegative = function () { return this.v < 0n; };
  P.isPositive = function () { return this.v > 0n; };
  P.negate = function () { return new Big(-this.v); };
  P.abs = function () { return new Big(this.v < 0n ? -this.v : this.v); };
  P.shiftLeft = function (n) { return new Big(this.v << nat(n)); };
  P.shiftRight = function (n) { return new Big(this.v >> nat(n)); };
  P.and = function (o) { return new Big(this.v & nat(o)); };
  P.or = function (o) { return new Big(this.v | nat(o)); };
  P.xor = function (o) { return new Big(this.v ^ nat(o)); };
  P.not = function () { return new Big(~this.v); };
  bigInt.zero = new Big(0n);
  bigInt.one = new Big(1n);
  bigInt.isInstance = function (x) { return x instanceof Big; };
  G.bigInt = bigInt;

  // ---- byte buffers ----
  var HEX = '0123456789abcdef';
  function hexOf(b) {
    var s = '0x';
    for (var i = 0; i < b.length; i++) s += HEX[b[i] >> 4] + HEX[b[i] & 15];
    return s;
  }
  function bytesOfHex(s) {
    if (/^0x/i.test(s)) s = s.slice(2);
    if (s.length % 2 === 1) s = '0' + s;
    var out = new Uint8Array(s.length / 2);
    for (var i = 0; i < out.length; i++) {
      var v = parseInt(s.substr(2 * i, 2), 16);
      out[i] = isNaN(v) ? 0 : v;
    }
    return out;
  }
  /** geth's fromBuf: Uint8Array, array of numbers, or (when allowed) a hex string */
  function fromBuf(x, allowString) {
    if (x instanceof Uint8Array) return x;
    if (Array.isArray(x)) return Uint8Array.from(x);
    if (allowString && (typeof x === 'string' || x instanceof String)) return bytesOfHex(String(x));
    throw new Error('invalid buffer type');
  }
  function buf(ab) { return new Uint8Array(ab); }
  function fit(b, n) {
    var out = new Uint8Array(n);
    if (b.length >= n) out.set(b.subarray(b.length - n));
    else out.set(b, n - b.length);
    return out;
  }
  G.toHex = function (x) { return hexOf(fromBuf(x, false)); };
  G.toWord = function (x) { return fit(fromBuf(x, true), 32); };
  G.toAddress = function (x) { return fit(fromBuf(x, true), 20); };
  G.toContract = function (from, nonce) { return buf(H.toContract(hexOf(fit(fromBuf(from, true), 20)), Number(nonce))); };
  G.toContract2 = function (from, salt, initcode) {
    return buf(H.toContract2(hexOf(fit(fromBuf(from, true), 20)), String(salt), hexOf(fromBuf(initcode, true))));
  };
  G.isPrecompiled = function (x) {
    var a = fit(fromBuf(x, true), 20);
    for (var i = 0; i < 19; i++) if (a[i] !== 0) return false;
    return a[19] >= 1 && a[19] <= H.precompiles;
  };
  G.slice = function (x, start, end) {
    var b = fromBuf(x, false);
    if (start < 0 || start > end || end > b.length) {
      throw new Error('Tracer accessed out of bound memory: available ' + b.length + ', offset ' + start + ', size ' + (end - start));
    }
    return b.slice(start, end);
  };

  // ---- the objects handed to step/fault/enter/exit/result ----
  var errOf = function (e) { return e === null ? undefined : e; };
  var log = {
    op: {
      toNumber: function () { return H.op(); },
      toString: function () { return H.opName(); },
      isPush: function () { var o = H.op(); return o >= 0x5f && o <= 0x7f; },
    },
    stack: {
      peek: function (i) { return new Big(BigInt(H.peek(Number(i)))); },
      length: function () { return H.stackLength(); },
    },
    memory: {
      slice: function (a, b) { return buf(H.memory(Number(a), Number(b))); },
      getUint: function (a) { return new Big(BigInt(H.memoryWord(Number(a)))); },
      length: function () { return H.memoryLength(); },
    },
    contract: {
      getAddress: function () { return buf(H.address()); },
      getCaller: function () { return buf(H.caller()); },
      getValue: function () { return new Big(BigInt(H.callValue())); },
      getInput: function () { return buf(H.callData()); },
    },
    getPC: function () { return H.pc(); },
    getGas: function () { return H.gas(); },
    getCost: function () { return H.cost(); },
    getDepth: function () { return H.depth(); },
    getRefund: function () { return H.refund(); },
    getError: function () { return errOf(H.error()); },
  };
  var db = {
    getBalance: function (a) { return new Big(BigInt(H.balance(hexOf(fromBuf(a, false))))); },
    getNonce: function (a) { return H.nonce(hexOf(fromBuf(a, false))); },
    getCode: function (a) { return buf(H.code(hexOf(fromBuf(a, false)))); },
    getState: function (a, k) { return buf(H.state(hexOf(fromBuf(a, false)), hexOf(fromBuf(k, false)))); },
    exists: function (a) { return H.exists(hexOf(fromBuf(a, false))); },
  };
  var frame = {
    getType: function () { return H.frameType(); },
    getFrom: function () { return buf(H.frameFrom()); },
    getTo: function () { return buf(H.frameTo()); },
    getInput: function () { return buf(H.frameInput()); },
    getGas: function () { return H.frameGas(); },
    getValue: function () { var v = H.frameValue(); return v === null ? undefined : new Big(BigInt(v)); },
  };
  var frameResult = {
    getGasUsed: function () { return H.resultGasUsed(); },
    getOutput: function () { return buf(H.resultOutput()); },
    getError: function () { return errOf(H.resultError()); },
  };

  var T;
  G.__install = function (t) {
    T = t;
    if (typeof T.result !== 'function') return 'trace object must expose a function result()';
    if (typeof T.fault !== 'function') return 'trace object must expose a function fault()';
    if ((typeof T.enter === 'function') !== (typeof T.exit === 'function')) {
      return 'trace object must expose either both or none of enter() and exit()';
    }
    return (typeof T.step === 'function' ? 1 : 0) + (typeof T.enter === 'function' ? 2 : 0);
  };
  G.__setup = function (cfg) { if (typeof T.setup === 'function') T.setup(cfg); };
  G.__step = function () { T.step(log, db); };
  G.__fault = function () { T.fault(log, db); };
  G.__enter = function () { T.enter(frame); };
  G.__exit = function () { T.exit(frameResult); };
  G.__result = function (c) {
    var ctx = {};
    ctx.type = c.type;
    ctx.from = bytesOfHex(c.from);
    ctx.to = bytesOfHex(c.to);
    ctx.input = bytesOfHex(c.input);
    ctx.gas = c.gas;
    ctx.gasPrice = new Big(BigInt(c.gasPrice));
    ctx.value = new Big(BigInt(c.value));
    ctx.block = c.block;
    ctx.coinbase = bytesOfHex(c.coinbase);
    if (c.output !== undefined) ctx.output = bytesOfHex(c.output);
    if (c.gasUsed !== undefined) ctx.gasUsed = c.gasUsed;
    if (c.error !== undefined) ctx.error = c.error;
    if (c.blockHash !== undefined) ctx.blockHash = bytesOfHex(c.blockHash);
    if (c.txHash !== undefined) { ctx.txHash = bytesOfHex(c.txHash); ctx.txIndex = c.txIndex; }
    var r = T.result(ctx, db);
    return JSON.stringify(r === undefined ? null : r);
  };
})();
`;
