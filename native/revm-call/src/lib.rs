//! ferry-revm-call: one eth_call executed by revm (github:bluealloy/revm, pinned in Cargo.toml), with the
//! state read through synchronous JavaScript callbacks (the call worker answers them from the flat state,
//! see docs/benchmarks.md "revm prototype"). Nothing is committed: the call's state changes are dropped.
//! Block txs run in transact.rs; Keccak-256 and secp256k1 recovery for the JavaScript side in crypto.rs.
//!
//! Wire formats (all byte strings are big-endian Buffers):
//! - account(address20) -> null | 72 bytes: balance (32) ‖ nonce (8) ‖ code hash (32)
//! - code(hash32) -> Buffer (the bytecode; empty if unknown)
//! - storage(address20, slot32) -> 32 bytes
//! - blockHash(number as f64) -> 32 bytes
use napi::bindgen_prelude::{Buffer, BufferSlice, FnArgs, Function};
use napi::{Env, JsValue};
use napi_derive::napi;
use revm::context::result::{EVMError, ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, ContextTr, TxEnv};
use revm::handler::{ExecuteEvm, MainnetContext, MainnetEvm};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::{CallInputs, CallOutcome, InstructionResult, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{Address, Bytes, TxKind, B256, U256};
use revm::{Context, InspectEvm, Inspector, MainBuilder, MainContext};
use std::cell::RefCell;
use std::thread::LocalKey;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

mod crypto;
mod db;
mod transact;
use db::{Js, JsDb};

/// steps between two looks at the clock (a look is a vDSO clock read, tens of ns)
const STEPS_PER_CLOCK_CHECK: u32 = 1024;

/// Solidity's console.log address, "console.log" in ASCII (forge-std src/console.sol)
const CONSOLE_ADDRESS: Address = Address::new(*b"\0\0\0\0\0\0\0\0\0console.log");

/// The call's watch: stops it at its deadline (json-rpc.evm-timeout, docs/configuration.md) by halting
/// every frame at its next step once the clock passed it, and keeps the input of each console.log call
/// when asked (evm/consolelog.ts decodes them).
struct Watch {
    /// epoch ms; not finite: no deadline
    deadline_ms: f64,
    steps: u32,
    timed_out: bool,
    console: Option<Vec<Bytes>>,
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

impl<CTX: ContextTr> Inspector<CTX, EthInterpreter> for Watch {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, _context: &mut CTX) {
        if self.timed_out {
            // an outer frame resumed after an inner one was stopped: stop it too
            interp.halt(InstructionResult::OutOfGas);
            return;
        }
        self.steps += 1;
        if self.steps < STEPS_PER_CLOCK_CHECK || !self.deadline_ms.is_finite() {
            return;
        }
        self.steps = 0;
        if now_ms() >= self.deadline_ms {
            self.timed_out = true;
            interp.halt(InstructionResult::OutOfGas);
        }
    }

    fn call(&mut self, context: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if let Some(lines) = self.console.as_mut() {
            if inputs.target_address == CONSOLE_ADDRESS && lines.len() < MAX_CONSOLE_LINES {
                lines.push(inputs.input.bytes(context));
            }
        }
        None
    }
}

/// console.log calls kept per eth_call; later ones are dropped (each call of a loop would otherwise grow it)
const MAX_CONSOLE_LINES: usize = 10_000;

type CallEvm = MainnetEvm<MainnetContext<JsDb>, Watch>;

/// One revm kept per thread (a call worker, the chain thread) and used call after call: building one per
/// call allocated its eight preallocated frames (each a 32 KiB stack) and the instruction table every
/// time, which was most of the addon's time for a short call. Rebuilt when the hardfork or the chain id
/// changes. `I`: the inspector (calls: Watch; block txs: transact.rs BlockWatch).
pub(crate) struct Engine<I> {
    spec: SpecId,
    chain_id: u64,
    evm: MainnetEvm<MainnetContext<JsDb>, I>,
}

/// `f` on the thread's kept engine in `key`, made by `make` when there is none for these rules; a
/// callback that called back into the addon gets an engine of its own.
pub(crate) fn with_engine<I: 'static, R>(
    key: &'static LocalKey<RefCell<Option<Engine<I>>>>,
    spec: SpecId,
    chain_id: u64,
    make: fn(CfgEnv) -> MainnetEvm<MainnetContext<JsDb>, I>,
    f: impl FnOnce(&mut MainnetEvm<MainnetContext<JsDb>, I>) -> R,
) -> R {
    let mut cfg = CfgEnv::new_with_spec(spec);
    cfg.chain_id = chain_id;
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            if !matches!(kept.as_ref(), Some(e) if e.spec == spec && e.chain_id == chain_id) {
                *kept = Some(Engine { spec, chain_id, evm: make(cfg) });
            }
            f(&mut kept.as_mut().unwrap().evm)
        }
        Err(_) => f(&mut make(cfg)),
    })
}

