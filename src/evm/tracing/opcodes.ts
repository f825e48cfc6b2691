/** Opcode names as geth prints them (core/vm/opcodes.go), for the Cancun instruction set. */

const NAMES: Readonly<Record<number, string>> = (() => {
  const t: Record<number, string> = {};
  const put = (start: number, names: string) => names.split(' ').forEach((n, i) => (t[start + i] = n));
  put(0x00, 'STOP ADD MUL SUB DIV SDIV MOD SMOD ADDMOD MULMOD EXP SIGNEXTEND');
  put(0x10, 'LT GT SLT SGT EQ ISZERO AND OR XOR NOT BYTE SHL SHR SAR');
  t[0x20] = 'KECCAK256';
  put(0x30, 'ADDRESS BALANCE ORIGIN CALLER CALLVALUE CALLDATALOAD CALLDATASIZE CALLDATACOPY CODESIZE CODECOPY GASPRICE EXTCODESIZE EXTCODECOPY RETURNDATASIZE RETURNDATACOPY EXTCODEHASH');
  put(0x40, 'BLOCKHASH COINBASE TIMESTAMP NUMBER DIFFICULTY GASLIMIT CHAINID SELFBALANCE BASEFEE BLOBHASH BLOBBASEFEE');
  put(0x50, 'POP MLOAD MSTORE MSTORE8 SLOAD SSTORE JUMP JUMPI PC MSIZE GAS JUMPDEST TLOAD TSTORE MCOPY PUSH0');
  for (let i = 1; i <= 32; i++) t[0x5f + i] = `PUSH${i}`;
  for (let i = 1; i <= 16; i++) t[0x7f + i] = `DUP${i}`;
  for (let i = 1; i <= 16; i++) t[0x8f + i] = `SWAP${i}`;
  put(0xa0, 'LOG0 LOG1 LOG2 LOG3 LOG4');
  put(0xf0, 'CREATE CALL CALLCODE RETURN DELEGATECALL CREATE2');
  t[0xfa] = 'STATICCALL';
  t[0xfd] = 'REVERT';
  t[0xfe] = 'INVALID';
  t[0xff] = 'SELFDESTRUCT';
  return t;
})();

export function opName(op: number): string {
  return NAMES[op] ?? `opcode 0x${op.toString(16)} not defined`;
}

export function isPush(op: number): boolean {
  return op >= 0x5f && op <= 0x7f;
}
