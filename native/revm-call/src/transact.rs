//! One transaction of a block executed by revm with the full mainnet validation and fee handling
//! (nonce, funds, fee cap, intrinsic gas, refund, the coinbase's priority fee, EIP-3651's warm coinbase,
//! EIP-7623's floor), against the state the callbacks answer, returning the result and the state diff
//! WITHOUT committing anything: the block executor (src/evm/revmtx.ts) applies the diff to its own
//! journal. What revm and ethereumjs might not do alike is answered "unsupported" and run by
//! ethereumjs instead (docs/architecture.md "One block").
//!
//! The answer is one Buffer (copied into V8's heap: no external buffer and finalizer per field, as
//! napi-rs' `Buffer` would make), its integers big-endian:
//!   status (1: 0 success, 1 revert, 2 halt, 3 invalid, 4 unsupported) ‖ gas used (8) ‖ reason length (2) ‖
//!   reason (UTF-8: the halt reason, the validation error, or what is unsupported) ‖ output length (4) ‖
//!   output ‖ logs bloom (256) ‖ log count (4) ‖ per log: address (20) ‖ topic count (1) ‖ topics (32
//!   each) ‖ data length (4) ‖ data ‖ then touched, accounts and slots, each as length (4) ‖ bytes:
//! - accounts: per touched account, address (20) ‖ flags (1: 1 created, 2 deleted) ‖ balance (32) ‖
//!   nonce (8) ‖ code hash (32) ‖ code length (4) ‖ code (only a created account's)
//! - slots: per slot written by SSTORE in a frame that did not fail, in the order first written:
//!   address (20) ‖ slot (32) ‖ new value (32)
//! - touched: 20 bytes per address the tx touched, in the order first seen (src/evm/touched.ts)
use crate::db::{Js, JsDb};
use crate::{address_of, block_env, u256_of, u64_of, with_engine, Engine};
use napi::bindgen_prelude::{Buffer, BufferSlice, FnArgs, Function};
use napi::{Env, JsValue};
use napi_derive::napi;
use revm::context::result::{EVMError, ExecutionResult};
use revm::context::transaction::{AccessList, AccessListItem};
use revm::context::{BlockEnv, CfgEnv, ContextTr, TxEnv};
use revm::handler::{ExecuteEvm, MainnetContext, MainnetEvm};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{Jumps, LoopControl};
use revm::interpreter::{CallInputs, CallOutcome, CreateInputs, CreateOutcome, InstructionResult, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{Address, Bytes, Log, TxKind, B256, KECCAK_EMPTY, U256};
use revm::{Context, InspectEvm, Inspector, MainBuilder, MainContext};
use std::cell::RefCell;
use std::str::FromStr;

const SSTORE: u8 = 0x55;
const BLOCKHASH: u8 = 0x40;
const SELFDESTRUCT: u8 = 0xff;

/// Solidity's console.log address, "console.log" in ASCII (forge-std src/console.sol)
const CONSOLE_ADDRESS: Address = Address::new(*b"\0\0\0\0\0\0\0\0\0console.log");

/// What the block executor needs from a run besides its result: the touched addresses, the slots
/// SSTORE wrote (kept even when the value did not change, as ethereumjs journals every SSTORE), and
/// why the tx must go to ethereumjs instead, if it must.
struct BlockWatch {
    /// collect touched addresses (the address index is on)
    collect: bool,
    touched: Vec<Address>,
    /// a call into the console.log address leaves the tx to ethereumjs (its listener prints the line)
    watch_console: bool,
    writes: Vec<(Address, U256)>,
    /// per open frame: the lengths of `touched` and `writes` at its start
    frames: Vec<(usize, usize)>,
    beneficiary: Option<Address>,
    unsupported: Option<&'static str>,
}

impl BlockWatch {
    fn new(collect: bool, watch_console: bool) -> BlockWatch {
        BlockWatch { collect, touched: Vec::new(), watch_console, writes: Vec::new(), frames: Vec::new(), beneficiary: None, unsupported: None }
    }

    /// a frame ended: a failed one's writes are undone (ethereumjs reverts their journal entries)
    fn end_frame(&mut self, result: InstructionResult) {
        let Some((touched, writes)) = self.frames.pop() else { return };
        if !result.is_ok() {
            self.writes.truncate(writes);
        }
        // ethereumjs checks the depth and the value before it makes the message (@ethereumjs/evm
        // interpreter.ts _baseCall), so such a call reports no message
        if matches!(result, InstructionResult::OutOfFunds | InstructionResult::CallTooDeep) {
            self.touched.truncate(touched);
        }
    }
}

/// Whether ethereumjs and revm may differ on this address as a precompile: everything from 0x0a on
/// (KZG, BLS12-381, P256VERIFY and any later one) runs on ethereumjs; 0x01–0x09 run here.
fn untrusted_precompile(a: &Address) -> bool {
    let b = a.as_slice();
    b[..18].iter().all(|&x| x == 0) && (b[18] != 0 || b[19] >= 0x0a)
}

impl<CTX: ContextTr> Inspector<CTX, EthInterpreter> for BlockWatch {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, _context: &mut CTX) {
        match interp.bytecode.opcode() {
            SSTORE => {
                if let Ok(key) = interp.stack.peek(0) {
                    self.writes.push((interp.input.target_address, key));
                }
            }
            // EIP-2935 changed what BLOCKHASH reads in ethereumjs from Prague on: left to it
            BLOCKHASH => self.unsupported = Some("BLOCKHASH"),
            SELFDESTRUCT => {
                self.beneficiary = interp.stack.peek(0).ok().map(|w| Address::from_word(B256::from(w.to_be_bytes::<32>())));
            }
            _ => {}
        }
    }

    fn step_end(&mut self, interp: &mut Interpreter<EthInterpreter>, _context: &mut CTX) {
        // ethereumjs' collector sees a SELFDESTRUCT's beneficiary only when the opcode ran (touched.ts)
        if let Some(b) = self.beneficiary.take() {
            if self.collect && interp.bytecode.instruction_result() == Some(InstructionResult::SelfDestruct) {
                self.touched.push(b);
            }
        }
    }

    fn call(&mut self, _context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if untrusted_precompile(&inputs.bytecode_address) || untrusted_precompile(&inputs.target_address) {
            self.unsupported = Some("precompile");
        }
        if self.watch_console && (inputs.target_address == CONSOLE_ADDRESS || inputs.bytecode_address == CONSOLE_ADDRESS) {
            self.unsupported = Some("console.log");
        }
        self.frames.push((self.touched.len(), self.writes.len()));
        if self.collect {
            self.touched.push(inputs.caller);
            self.touched.push(inputs.target_address);
            if inputs.bytecode_address != inputs.target_address {
                self.touched.push(inputs.bytecode_address);
            }
        }
        None
    }

    fn call_end(&mut self, _context: &mut CTX, _inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.end_frame(outcome.result.result);
    }

    fn create(&mut self, _context: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.frames.push((self.touched.len(), self.writes.len()));
        if self.collect {
            self.touched.push(inputs.caller());
        }
        None
    }

    fn create_end(&mut self, _context: &mut CTX, _inputs: &CreateInputs, outcome: &mut CreateOutcome) {
        let ok = outcome.result.result.is_ok();
        self.end_frame(outcome.result.result);
        if let (true, true, Some(a)) = (self.collect, ok, outcome.address) {
            self.touched.push(a);
        }
    }
}

