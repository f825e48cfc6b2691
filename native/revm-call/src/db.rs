//! The state revm reads: synchronous JavaScript callbacks (wire formats in lib.rs), behind a code cache.
use napi::sys;
use revm::database_interface::{DBErrorMarker, Database};
use revm::primitives::{keccak256, Address, Bytes, HashMap, StorageKey, StorageValue, B256, U256};
use revm::state::{AccountInfo, Bytecode};
use std::ptr;

/// A JavaScript callback threw or answered in the wrong shape.
#[derive(Debug)]
pub struct JsDbError(pub String);

impl std::fmt::Display for JsDbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "state callback failed: {}", self.0)
    }
}
impl std::error::Error for JsDbError {}
impl DBErrorMarker for JsDbError {}

/// The four state callbacks of the call running now, as raw N-API handles: valid only while that
/// call's `call` runs on this thread (set at its start, cleared at its end). Arguments go to JavaScript
/// as Buffers copied into V8's heap and answers are copied out at once, so no N-API reference,
/// external buffer or finalizer is made per read (napi-rs' `Buffer` makes one of each).
#[derive(Clone, Copy)]
pub struct Js {
    pub env: sys::napi_env,
    pub account: sys::napi_value,
    pub code: sys::napi_value,
    pub storage: sys::napi_value,
    pub block_hash: sys::napi_value,
}

impl Js {
    fn buffer(&self, bytes: &[u8]) -> Result<sys::napi_value, JsDbError> {
        let mut out = ptr::null_mut();
        let status = unsafe { sys::napi_create_buffer_copy(self.env, bytes.len(), bytes.as_ptr().cast(), ptr::null_mut(), &mut out) };
        if status != sys::Status::napi_ok {
            return Err(JsDbError(format!("creating an argument failed (N-API status {status})")));
        }
        Ok(out)
    }

    /// `f(args)`; a callback that threw leaves its exception pending, and the call ends with it
    fn call(&self, f: sys::napi_value, args: &[sys::napi_value]) -> Result<sys::napi_value, JsDbError> {
        let mut this = ptr::null_mut();
        let mut out = ptr::null_mut();
        let status = unsafe {
            sys::napi_get_undefined(self.env, &mut this);
            sys::napi_call_function(self.env, this, f, args.len(), args.as_ptr(), &mut out)
        };
        if status != sys::Status::napi_ok {
            return Err(JsDbError(format!("the callback threw (N-API status {status})")));
        }
        Ok(out)
    }

    /// the bytes of a Buffer answer, or None for null / undefined
    fn bytes(&self, v: sys::napi_value, what: &str) -> Result<Option<&[u8]>, JsDbError> {
        let mut kind = 0;
        unsafe { sys::napi_typeof(self.env, v, &mut kind) };
        if kind == sys::ValueType::napi_null || kind == sys::ValueType::napi_undefined {
            return Ok(None);
        }
        let mut data = ptr::null_mut();
        let mut len = 0usize;
        let status = unsafe { sys::napi_get_buffer_info(self.env, v, &mut data, &mut len) };
        if status != sys::Status::napi_ok {
            return Err(JsDbError(format!("{what}: the answer is not a Buffer")));
        }
        Ok(Some(if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data as *const u8, len) } }))
    }
}

/// Analysed bytecode kept by code hash across calls (code is immutable under its hash), so a contract
/// called again is neither read through the callback nor analysed for jump destinations again; code is
/// kept only when its keccak is the hash it was asked by.
/// Bounded by MAX_CACHED_CODES entries and MAX_CACHED_CODE_BYTES bytes; when full it starts over.
const MAX_CACHED_CODES: usize = 1024;
const MAX_CACHED_CODE_BYTES: usize = 16 * 1024 * 1024;

/// The state revm reads: the running call's callbacks, and the code cache.
pub struct JsDb {
    pub js: Option<Js>,
    codes: HashMap<B256, Bytecode>,
    code_bytes: usize,
    /// set when code with an EIP-7702 delegation designator was read (the block executor leaves such txs to ethereumjs)
    pub saw_delegation: bool,
}

impl JsDb {
    pub fn new() -> JsDb {
        JsDb { js: None, codes: HashMap::default(), code_bytes: 0, saw_delegation: false }
    }
}

fn word(b: &[u8], what: &str) -> Result<[u8; 32], JsDbError> {
    <[u8; 32]>::try_from(b).map_err(|_| JsDbError(format!("{what}: expected 32 bytes, got {}", b.len())))
}

impl JsDb {
    fn js(&self) -> Result<Js, JsDbError> {
        self.js.ok_or_else(|| JsDbError("no call is running".into()))
    }

    /// the code under `code_hash`, from the cache or the callback
    fn code_of(&mut self, code_hash: B256) -> Result<Bytecode, JsDbError> {
        if let Some(code) = self.codes.get(&code_hash) {
            return Ok(code.clone());
        }
        let js = self.js()?;
        let got = js.call(js.code, &[js.buffer(code_hash.as_slice())?])?;
        let raw = js.bytes(got, "code")?.unwrap_or(&[]);
        let code = Bytecode::new_raw(Bytes::copy_from_slice(raw));
        // kept only under its true hash (an unknown hash answers empty code, which may be known at a
        // later height; a caller's made-up hash must not stand for other code in a later call)
        if !raw.is_empty() && keccak256(raw) == code_hash {
            if self.codes.len() >= MAX_CACHED_CODES || self.code_bytes + raw.len() > MAX_CACHED_CODE_BYTES {
                self.codes.clear();
                self.code_bytes = 0;
            }
            self.code_bytes += raw.len();
            self.codes.insert(code_hash, code.clone());
        }
        Ok(code)
    }
}

impl Database for JsDb {
    type Error = JsDbError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, JsDbError> {
        let js = self.js()?;
        let got = js.call(js.account, &[js.buffer(address.as_slice())?])?;
        let Some(raw) = js.bytes(got, "account")? else { return Ok(None) };
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
        let code = self.code_of(code_hash)?;
        if code.is_eip7702() {
            self.saw_delegation = true;
        }
        Ok(code)
    }

    fn storage(&mut self, address: Address, index: StorageKey) -> Result<StorageValue, JsDbError> {
        let js = self.js()?;
        let args = [js.buffer(address.as_slice())?, js.buffer(&index.to_be_bytes::<32>())?];
        let got = js.call(js.storage, &args)?;
        let raw = js.bytes(got, "storage")?.ok_or_else(|| JsDbError("storage: no answer".into()))?;
        Ok(U256::from_be_bytes(word(raw, "storage")?))
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, JsDbError> {
        let js = self.js()?;
        let mut n = ptr::null_mut();
        unsafe { sys::napi_create_double(js.env, number as f64, &mut n) };
        let got = js.call(js.block_hash, &[n])?;
        let raw = js.bytes(got, "block hash")?.ok_or_else(|| JsDbError("block hash: no answer".into()))?;
        Ok(B256::from(word(raw, "block hash")?))
    }
}

