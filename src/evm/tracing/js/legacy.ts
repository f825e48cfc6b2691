/**
 * The JS tracers geth bundles (eth/tracers/js/internal/tracers), written for ferry: same names
 * (geth camel-cases the file names), same output formats. They run in the sandbox like any
 * client-supplied tracer.
 */

const opcountTracer = `{
  n: 0,
  step: function (log, db) { this.n += 1; },
  fault: function (log, db) {},
  result: function (ctx, db) { return this.n; }
}`;

const noopTracerLegacy = `{
  step: function (log, db) {},
  fault: function (log, db) {},
  result: function (ctx, db) { return {}; }
}`;

const unigramTracer = `{
  counts: {},
  step: function (log, db) {
    var name = log.op.toString();
    this.counts[name] = (this.counts[name] || 0) + 1;
  },
  fault: function (log, db) {},
  result: function (ctx) { return this.counts; }
}`;

const bigramTracer = `{
  counts: {},
  prev: '',
  prevDepth: 0,
  step: function (log, db) {
    var name = log.op.toString();
    var depth = log.getDepth();
    if (depth === this.prevDepth) {
      var key = this.prev + '-' + name;
      this.counts[key] = (this.counts[key] || 0) + 1;
    }
    this.prev = name;
    this.prevDepth = depth;
  },
  fault: function (log, db) {},
  result: function (ctx) { return this.counts; }
}`;

const trigramTracer = `{
  counts: {},
  window: ['', ''],
  prevDepth: 0,
  step: function (log, db) {
    var depth = log.getDepth();
    if (depth !== this.prevDepth) {
      this.window = ['', ''];
      this.prevDepth = depth;
      return;
    }
    var name = log.op.toString();
    var key = this.window[0] + '-' + this.window[1] + '-' + name;
    this.counts[key] = (this.counts[key] || 0) + 1;
    this.window = [this.window[1], name];
  },
  fault: function (log, db) {},
  result: function (ctx) { return this.counts; }
}`;

const fourByteTracerLegacy = `{
  ids: {},
  // stack position of the input offset, by call opcode
  inputAt: { CALL: 3, CALLCODE: 3, DELEGATECALL: 2, STATICCALL: 2 },
  count: function (selector, size) {
    var key = toHex(selector) + '-' + size;
    this.ids[key] = (this.ids[key] || 0) + 1;
  },
  step: function (log, db) {
    var at = this.inputAt[log.op.toString()];
    if (at === undefined) return;
    if (isPrecompiled(toAddress(log.stack.peek(1).toString(16)))) return;
    var size = log.stack.peek(at + 1).valueOf();
    if (size < 4) return;
    var offset = log.stack.peek(at).valueOf();
    this.count(log.memory.slice(offset, offset + 4), size - 4);
  },
  fault: function (log, db) {},
  result: function (ctx) {
    if (ctx.input.length >= 4) this.count(slice(ctx.input, 0, 4), ctx.input.length - 4);
    return this.ids;
  }
}`;