type BlockEvm = MainnetEvm<MainnetContext<JsDb>, BlockWatch>;

/// the block txs' revm (lib.rs Engine), with every validation on
fn block_evm(cfg: CfgEnv) -> BlockEvm {
    Context::mainnet().with_db(JsDb::new()).with_cfg(cfg).build_mainnet_with_inspector(BlockWatch::new(false, false))
}

thread_local! {
    static BLOCK_ENGINE: RefCell<Option<Engine<BlockWatch>>> = const { RefCell::new(None) };
}

/// One block tx and its block's environment.
#[napi(object)]
pub struct TxInput<'a> {
    /// hardfork name as revm spells it
    pub spec: String,
    pub chain_id: f64,
    /// 0, 1 or 2
    pub tx_type: u32,
    pub from: BufferSlice<'a>,
    /// absent: contract creation
    pub to: Option<BufferSlice<'a>>,
    pub nonce: f64,
    /// at most 32 bytes each
    pub value: BufferSlice<'a>,
    pub data: BufferSlice<'a>,
    pub gas: f64,
    /// gasPrice (types 0, 1) or maxFeePerGas (type 2)
    pub gas_price: BufferSlice<'a>,
    /// maxPriorityFeePerGas (type 2)
    pub priority_fee: Option<BufferSlice<'a>>,
    /// per entry: address (20) ‖ key count (4) ‖ keys (32 each)
    pub access_list: BufferSlice<'a>,
    pub number: f64,
    pub timestamp: f64,
    pub coinbase: BufferSlice<'a>,
    pub base_fee: BufferSlice<'a>,
    pub gas_limit: f64,
    pub prevrandao: BufferSlice<'a>,
    /// collect the touched addresses
    pub touched: bool,
    /// leave txs that call console.log to ethereumjs
    pub console: bool,
}

