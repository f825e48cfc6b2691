/**
 * Jump-destination analysis cached per contract code. ethereumjs' interpreter re-analyses the code of
 * every call frame (valid JUMPDESTs, decoded PUSH immediates, the opcode table per byte): for a
 * `balanceOf` that is most of the work besides state reads. The result depends only on the code bytes
 * and the EVM's opcode table, so it is kept per EVM, keyed by the code array. The flat state layer hands
 * out one array per code hash while its code cache holds it, so a WeakMap keeps exactly the analyses of
 * cached code (no bound of its own to tune: the code cache's bytes bound it).
 *
 * The Interpreter class is not exported by @ethereumjs/evm; its module is loaded by file URL next to
 * the package entry point (pinned version: 10.1.3).
 */
interface Analysis {
  jumps: Uint8Array;
  pushes: Record<number, bigint>;
  opcodesCached: unknown[];
}

interface InterpreterProto {
  _getValidJumpDestinations(this: { _evm: object }, code: Uint8Array): Analysis;
  __ferryJumpCache?: true;
}

const perEvm = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();

async function install(): Promise<void> {
  const entry = import.meta.resolve('@ethereumjs/evm');
  const mod = (await import(new URL('./interpreter.js', entry).href)) as { Interpreter?: { prototype: InterpreterProto } };
  const proto = mod.Interpreter?.prototype;
  if (!proto || typeof proto._getValidJumpDestinations !== 'function' || proto.__ferryJumpCache) return;
  const analyse = proto._getValidJumpDestinations;
  proto._getValidJumpDestinations = function (code: Uint8Array): Analysis {
    let byCode = perEvm.get(this._evm);
    if (byCode === undefined) {
      byCode = new WeakMap();
      perEvm.set(this._evm, byCode);
    }
    let a = byCode.get(code);
    if (a === undefined) {
      a = analyse.call(this, code);
      byCode.set(code, a);
    }
    return a;
  };
  proto.__ferryJumpCache = true;
}

await install();