const callTracerLegacy = `{
  frames: [{}],
  entered: false,
  hex: function (n) { return '0x' + bigInt(n).toString(16); },
  attach: function (call) {
    var parent = this.frames[this.frames.length - 1];
    (parent.calls = parent.calls || []).push(call);
  },
  step: function (log, db) {
    if (log.getError() !== undefined) { this.fault(log, db); return; }
    var code = log.op.toNumber();
    var system = (code & 0xf0) === 0xf0;
    var name = system ? log.op.toString() : '';
    if (name === 'CREATE' || name === 'CREATE2') {
      var start = log.stack.peek(1).valueOf();
      this.frames.push({
        type: name,
        from: toHex(log.contract.getAddress()),
        input: toHex(log.memory.slice(start, start + log.stack.peek(2).valueOf())),
        gasIn: log.getGas(),
        gasCost: log.getCost(),
        value: '0x' + log.stack.peek(0).toString(16)
      });
      this.entered = true;
      return;
    }
    if (name === 'SELFDESTRUCT') {
      this.attach({
        type: name,
        from: toHex(log.contract.getAddress()),
        to: toHex(toAddress(log.stack.peek(0).toString(16))),
        gasIn: log.getGas(),
        gasCost: log.getCost(),
        value: '0x' + db.getBalance(log.contract.getAddress()).toString(16)
      });
      return;
    }
    if (name === 'CALL' || name === 'CALLCODE' || name === 'DELEGATECALL' || name === 'STATICCALL') {
      var to = toAddress(log.stack.peek(1).toString(16));
      if (isPrecompiled(to)) return;
      var shift = name === 'DELEGATECALL' || name === 'STATICCALL' ? 0 : 1;
      var inStart = log.stack.peek(2 + shift).valueOf();
      var call = {
        type: name,
        from: toHex(log.contract.getAddress()),
        to: toHex(to),
        input: toHex(log.memory.slice(inStart, inStart + log.stack.peek(3 + shift).valueOf())),
        gasIn: log.getGas(),
        gasCost: log.getCost(),
        outOff: log.stack.peek(4 + shift).valueOf(),
        outLen: log.stack.peek(5 + shift).valueOf()
      };
      if (shift === 1) call.value = '0x' + log.stack.peek(2).toString(16);
      this.frames.push(call);
      this.entered = true;
      return;
    }
    if (this.entered) {
      // first step inside the callee: its real gas allowance (after the 63/64 rule and stipend)
      if (log.getDepth() >= this.frames.length) this.frames[this.frames.length - 1].gas = log.getGas();
      this.entered = false;
    }
    if (name === 'REVERT') { this.frames[this.frames.length - 1].error = 'execution reverted'; return; }
    if (log.getDepth() !== this.frames.length - 1) return;
    // back in the caller: the call on top of the stack returned
    var done = this.frames.pop();
    var ret = log.stack.peek(0);
    if (done.type === 'CREATE' || done.type === 'CREATE2') {
      done.gasUsed = this.hex(done.gasIn - done.gasCost - log.getGas());
      if (!ret.equals(0)) {
        done.to = toHex(toAddress(ret.toString(16)));
        done.output = toHex(db.getCode(toAddress(ret.toString(16))));
      } else if (done.error === undefined) {
        done.error = 'internal failure';
      }
    } else {
      if (done.gas !== undefined) done.gasUsed = this.hex(done.gasIn - done.gasCost + done.gas - log.getGas());
      if (!ret.equals(0)) done.output = toHex(log.memory.slice(done.outOff, done.outOff + done.outLen));
      else if (done.error === undefined) done.error = 'internal failure';
    }
    delete done.gasIn; delete done.gasCost; delete done.outOff; delete done.outLen;
    if (done.gas !== undefined) done.gas = this.hex(done.gas);
    this.attach(done);
  },
  fault: function (log, db) {
    var top = this.frames[this.frames.length - 1];
    if (top.error !== undefined) return;
    var failed = this.frames.pop();
    failed.error = log.getError();
    if (failed.gas !== undefined) { failed.gas = this.hex(failed.gas); failed.gasUsed = failed.gas; }
    delete failed.gasIn; delete failed.gasCost; delete failed.outOff; delete failed.outLen;
    if (this.frames.length > 0) { this.attach(failed); return; }
    this.frames.push(failed);
  },
  result: function (ctx, db) {
    var top = {
      type: ctx.type,
      from: toHex(ctx.from),
      to: toHex(ctx.to),
      value: '0x' + ctx.value.toString(16),
      gas: this.hex(ctx.gas),
      gasUsed: this.hex(ctx.gasUsed),
      input: toHex(ctx.input),
      output: toHex(ctx.output)
    };
    if (this.frames[0].calls !== undefined) top.calls = this.frames[0].calls;
    if (this.frames[0].error !== undefined) top.error = this.frames[0].error;
    else if (ctx.error !== undefined) top.error = ctx.error;
    if (top.error !== undefined && (top.error !== 'execution reverted' || top.output === '0x')) delete top.output;
    return this.ordered(top);
  },
  ordered: function (c) {
    var keys = ['type', 'from', 'to', 'value', 'gas', 'gasUsed', 'input', 'output', 'error', 'calls'];
    var out = {};
    for (var i = 0; i < keys.length; i++) if (c[keys[i]] !== undefined) out[keys[i]] = c[keys[i]];
    if (out.calls !== undefined) out.calls = out.calls.map(this.ordered, this);
    return out;
  }
}`;

const prestateTracerLegacy = `{
  accounts: null,
  touch: function (addr, db) {
    var key = toHex(addr);
    if (this.accounts[key] !== undefined) return;
    this.accounts[key] = {
      balance: '0x' + db.getBalance(addr).toString(16),
      nonce: db.getNonce(addr),
      code: toHex(db.getCode(addr)),
      storage: {}
    };
  },
  touchSlot: function (addr, slot, db) {
    var acct = this.accounts[toHex(addr)];
    var key = toHex(slot);
    if (acct.storage[key] === undefined) acct.storage[key] = toHex(db.getState(addr, slot));
  },
  step: function (log, db) {
    if (this.accounts === null) {
      this.accounts = {};
      // the callee's balance already includes the tx value here; result() takes it back out
      this.touch(log.contract.getAddress(), db);
    }
    var name = log.op.toString();
    if (name === 'EXTCODECOPY' || name === 'EXTCODESIZE' || name === 'EXTCODEHASH' || name === 'BALANCE') {
      this.touch(toAddress(log.stack.peek(0).toString(16)), db);
    } else if (name === 'CREATE') {
      var creator = log.contract.getAddress();
      this.touch(toContract(creator, db.getNonce(creator)), db);
    } else if (name === 'CREATE2') {
      var start = log.stack.peek(1).valueOf();
      var code = log.memory.slice(start, start + log.stack.peek(2).valueOf());
      this.touch(toContract2(log.contract.getAddress(), log.stack.peek(3).toString(16), code), db);
    } else if (name === 'CALL' || name === 'CALLCODE' || name === 'DELEGATECALL' || name === 'STATICCALL') {
      this.touch(toAddress(log.stack.peek(1).toString(16)), db);
    } else if (name === 'SSTORE' || name === 'SLOAD') {
      this.touchSlot(log.contract.getAddress(), toWord(log.stack.peek(0).toString(16)), db);
    }
  },
  fault: function (log, db) {},
  result: function (ctx, db) {
    if (this.accounts === null) {
      this.accounts = {};
      this.touch(ctx.to, db);
    }
    this.touch(ctx.from, db);
    var from = this.accounts[toHex(ctx.from)];
    var to = this.accounts[toHex(ctx.to)];
    to.balance = '0x' + bigInt(to.balance.slice(2), 16).subtract(ctx.value).toString(16);
    from.balance = '0x' + bigInt(from.balance.slice(2), 16).add(ctx.value).add(ctx.gasPrice.multiply(ctx.gasUsed)).toString(16);
    from.nonce -= 1;
    if (ctx.type === 'CREATE') delete this.accounts[toHex(ctx.to)];
    return this.accounts;
  }
}`;