fn access_list_of(b: &[u8]) -> napi::Result<AccessList> {
    let bad = || napi::Error::from_reason("accessList: malformed");
    let mut items = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let head = b.get(i..i + 24).ok_or_else(bad)?;
        let n = u32::from_be_bytes(head[20..24].try_into().unwrap()) as usize;
        let keys = b.get(i + 24..i + 24 + n * 32).ok_or_else(bad)?;
        items.push(AccessListItem {
            address: Address::from_slice(&head[..20]),
            storage_keys: keys.chunks_exact(32).map(B256::from_slice).collect(),
        });
        i += 24 + n * 32;
    }
    Ok(AccessList(items))
}

fn tx_env(input: &TxInput, chain_id: u64) -> napi::Result<TxEnv> {
    let mut tx = TxEnv::default();
    tx.tx_type = u8::try_from(input.tx_type).ok().filter(|t| *t <= 2).ok_or_else(|| napi::Error::from_reason("txType: not 0, 1 or 2"))?;
    tx.caller = address_of(&input.from, "from")?;
    tx.kind = match &input.to {
        Some(to) => TxKind::Call(address_of(to, "to")?),
        None => TxKind::Create,
    };
    tx.nonce = u64_of(input.nonce, "nonce")?;
    tx.value = u256_of(&input.value, "value")?;
    tx.data = Bytes::copy_from_slice(&input.data);
    tx.gas_limit = u64_of(input.gas, "gas")?;
    let fee = |b: &[u8], what: &str| -> napi::Result<u128> { u128::try_from(u256_of(b, what)?).map_err(|_| napi::Error::from_reason(format!("{what}: above 2^128"))) };
    tx.gas_price = fee(&input.gas_price, "gasPrice")?;
    tx.gas_priority_fee = match &input.priority_fee {
        Some(p) => Some(fee(p, "priorityFee")?),
        None => None,
    };
    tx.access_list = access_list_of(&input.access_list)?;
    tx.chain_id = Some(chain_id);
    Ok(tx)
}

/// Validates and executes one block tx against the callbacks' state; nothing is written anywhere.
#[napi]
pub fn transact<'a>(
    env: Env,
    input: TxInput<'a>,
    account: Function<'a, Buffer, Option<Buffer>>,
    code: Function<'a, Buffer, Buffer>,
    storage: Function<'a, FnArgs<(Buffer, Buffer)>, Buffer>,
    block_hash: Function<'a, f64, Buffer>,
) -> napi::Result<BufferSlice<'a>> {
    let spec = SpecId::from_str(&input.spec).map_err(|_| napi::Error::from_reason(format!("unknown hardfork {}", input.spec)))?;
    let chain_id = u64_of(input.chain_id, "chainId")?;
    let block = block_env(input.number, input.timestamp, &input.coinbase, &input.base_fee, input.gas_limit, &input.prevrandao)?;
    let tx = tx_env(&input, chain_id)?;
    let js = Js { env: env.raw(), account: account.raw(), code: code.raw(), storage: storage.raw(), block_hash: block_hash.raw() };
    let watch = BlockWatch::new(input.touched, input.console);
    let out = with_engine(&BLOCK_ENGINE, spec, chain_id, block_evm, |evm| run(evm, js, block, tx, watch))?;
    BufferSlice::copy_from(&env, out)
}

const SUCCESS: u8 = 0;
const REVERT: u8 = 1;
const HALT: u8 = 2;
const INVALID: u8 = 3;
const UNSUPPORTED: u8 = 4;