fn call_evm(mut cfg: CfgEnv) -> CallEvm {
    // eth_call: no nonce check, and the block's gas limit does not bound the call (go-ethereum
    // internal/ethapi/api.go doCall sets NoBaseFee and skips the nonce check the same way)
    cfg.disable_nonce_check = true;
    cfg.disable_block_gas_limit = true;
    cfg.disable_base_fee = true;
    cfg.tx_gas_limit_cap = Some(u64::MAX);
    let watch = Watch { deadline_ms: f64::INFINITY, steps: 0, timed_out: false, console: None };
    Context::mainnet().with_db(JsDb::new()).with_cfg(cfg).build_mainnet_with_inspector(watch)
}

thread_local! {
    static ENGINE: RefCell<Option<Engine<Watch>>> = const { RefCell::new(None) };
}

/// One call's transaction and block environment. The byte fields are read in place (BufferSlice: no
/// N-API reference per field, as napi-rs' `Buffer` would make).
#[napi(object)]
pub struct CallInput<'a> {
    /// hardfork name as revm spells it ("Cancun", "Prague", ...)
    pub spec: String,
    pub chain_id: f64,
    pub from: BufferSlice<'a>,
    /// absent: contract creation
    pub to: Option<BufferSlice<'a>>,
    /// 32 bytes
    pub value: BufferSlice<'a>,
    pub data: BufferSlice<'a>,
    pub gas: f64,
    /// 32 bytes; the effective gas price the caller asked for (0 when none)
    pub gas_price: BufferSlice<'a>,
    pub number: f64,
    pub timestamp: f64,
    pub coinbase: BufferSlice<'a>,
    pub base_fee: BufferSlice<'a>,
    pub gas_limit: f64,
    pub prevrandao: BufferSlice<'a>,
    /// epoch ms at which the call stops with status "timeout"; not finite: never
    pub deadline: f64,
    /// keep the input of each console.log call (CallOutput.console)
    pub console: bool,
}

#[napi(object)]
pub struct CallLog {
    pub address: Buffer,
    pub topics: Vec<Buffer>,
    pub data: Buffer,
}

#[napi(object)]
pub struct CallOutput {
    /// "success" | "revert" | "halt" | "invalid" | "timeout"
    pub status: String,
    /// the halt reason or the validation error, as revm names it
    pub reason: String,
    pub output: Buffer,
    pub gas_used: f64,
    pub logs: Vec<CallLog>,
    /// the created address for a successful creation
    pub created: Option<Buffer>,
    /// the input of each console.log call, in order (only when CallInput.console)
    pub console: Vec<Buffer>,
}

pub(crate) fn u256_of(b: &[u8], what: &str) -> napi::Result<U256> {
    if b.len() > 32 {
        return Err(napi::Error::from_reason(format!("{what}: more than 32 bytes")));
    }
    Ok(U256::from_be_slice(b))
}

pub(crate) fn address_of(b: &[u8], what: &str) -> napi::Result<Address> {
    if b.len() != 20 {
        return Err(napi::Error::from_reason(format!("{what}: expected 20 bytes")));
    }
    Ok(Address::from_slice(b))
}

pub(crate) fn u64_of(n: f64, what: &str) -> napi::Result<u64> {
    if !(n >= 0.0 && n <= 9_007_199_254_740_991.0 && n.fract() == 0.0) {
        return Err(napi::Error::from_reason(format!("{what}: not a safe integer")));
    }
    Ok(n as u64)
}

/// A block's environment from the fields a call's or a tx's input gives.
pub(crate) fn block_env(number: f64, timestamp: f64, coinbase: &[u8], base_fee: &[u8], gas_limit: f64, prevrandao: &[u8]) -> napi::Result<BlockEnv> {
    let mut block = BlockEnv::default();
    block.number = U256::from(u64_of(number, "number")?);
    block.timestamp = U256::from(u64_of(timestamp, "timestamp")?);
    block.beneficiary = address_of(coinbase, "coinbase")?;
    block.basefee = u64::try_from(u256_of(base_fee, "baseFee")?).map_err(|_| napi::Error::from_reason("baseFee: above 2^64"))?;
    block.gas_limit = u64_of(gas_limit, "gasLimit")?;
    block.prevrandao = Some(B256::from(u256_of(prevrandao, "prevrandao")?.to_be_bytes::<32>()));
    Ok(block)
}

pub(crate) fn buf(b: &[u8]) -> Buffer {
    Buffer::from(b.to_vec())
}

