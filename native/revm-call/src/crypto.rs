//! Keccak-256 and secp256k1 public-key recovery for the JavaScript side (src/evm/common.ts), each in one
//! N-API call (docs/benchmarks.md "Native Keccak and secp256k1"). Keccak-256 is alloy-primitives' (the
//! one revm hashes with); recovery is libsecp256k1's, through the `secp256k1` crate, which compiles the C
//! library with `cc`: the same library, so the same answers, as the npm `secp256k1` binding it replaces.
use napi::bindgen_prelude::BufferSlice;
use napi_derive::napi;
use revm::primitives::keccak256 as alloy_keccak256;
use secp256k1::ecdsa::{RecoverableSignature, RecoveryId};
use secp256k1::{Message, Secp256k1, VerifyOnly};
use std::sync::OnceLock;

/// Writes the Keccak-256 of the first `len` bytes of `data` into the first 32 bytes of `out`. The caller
/// passes a scratch `out` of its own and copies the hash out of it: that costs less than a new Buffer
/// made here (docs/benchmarks.md "Native Keccak and secp256k1").
#[napi]
pub fn keccak256(data: BufferSlice, len: u32, mut out: BufferSlice) -> napi::Result<()> {
    let len = len as usize;
    if len > data.len() || out.len() < 32 {
        return Err(napi::Error::from_reason("keccak256: len is beyond data, or out is shorter than 32 bytes"));
    }
    out[..32].copy_from_slice(alloy_keccak256(&data[..len]).as_slice());
    Ok(())
}

/// ecrecover's answers; the JavaScript side throws the npm `secp256k1` package's texts for 1 and 2
const RECOVERED: u32 = 0;
/// r or s is not below the group order (secp256k1_ecdsa_recoverable_signature_parse_compact refused it)
const SIGNATURE_UNPARSED: u32 = 1;
/// r or s is zero, or no point has r (+ n for recid 2 and 3) as its x (secp256k1_ecdsa_recover failed)
const NOT_RECOVERED: u32 = 2;

fn context() -> &'static Secp256k1<VerifyOnly> {
    static CONTEXT: OnceLock<Secp256k1<VerifyOnly>> = OnceLock::new();
    CONTEXT.get_or_init(Secp256k1::verification_only)
}

/// Recovers the public key that signed `hash32` with `sig64` (r ‖ s, big-endian) and recovery id `recid`
/// (0-3), and writes it uncompressed without its 0x04 prefix (x ‖ y) into the first 64 bytes of `out`.
/// High s is accepted (libsecp256k1's recovery does not normalize s; who refuses it checks it first).
/// Returns RECOVERED, SIGNATURE_UNPARSED or NOT_RECOVERED; throws for wrong lengths or a recid above 3.
#[napi]
pub fn ecrecover(hash32: BufferSlice, sig64: BufferSlice, recid: u32, mut out: BufferSlice) -> napi::Result<u32> {
    if hash32.len() != 32 || sig64.len() != 64 || out.len() < 64 {
        return Err(napi::Error::from_reason("ecrecover: expected a 32-byte hash, a 64-byte signature and a 64-byte out"));
    }
    let id = match recid {
        0 => RecoveryId::Zero,
        1 => RecoveryId::One,
        2 => RecoveryId::Two,
        3 => RecoveryId::Three,
        _ => return Err(napi::Error::from_reason("ecrecover: recovery id above 3")),
    };
    let Ok(sig) = RecoverableSignature::from_compact(&sig64, id) else { return Ok(SIGNATURE_UNPARSED) };
    let mut digest = [0u8; 32];
    digest.copy_from_slice(&hash32);
    match context().recover_ecdsa(Message::from_digest(digest), &sig) {
        Ok(key) => {
            out[..64].copy_from_slice(&key.serialize_uncompressed()[1..]);
            Ok(RECOVERED)
        }
        Err(_) => Ok(NOT_RECOVERED),
    }
}