fn put_len(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// the answer's head: status, gas used, reason, output, bloom and logs (the layout in the module comment)
fn head(status: u8, gas_used: u64, reason: &str, output: &[u8], logs: &[Log]) -> Vec<u8> {
    let mut out = Vec::with_capacity(600);
    out.push(status);
    out.extend_from_slice(&gas_used.to_be_bytes());
    let reason = &reason.as_bytes()[..reason.len().min(u16::MAX as usize)];
    out.extend_from_slice(&(reason.len() as u16).to_be_bytes());
    out.extend_from_slice(reason);
    put_len(&mut out, output);
    out.extend_from_slice(revm::primitives::alloy_primitives::logs_bloom(logs.iter()).as_slice());
    out.extend_from_slice(&(logs.len() as u32).to_be_bytes());
    for l in logs {
        out.extend_from_slice(l.address.as_slice());
        out.push(l.data.topics().len() as u8);
        for t in l.data.topics() {
            out.extend_from_slice(t.as_slice());
        }
        put_len(&mut out, &l.data.data);
    }
    out
}

/// an answer with no result (invalid, unsupported)
fn bare(status: u8, reason: &str) -> Vec<u8> {
    let mut out = head(status, 0, reason, &[], &[]);
    out.extend_from_slice(&[0; 12]);
    out
}

fn run(evm: &mut BlockEvm, js: Js, block: BlockEnv, tx: TxEnv, watch: BlockWatch) -> napi::Result<Vec<u8>> {
    evm.ctx.journaled_state.database.js = Some(js);
    evm.ctx.journaled_state.database.saw_delegation = false;
    evm.ctx.block = block;
    *evm.ctx.error() = Ok(());
    evm.inspector = watch;
    let outcome = evm.inspect_one_tx(tx);
    let state = evm.finalize();
    evm.ctx.journaled_state.database.js = None;
    let watch = std::mem::replace(&mut evm.inspector, BlockWatch::new(false, false));
    let result = match outcome {
        Ok(r) => r,
        Err(EVMError::Transaction(e)) => return Ok(bare(INVALID, &e.to_string())),
        Err(EVMError::Header(e)) => return Ok(bare(INVALID, &e.to_string())),
        Err(e) => return Err(napi::Error::from_reason(e.to_string())),
    };
    if let Some(why) = watch.unsupported {
        return Ok(bare(UNSUPPORTED, why));
    }
    if evm.ctx.journaled_state.database.saw_delegation {
        return Ok(bare(UNSUPPORTED, "EIP-7702 delegation"));
    }

    let mut accounts = Vec::new();
    for (address, acc) in state.iter() {
        if !acc.is_touched() {
            continue;
        }
        let created = acc.is_created();
        let deleted = acc.is_selfdestructed() || acc.is_empty();
        accounts.extend_from_slice(address.as_slice());
        accounts.push(created as u8 | (deleted as u8) << 1);
        accounts.extend_from_slice(&acc.info.balance.to_be_bytes::<32>());
        accounts.extend_from_slice(&acc.info.nonce.to_be_bytes());
        accounts.extend_from_slice(acc.info.code_hash.as_slice());
        let code: &[u8] = match (&acc.info.code, created && acc.info.code_hash != KECCAK_EMPTY) {
            (Some(c), true) => c.original_byte_slice(),
            _ => &[],
        };
        accounts.extend_from_slice(&(code.len() as u32).to_be_bytes());
        accounts.extend_from_slice(code);
    }
    let mut slots = Vec::with_capacity(watch.writes.len() * 84);
    let mut seen = std::collections::HashSet::with_capacity(watch.writes.len());
    for (address, key) in &watch.writes {
        if !seen.insert((*address, *key)) {
            continue;
        }
        let Some(value) = state.get(address).and_then(|a| a.storage.get(key)).map(|s| s.present_value()) else {
            return Ok(bare(UNSUPPORTED, "a written slot is not in the state"));
        };
        slots.extend_from_slice(address.as_slice());
        slots.extend_from_slice(&key.to_be_bytes::<32>());
        slots.extend_from_slice(&value.to_be_bytes::<32>());
    }
    let mut touched = Vec::with_capacity(watch.touched.len() * 20);
    let mut first = std::collections::HashSet::with_capacity(watch.touched.len());
    for a in &watch.touched {
        if first.insert(*a) {
            touched.extend_from_slice(a.as_slice());
        }
    }

    let mut out = match result {
        ExecutionResult::Success { gas, logs, output, .. } => head(SUCCESS, gas.tx_gas_used(), "", output.data(), &logs),
        ExecutionResult::Revert { gas, logs, output } => head(REVERT, gas.tx_gas_used(), "", &output, &logs),
        ExecutionResult::Halt { reason, gas, logs } => head(HALT, gas.tx_gas_used(), &format!("{reason:?}"), &[], &logs),
    };
    put_len(&mut out, &touched);
    put_len(&mut out, &accounts);
    put_len(&mut out, &slots);
    Ok(out)
}