const evmdisTracer = `{
  frames: [{ ops: [] }],
  // items each opcode leaves on the stack, for reading the previous op's results
  pushes: (function () {
    var n = {};
    var set = function (from, to, v) { for (var i = from; i <= to; i++) n[i] = v; };
    set(0x00, 0x00, 0); set(0x01, 0x0b, 1); set(0x10, 0x1a, 1); set(0x20, 0x20, 1);
    set(0x30, 0x36, 1); set(0x37, 0x37, 0); set(0x38, 0x38, 1); set(0x39, 0x39, 0); set(0x3a, 0x3b, 1); set(0x3c, 0x3c, 0);
    set(0x40, 0x45, 1); set(0x50, 0x50, 0); set(0x51, 0x51, 1); set(0x52, 0x53, 0); set(0x54, 0x54, 1); set(0x55, 0x57, 0);
    set(0x58, 0x5a, 1); set(0x5b, 0x5b, 0); set(0x60, 0x7f, 1);
    for (var d = 0; d < 16; d++) { n[0x80 + d] = d + 2; n[0x90 + d] = d + 2; }
    set(0xa0, 0xa4, 0); set(0xf0, 0xf2, 1); set(0xf3, 0xf4, 0); n[0xff] = 0;
    return n;
  })(),
  step: function (log, db) {
    var frame = this.frames[this.frames.length - 1];
    var error = log.getError();
    if (error) { frame.error = error; return; }
    if (log.getDepth() !== this.frames.length) { this.frames = this.frames.slice(0, log.getDepth()); return; }
    var info = { op: log.op.toNumber(), depth: log.getDepth(), result: [] };
    var prev = frame.ops[frame.ops.length - 1];
    if (prev !== undefined) {
      for (var i = 0; i < (this.pushes[prev.op] || 0); i++) prev.result.push(log.stack.peek(i).toString(16));
    }
    var name = log.op.toString();
    if (name === 'CALL' || name === 'CALLCODE') {
      var s = log.stack.peek(3).valueOf();
      info.gas = log.stack.peek(0).valueOf();
      info.to = log.stack.peek(1).toString(16);
      info.value = log.stack.peek(2).toString();
      info.input = log.memory.slice(s, s + log.stack.peek(4).valueOf());
      info.error = null; info['return'] = null; info.ops = [];
      this.frames.push(info);
    } else if (name === 'DELEGATECALL' || name === 'STATICCALL') {
      var t = log.stack.peek(2).valueOf();
      info.op = name;
      info.gas = log.stack.peek(0).valueOf();
      info.to = log.stack.peek(1).toString(16);
      info.input = log.memory.slice(t, t + log.stack.peek(3).valueOf());
      info.error = null; info['return'] = null; info.ops = [];
      this.frames.push(info);
    } else if (name === 'RETURN' || name === 'REVERT') {
      var o = log.stack.peek(0).valueOf();
      frame['return'] = log.memory.slice(o, o + log.stack.peek(1).valueOf());
    } else if (name === 'STOP' || name === 'SELFDESTRUCT') {
      frame['return'] = log.memory.slice(0, 0);
    } else if (name === 'JUMPDEST') {
      info.pc = log.getPC();
    }
    if (log.op.isPush()) info.len = log.op.toNumber() - 0x5e;
    frame.ops.push(info);
  },
  fault: function (log, db) {},
  result: function () { return this.frames[0].ops; }
}`;

/** name → source, as geth registers them */
export const LEGACY_TRACERS: Readonly<Record<string, string>> = {
  opcountTracer,
  noopTracerLegacy,
  unigramTracer,
  bigramTracer,
  trigramTracer,
  '4byteTracerLegacy': fourByteTracerLegacy,
  callTracerLegacy,
  prestateTracerLegacy,
  evmdisTracer,
};
