//! ferry-revm-call: one eth_call executed by revm (github:bluealloy/revm, pinned in Cargo.toml), with the
//! state read through synchronous JavaScript callbacks (the call worker answers them from the flat state,
//! see docs/benchmarks.md "revm prototype"). Nothing is committed: the call's state changes are dropped.
//!
//! Wire formats (all byte strings are big-endian Buffers):
//! - account(address20) -> null | 72 bytes: balance (32) ‖ nonce (8) ‖ code hash (32)
//! - code(hash32) -> Buffer (the bytecode; empty if unknown)
//! - storage(address20, slot32) -> 32 bytes
//! - blockHash(number as f64) -> 32 bytes
use napi::bindgen_prelude::{Buffer, FnArgs, Function};
use napi_derive::napi;
use revm::context::result::{EVMError, ExecutionResult, Output};
use revm::context::{BlockEnv, CfgEnv, ContextTr, TxEnv};
use revm::database_interface::{DBErrorMarker, Database};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::{CallInputs, CallOutcome, InstructionResult, Interpreter};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{Address, Bytes, StorageKey, StorageValue, TxKind, B256, U256};
use revm::state::{AccountInfo, Bytecode};
use revm::{Context, InspectEvm, Inspector, MainBuilder, MainContext};
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

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

/// A JavaScript callback threw or answered in the wrong shape.
#[derive(Debug)]
struct JsDbError(String);

impl std::fmt::Display for JsDbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "state callback failed: {}", self.0)
    }
}
impl std::error::Error for JsDbError {}
impl DBErrorMarker for JsDbError {}

fn js_err(e: napi::Error) -> JsDbError {
    JsDbError(e.reason.clone())
}

struct JsDb<'a> {
    account: &'a Function<'a, Buffer, Option<Buffer>>,
    code: &'a Function<'a, Buffer, Buffer>,
    storage: &'a Function<'a, FnArgs<(Buffer, Buffer)>, Buffer>,
    block_hash: &'a Function<'a, f64, Buffer>,
}

fn word(b: &[u8], what: &str) -> Result<[u8; 32], JsDbError> {
    <[u8; 32]>::try_from(b).map_err(|_| JsDbError(format!("{what}: expected 32 bytes, got {}", b.len())))
}

impl Database for JsDb<'_> {
    type Error = JsDbError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, JsDbError> {
        let got = self.account.call(Buffer::from(address.as_slice().to_vec())).map_err(js_err)?;
        let Some(raw) = got else { return Ok(None) };
        if raw.len() != 72 {
            return Err(JsDbError(format!("account: expected 72 bytes, got {}", raw.len())));
        }
        let mut info = AccountInfo::default();
        info.balance = U256::from_be_slice(&raw[0..32]);
        info.nonce = u64::from_be_bytes(raw[32..40].try_into().unwrap());
        info.code_hash = B256::from(word(&raw[40..72], "code hash")?);
        info.code = None;
        Ok(Some(info))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, JsDbError> {
        let raw = self.code.call(Buffer::from(code_hash.as_slice().to_vec())).map_err(js_err)?;
        Ok(Bytecode::new_raw(Bytes::copy_from_slice(&raw)))
    }

    fn storage(&mut self, address: Address, index: StorageKey) -> Result<StorageValue, JsDbError> {
        let args = (Buffer::from(address.as_slice().to_vec()), Buffer::from(index.to_be_bytes::<32>().to_vec()));
        let raw = self.storage.call(FnArgs::from(args)).map_err(js_err)?;
        Ok(U256::from_be_bytes(word(&raw, "storage")?))
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, JsDbError> {
        let raw = self.block_hash.call(number as f64).map_err(js_err)?;
        Ok(B256::from(word(&raw, "block hash")?))
    }
}

/// One call's transaction and block environment.
#[napi(object)]
pub struct CallInput {
    /// hardfork name as revm spells it ("Cancun", "Prague", ...)
    pub spec: String,
    pub chain_id: f64,
    pub from: Buffer,
    /// absent: contract creation
    pub to: Option<Buffer>,
    /// 32 bytes
    pub value: Buffer,
    pub data: Buffer,
    pub gas: f64,
    /// 32 bytes; the effective gas price the caller asked for (0 when none)
    pub gas_price: Buffer,
    pub number: f64,
    pub timestamp: f64,
    pub coinbase: Buffer,
    pub base_fee: Buffer,
    pub gas_limit: f64,
    pub prevrandao: Buffer,
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

fn u256_of(b: &Buffer, what: &str) -> napi::Result<U256> {
    if b.len() > 32 {
        return Err(napi::Error::from_reason(format!("{what}: more than 32 bytes")));
    }
    Ok(U256::from_be_slice(b))
}

fn address_of(b: &Buffer, what: &str) -> napi::Result<Address> {
    if b.len() != 20 {
        return Err(napi::Error::from_reason(format!("{what}: expected 20 bytes")));
    }
    Ok(Address::from_slice(b))
}

fn u64_of(n: f64, what: &str) -> napi::Result<u64> {
    if !(n >= 0.0 && n <= 9_007_199_254_740_991.0 && n.fract() == 0.0) {
        return Err(napi::Error::from_reason(format!("{what}: not a safe integer")));
    }
    Ok(n as u64)
}

fn buf(b: &[u8]) -> Buffer {
    Buffer::from(b.to_vec())
}

/// Executes one call against the state the callbacks answer; nothing is written anywhere.
#[napi]
pub fn call<'a>(
    input: CallInput,
    account: Function<'a, Buffer, Option<Buffer>>,
    code: Function<'a, Buffer, Buffer>,
    storage: Function<'a, FnArgs<(Buffer, Buffer)>, Buffer>,
    block_hash: Function<'a, f64, Buffer>,
) -> napi::Result<CallOutput> {
    let spec = SpecId::from_str(&input.spec)
        .map_err(|_| napi::Error::from_reason(format!("unknown hardfork {}", input.spec)))?;
    let mut cfg = CfgEnv::new_with_spec(spec);
    cfg.chain_id = u64_of(input.chain_id, "chainId")?;
    // eth_call: no nonce check, and the block's gas limit does not bound the call (go-ethereum
    // internal/ethapi/api.go doCall sets NoBaseFee and skips the nonce check the same way)
    cfg.disable_nonce_check = true;
    cfg.disable_block_gas_limit = true;
    cfg.disable_base_fee = true;
    cfg.tx_gas_limit_cap = Some(u64::MAX);

    let mut block = BlockEnv::default();
    block.number = U256::from(u64_of(input.number, "number")?);
    block.timestamp = U256::from(u64_of(input.timestamp, "timestamp")?);
    block.beneficiary = address_of(&input.coinbase, "coinbase")?;
    block.basefee = u64::try_from(u256_of(&input.base_fee, "baseFee")?)
        .map_err(|_| napi::Error::from_reason("baseFee: above 2^64"))?;
    block.gas_limit = u64_of(input.gas_limit, "gasLimit")?;
    block.prevrandao = Some(B256::from(u256_of(&input.prevrandao, "prevrandao")?.to_be_bytes::<32>()));

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
    tx.chain_id = Some(cfg.chain_id);

    let db = JsDb { account: &account, code: &code, storage: &storage, block_hash: &block_hash };
    let watch = Watch {
        deadline_ms: input.deadline,
        steps: 0,
        timed_out: false,
        console: if input.console { Some(Vec::new()) } else { None },
    };
    let mut evm = Context::mainnet().with_db(db).with_block(block).with_cfg(cfg).build_mainnet_with_inspector(watch);
    let outcome = evm.inspect_one_tx(tx);
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
