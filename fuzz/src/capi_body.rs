//! The C API as a C caller drives it: load any bytes; encode any bytes as text with any flags
//! and buffer sizes; decode, look up and stream any ids. Properties: no call returns
//! BP_ERR_PANIC (a caught panic is still a bug); a buffer-too-small answer names the size that
//! then succeeds; `bp_count` agrees with `bp_encode`; for the rank tokenizer the stream's
//! output is the lossy UTF-8 of `bp_decode`, and `bp_decode` of `bp_encode` is the text.

use std::ffi::c_char;
use std::sync::OnceLock;

use bytepair::bp_status::{self, *};
use bytepair::*;

use crate::golden;

const OK: i32 = BP_OK as i32;

pub(crate) fn check(code: i32, what: &str) -> i32 {
    assert_ne!(code, BP_ERR_PANIC as i32, "{what}: a panic reached the C boundary");
    code
}

fn is(code: i32, status: bp_status) -> bool {
    code == status as i32
}

/// Tokenizer handles shared by every run (loaded once; the C API's handles are thread-safe).
struct Handles(Vec<(&'static str, usize)>);

fn handles() -> &'static Handles {
    static H: OnceLock<Handles> = OnceLock::new();
    H.get_or_init(|| {
        let mut out = Vec::new();
        for (name, data) in [("tiny.bpe2", golden::BPE2), ("tiny.qtkr", golden::QTKR), ("tiny_sp.model", golden::SP_MODEL),
                             ("tiny_hf.json", golden::HF), ("tiny_sp.leap", golden::SP_LEAP)] {
            let mut tok = std::ptr::null_mut();
            let code = bp_tokenizer_load_memory(data.as_ptr(), data.len(), &mut tok);
            assert_eq!(code, OK, "golden {name} loads through the C API");
            out.push((name, tok as usize));
        }
        Handles(out)
    })
}

/// `bp_encode` with a buffer of `cap0` ids first; when too small, again with the size named.
fn encode(tok: *const bp_tokenizer, text: &[u8], flags: u32, cap0: usize) -> (i32, Vec<u32>) {
    let mut ids = vec![0u32; cap0];
    let mut n = usize::MAX;
    let code = check(bp_encode(tok, text.as_ptr().cast(), text.len(), flags, ids.as_mut_ptr(), cap0, &mut n), "bp_encode");
    if is(code, BP_ERR_BUFFER_TOO_SMALL) {
        assert!(n > cap0, "too small, yet {n} <= {cap0} needed");
        ids = vec![0u32; n];
        let mut m = usize::MAX;
        let code = check(bp_encode(tok, text.as_ptr().cast(), text.len(), flags, ids.as_mut_ptr(), n, &mut m), "bp_encode");
        assert_eq!(code, OK, "bp_encode with the size it asked for");
        assert_eq!(m, n);
        return (code, ids);
    }
    if code == OK {
        ids.truncate(n);
    }
    (code, ids)
}

fn decode(tok: *const bp_tokenizer, ids: &[u32], flags: u32) -> (i32, Vec<u8>) {
    let mut len = usize::MAX;
    let code = check(bp_decode(tok, ids.as_ptr(), ids.len(), flags, std::ptr::null_mut(), 0, &mut len), "bp_decode");
    if !is(code, BP_ERR_BUFFER_TOO_SMALL) {
        return (code, Vec::new());
    }
    let mut out = vec![0u8; len];
    let mut got = usize::MAX;
    let code = check(bp_decode(tok, ids.as_ptr(), ids.len(), flags, out.as_mut_ptr().cast::<c_char>(), len, &mut got), "bp_decode");
    assert_eq!(code, OK, "bp_decode with the size it asked for");
    assert_eq!(got, len);
    (code, out)
}

/// The stream's whole output for `ids`, or None if a step failed (unknown id).
fn stream(tok: *const bp_tokenizer, ids: &[u32]) -> Option<Vec<u8>> {
    let mut s = std::ptr::null_mut();
    assert_eq!(check(bp_stream_new(tok, &mut s), "bp_stream_new"), OK);
    let mut out = Vec::new();
    let mut buf = [0u8; 16];
    let mut failed = false;
    for &id in ids {
        let mut len = 0;
        let mut code = check(bp_stream_step(s, id, buf.as_mut_ptr().cast(), buf.len(), &mut len), "bp_stream_step");
        if is(code, BP_ERR_BUFFER_TOO_SMALL) {
            // Refused without a change: the same id again, with the room it named.
            let mut big = vec![0u8; len];
            code = check(bp_stream_step(s, id, big.as_mut_ptr().cast(), big.len(), &mut len), "bp_stream_step");
            assert_eq!(code, OK, "bp_stream_step with the size it asked for");
            out.extend_from_slice(&big[..len]);
        } else if code == OK {
            out.extend_from_slice(&buf[..len]);
        } else {
            failed = true;
        }
    }
    let mut len = 0;
    let mut big = vec![0u8; 64];
    let code = check(bp_stream_flush(s, big.as_mut_ptr().cast(), big.len(), &mut len), "bp_stream_flush");
    assert_eq!(code, OK);
    out.extend_from_slice(&big[..len]);
    bp_stream_free(s);
    (!failed).then_some(out)
}

/// Input: one byte of flags and mode, then either a whole vocabulary file (mode 0) or text and
/// ids for the golden tokenizers (split at the first 0xFF).
pub fn capi(data: &[u8]) {
    let Some((&head, rest)) = data.split_first() else { return };
    if head & 0x0F == 0 {
        // Any bytes as a vocabulary file.
        let mut tok = std::ptr::null_mut();
        let code = check(bp_tokenizer_load_memory(rest.as_ptr(), rest.len(), &mut tok), "bp_tokenizer_load_memory");
        if code == OK {
            let text = b"hello world \xe4\xb8\xad <|endoftext|>";
            let (code, ids) = encode(tok, text, 0, 4);
            if code == OK {
                decode(tok, &ids, 0);
                stream(tok, &ids);
            }
            bp_tokenizer_free(tok);
        } else {
            assert!(tok.is_null(), "a failed load leaves *out NULL");
        }
        return;
    }
    let (text, id_bytes) = super::split2(rest);
    let ids: Vec<u32> = id_bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).take(128).collect();
    // Flags from the high bits, unknown bits included now and then (they must be refused).
    let encode_flags = ((head >> 4) & 0x0F) as u32 | if head & 0x08 != 0 { 0x100 } else { 0 };
    let decode_flags = ((head >> 6) & 1) as u32;
    for &(name, tok) in &handles().0 {
        let tok = tok as *const bp_tokenizer;
        let (code, got) = encode(tok, text, encode_flags, (head & 0x07) as usize * 3);
        let mut counted = usize::MAX;
        let ccode = check(bp_count(tok, text.as_ptr().cast(), text.len(), encode_flags, &mut counted), "bp_count");
        assert_eq!(ccode, code, "{name}: bp_count and bp_encode disagree on success");
        if code == OK {
            assert_eq!(counted, got.len(), "{name}: bp_count != bp_encode's length");
            let (dcode, back) = decode(tok, &got, 0);
            assert_eq!(dcode, OK, "{name}: bp_encode's ids do not decode");
            if name == "tiny.bpe2" && encode_flags & (BP_ENCODE_ADD_BOS | BP_ENCODE_ADD_EOS) == 0 {
                assert_eq!(back, text, "{name}: decode(encode(text)) != text");
            }
        } else if std::str::from_utf8(text).is_err() {
            assert!(is(code, BP_ERR_UTF8) || is(code, BP_ERR_INVALID_ARG), "{name}: invalid UTF-8 gave {code}");
        }
        let (dcode, bytes) = decode(tok, &ids, decode_flags);
        let streamed = stream(tok, &ids);
        if name == "tiny.bpe2" {
            assert_eq!(dcode == OK, streamed.is_some(), "{name}: decode and the stream disagree on the ids");
            if let (Some(s), true) = (streamed, dcode == OK && decode_flags == 0) {
                assert_eq!(String::from_utf8_lossy(&s), String::from_utf8_lossy(&bytes), "{name}: stream != decode");
            }
        }
        for &id in ids.iter().take(8) {
            let (mut p, mut len) = (std::ptr::null(), 0usize);
            if check(bp_token_to_bytes(tok, id, &mut p, &mut len), "bp_token_to_bytes") == OK {
                let bytes = unsafe { std::slice::from_raw_parts(p, len) };
                let mut back = u32::MAX;
                let code = check(bp_token_id(tok, bytes.as_ptr(), bytes.len(), &mut back), "bp_token_id");
                assert_eq!(code, OK, "{name}: the bytes of id {id} are no token");
            }
        }
        let _ = (bp_vocab_size(tok), bp_bos_id(tok), bp_eos_id(tok), bp_pad_id(tok));
    }
}