/// Executes one call against the state the callbacks answer; nothing is written anywhere.
#[napi]
pub fn call<'a>(
    env: Env,
    input: CallInput<'a>,
    account: Function<'a, Buffer, Option<Buffer>>,
    code: Function<'a, Buffer, Buffer>,
    storage: Function<'a, FnArgs<(Buffer, Buffer)>, Buffer>,
    block_hash: Function<'a, f64, Buffer>,
) -> napi::Result<CallOutput> {
    let spec = SpecId::from_str(&input.spec)
        .map_err(|_| napi::Error::from_reason(format!("unknown hardfork {}", input.spec)))?;
    let chain_id = u64_of(input.chain_id, "chainId")?;

    let block = block_env(input.number, input.timestamp, &input.coinbase, &input.base_fee, input.gas_limit, &input.prevrandao)?;

    let mut tx = TxEnv::default();
    tx.caller = address_of(&input.from, "from")?;
    tx.kind = match &input.to {
        Some(to) => TxKind::Call(address_of(to, "to")?),
        None => TxKind::Create,
    };
    tx.value = u256_of(&input.value, "value")?;
    tx.data = Bytes::copy_from_slice(&input.data);
    tx.gas_limit = u64_of(input.gas, "gas")?;
    tx.gas_price = u128::try_from(u256_of(&input.gas_price, "gasPrice")?)
        .map_err(|_| napi::Error::from_reason("gasPrice: above 2^128"))?;
    tx.chain_id = Some(chain_id);

    let js = Js { env: env.raw(), account: account.raw(), code: code.raw(), storage: storage.raw(), block_hash: block_hash.raw() };
    let watch = Watch {
        deadline_ms: input.deadline,
        steps: 0,
        timed_out: false,
        console: if input.console { Some(Vec::new()) } else { None },
    };
    with_engine(&ENGINE, spec, chain_id, call_evm, |evm| run(evm, js, block, tx, watch))
}

/// The call on `evm`, which is left clean for the next one (journal finalized, callbacks dropped).
fn run(evm: &mut CallEvm, js: Js, block: BlockEnv, tx: TxEnv, watch: Watch) -> napi::Result<CallOutput> {
    evm.ctx.journaled_state.database.js = Some(js);
    evm.ctx.block = block;
    *evm.ctx.error() = Ok(());
    evm.inspector = watch;
    let outcome = evm.inspect_one_tx(tx);
    // the call's state changes are dropped (what transact does after transact_one)
    let _ = evm.finalize();
    evm.ctx.journaled_state.database.js = None;
    let console: Vec<Buffer> = evm.inspector.console.take().unwrap_or_default().iter().map(|b| buf(b)).collect();
    if evm.inspector.timed_out {
        return Ok(CallOutput {
            status: "timeout".into(),
            reason: String::new(),
            output: buf(&[]),
            gas_used: 0.0,
            logs: vec![],
            created: None,
            console,
        });
    }
    let result = match outcome {
        Ok(r) => r,
        Err(EVMError::Transaction(e)) => {
            return Ok(CallOutput {
                status: "invalid".into(),
                reason: e.to_string(),
                output: buf(&[]),
                gas_used: 0.0,
                logs: vec![],
                created: None,
                console,
            })
        }
        Err(e) => return Err(napi::Error::from_reason(e.to_string())),
    };
    let to_logs = |logs: Vec<revm::primitives::Log>| -> Vec<CallLog> {
        logs.into_iter()
            .map(|l| CallLog {
                address: buf(l.address.as_slice()),
                topics: l.data.topics().iter().map(|t| buf(t.as_slice())).collect(),
                data: buf(&l.data.data),
            })
            .collect()
    };
    Ok(match result {
        ExecutionResult::Success { gas, logs, output, reason } => {
            let (out, created) = match output {
                Output::Call(b) => (b, None),
                Output::Create(b, a) => (b, a.map(|a| buf(a.as_slice()))),
            };
            CallOutput {
                status: "success".into(),
                reason: format!("{reason:?}"),
                output: buf(&out),
                gas_used: gas.tx_gas_used() as f64,
                logs: to_logs(logs),
                created,
                console,
            }
        }
        ExecutionResult::Revert { gas, logs, output } => CallOutput {
            status: "revert".into(),
            reason: String::new(),
            output: buf(&output),
            gas_used: gas.tx_gas_used() as f64,
            logs: to_logs(logs),
            created: None,
            console,
        },
        ExecutionResult::Halt { reason, gas, logs } => CallOutput {
            status: "halt".into(),
            reason: format!("{reason:?}"),
            output: buf(&[]),
            gas_used: gas.tx_gas_used() as f64,
            logs: to_logs(logs),
            created: None,
            console,
        },
    })
}
