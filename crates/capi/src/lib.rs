//! The C API of bytepair (`libbytepair`): load any vocabulary bytepair reads, encode, count,
//! decode, decode as a stream, look tokens up; every entry point returns an error code.
//!
//! This crate is conversion only: pointers and lengths in, `bytepair_core::Tokenizer` calls,
//! error codes and a thread-local message out. The one thing it adds is loading by content
//! (`load.rs`: the format rules of python/bytepair/formats/detect.py) and the streaming
//! decoder (`stream.rs`: python/bytepair/stream.py's model).
//!
//! Rules every entry point keeps (docs/c-api.md):
//! - no panic crosses into C: each body runs under `catch_unwind` and a panic is BP_ERR_PANIC;
//! - every pointer is checked: NULL where something is needed is BP_ERR_INVALID_ARG;
//! - on failure `*out` handles are set to NULL and `bp_last_error_message()` says what and where;
//! - a buffer too small (or NULL) is BP_ERR_BUFFER_TOO_SMALL with the size needed in `*n_out`.
//!
//! The header include/bytepair.h is generated from this file by cbindgen (crates/capi/cbindgen.toml);
//! tests/header.rs fails when the committed header is not what cbindgen makes of it.

#![allow(non_camel_case_types)]
// Every function dereferences the caller's pointers after checking them for NULL; the header
// states what each pointer must be. Marking them `unsafe` would change nothing for C callers.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod load;
pub mod stream;

use bytepair_core::chat::jinja::JinjaTemplate;
use bytepair_core::models::Sink;
use bytepair_core::{AnyModel, EncodeOptions, Error, SpecialFilter, Tokenizer};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Error codes: every function that can fail returns one (0 = success, negative = error).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum bp_status {
    /// Success.
    BP_OK = 0,
    /// A NULL pointer where one is needed, an unknown flag bit or built-in name.
    BP_ERR_INVALID_ARG = -1,
    /// A file could not be read (missing, unreadable).
    BP_ERR_IO = -2,
    /// The vocabulary's bytes are malformed, of no known format, or lack what cannot be guessed
    /// (the split pattern of a .tiktoken file bytepair does not know by its SHA-256).
    BP_ERR_FORMAT = -3,
    /// The output buffer is NULL or too small; the size needed is in `*n_out` / `*len_out`.
    BP_ERR_BUFFER_TOO_SMALL = -4,
    /// A token id outside the vocabulary, or bytes that are no token (bp_token_id).
    BP_ERR_UNKNOWN_TOKEN = -5,
    /// BP_ENCODE_REFUSE_SPECIAL and the text spells a special token, or BP_ENCODE_ADD_BOS /
    /// BP_ENCODE_ADD_EOS on a tokenizer that has no BOS / EOS token.
    BP_ERR_SPECIAL_TOKEN = -6,
    /// The text is not valid UTF-8 (the message gives the byte offset).
    BP_ERR_UTF8 = -7,
    /// A bug in bytepair: a panic was caught at the boundary. The handle is still usable.
    BP_ERR_PANIC = -8,
    /// A chat template that does not compile, or failed to render (its raise_exception, an
    /// undefined attribute, a filter it lacks, a list or dict printed as text), or a context
    /// that is not a JSON object; the message says which, with the template's line.
    BP_ERR_TEMPLATE = -9,
}
use bp_status::*;

/// bp_encode / bp_count: put the tokenizer's BOS id first (BP_ERR_SPECIAL_TOKEN if it has none).
pub const BP_ENCODE_ADD_BOS: u32 = 1;
/// bp_encode / bp_count: put the tokenizer's EOS id last (BP_ERR_SPECIAL_TOKEN if it has none).
pub const BP_ENCODE_ADD_EOS: u32 = 2;
/// bp_encode / bp_count: special-token spellings in the text become their ids. Without it
/// (the default) they are ordinary text.
pub const BP_ENCODE_ALLOW_SPECIAL: u32 = 4;
/// bp_encode / bp_count: fail with BP_ERR_SPECIAL_TOKEN when the text spells a special token
/// (tiktoken's default, for text from users). Ignored with BP_ENCODE_ALLOW_SPECIAL.
pub const BP_ENCODE_REFUSE_SPECIAL: u32 = 8;
/// bp_decode: leave out special tokens (BOS, EOS, PAD and every other special token).
pub const BP_DECODE_SKIP_SPECIAL: u32 = 1;

const ENCODE_FLAGS: u32 = BP_ENCODE_ADD_BOS | BP_ENCODE_ADD_EOS | BP_ENCODE_ALLOW_SPECIAL | BP_ENCODE_REFUSE_SPECIAL;
const DECODE_FLAGS: u32 = BP_DECODE_SKIP_SPECIAL;

struct Inner {
    tokenizer: Tokenizer,
    pad: Option<u32>,
    /// Sorted ids BP_DECODE_SKIP_SPECIAL leaves out: every special token, BOS, EOS, PAD.
    specials: Vec<u32>,
}

/// A loaded tokenizer. Immutable once made: one handle may be used by any number of threads
/// at once for encode, count, decode and lookups.
pub struct bp_tokenizer {
    inner: Arc<Inner>,
}

/// A compiled Jinja chat template (bp_chat_template_new). Immutable once made: any number of
/// threads may render with one handle at once.
pub struct bp_chat_template {
    inner: JinjaTemplate,
}

/// A streaming decoder over one tokenizer; used by one thread at a time. It holds its own
/// reference to the tokenizer, so freeing the tokenizer first is safe.
pub struct bp_stream {
    inner: Arc<Inner>,
    state: stream::StreamState,
}

// ------------------------------------------------------------------ errors

/// A failure: the code returned and the message bp_last_error_message gives.
struct Fail(bp_status, String);

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::Io(_) => BP_ERR_IO,
            Error::UnknownToken(_) => BP_ERR_UNKNOWN_TOKEN,
            Error::Format { .. } | Error::Vocab(_) | Error::Pattern(_) | Error::Split(_) => BP_ERR_FORMAT,
        };
        Fail(code, e.to_string())
    }
}

fn fail<T>(code: bp_status, msg: impl Into<String>) -> Result<T, Fail> {
    Err(Fail(code, msg.into()))
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(msg: String) {
    let msg = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|m| *m.borrow_mut() = msg);
}

/// `body` under catch_unwind: its code, with the message of a failure stored for this thread.
/// `what` names the function, so a message says where.
fn guard(what: &str, body: impl FnOnce() -> Result<(), Fail>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => BP_OK as c_int,
        Ok(Err(Fail(code, msg))) => {
            set_error(format!("{what}: {msg}"));
            code as c_int
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_error(format!("{what}: internal error (panic caught at the C boundary): {msg}"));
            BP_ERR_PANIC as c_int
        }
    }
}

fn need<'a, T>(p: *const T, name: &str) -> Result<&'a T, Fail> {
    // SAFETY: non-NULL pointers are the caller's promise of a valid object (see the header).
    unsafe { p.as_ref() }.ok_or_else(|| Fail(BP_ERR_INVALID_ARG, format!("{name} is NULL")))
}

fn need_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: as `need`.
    unsafe { p.as_mut() }.ok_or_else(|| Fail(BP_ERR_INVALID_ARG, format!("{name} is NULL")))
}

/// `len` bytes at `p`; NULL is allowed only with `len == 0`.
fn bytes<'a>(p: *const u8, len: usize, name: &str) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return fail(BP_ERR_INVALID_ARG, format!("{name} is NULL but its length is {len}"));
    }
    // SAFETY: the caller promises `len` readable bytes at `p`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Copies `data` to `out` (capacity `cap`) and stores its length in `*len_out`; the length
/// needed and BP_ERR_BUFFER_TOO_SMALL when it does not fit.
fn write_out<T: Copy>(data: &[T], out: *mut T, cap: usize, len_out: &mut usize, what: &str) -> Result<(), Fail> {
    *len_out = data.len();
    if data.is_empty() {
        return Ok(());
    }
    if out.is_null() || cap < data.len() {
        return fail(BP_ERR_BUFFER_TOO_SMALL, format!("{} {what} needed, the buffer holds {}", data.len(), if out.is_null() { 0 } else { cap }));
    }
    // SAFETY: `out` holds `cap >= data.len()` elements (the caller's promise).
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), out, data.len()) };
    Ok(())
}

/// `data` as UTF-8 (`name` says which argument, for the message).
fn utf8<'a>(data: &'a [u8], name: &str) -> Result<&'a str, Fail> {
    std::str::from_utf8(data).map_err(|e| Fail(BP_ERR_UTF8, format!("{name} is not valid UTF-8 at byte {}", e.valid_up_to())))
}

fn new_tokenizer(loaded: load::Loaded, out: &mut *mut bp_tokenizer) {
    let tok = &loaded.tokenizer;
    let mut specials: Vec<u32> = tok.special_list().iter().map(|(_, id)| *id).collect();
    Extend::extend(&mut specials, [tok.bos_id(), tok.eos_id(), loaded.pad].into_iter().flatten());
    specials.sort_unstable();
    specials.dedup();
    let inner = Inner { tokenizer: loaded.tokenizer, pad: loaded.pad, specials };
    *out = Box::into_raw(Box::new(bp_tokenizer { inner: Arc::new(inner) }));
}

// ------------------------------------------------------------------ library

/// The library's version, "MAJOR.MINOR.PATCH" (a static string).
#[no_mangle]
pub extern "C" fn bp_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// What the last call that failed on this thread says: what went wrong and where. Never NULL
/// ("" before any failure). Valid until the next failing call on this thread; calls that
/// succeed leave it as it is.
#[no_mangle]
pub extern "C" fn bp_last_error_message() -> *const c_char {
    LAST_ERROR.with(|m| m.borrow().as_ptr())
}

// ------------------------------------------------------------------ loading

/// Loads the vocabulary file at `path` (NUL-terminated), whatever its format, told from its
/// content: BPE2/BPZ2, tiktoken, QTKR, SentencePiece .model, LEAP/llama2.c tokenizer.bin, HF
/// tokenizer.json. On success `*out` is a new handle (free it with bp_tokenizer_free); on
/// failure `*out` is NULL.
#[no_mangle]
pub extern "C" fn bp_tokenizer_load(path: *const c_char, out: *mut *mut bp_tokenizer) -> c_int {
    guard("bp_tokenizer_load", || {
        let out = need_mut(out, "out")?;
        *out = std::ptr::null_mut();
        let path = need(path, "path")?;
        // SAFETY: a non-NULL path is a NUL-terminated string (the caller's promise).
        let path = unsafe { CStr::from_ptr(path) };
        let path = std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes()));
        let data = read_vocab_file(path)?;
        let loaded = load::load(&data).map_err(|e| {
            let f = Fail::from(e);
            Fail(f.0, format!("{}: {}", path.display(), f.1))
        })?;
        new_tokenizer(loaded, out);
        Ok(())
    })
}

/// The largest vocabulary file read (not exported to the header): 1 GiB, as the Python package's
/// `bytepair.formats.limits.MAX_FILE_BYTES` (the largest real ones are tens of megabytes).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// The bytes of the regular file at `path`, refusing anything else before reading: a device,
/// FIFO or socket (`/dev/zero` was read until memory ran out and the process aborted; a FIFO
/// with no writer blocked), or a file over [`MAX_FILE_BYTES`]. Decided from the open file's
/// own `fstat`, as python/bytepair/formats/limits.py does.
fn read_vocab_file(path: &std::path::Path) -> Result<Vec<u8>, Fail> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| Fail(BP_ERR_IO, format!("{}: {e}", path.display()));
    // O_NONBLOCK: opening a FIFO with no writer must not block before fstat can refuse it.
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return fail(BP_ERR_IO, format!("{}: is a directory", path.display()));
    }
    if !meta.is_file() {
        return fail(BP_ERR_FORMAT, format!("{}: not a regular file (a device, FIFO or socket); a vocabulary is read from a file", path.display()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return fail(BP_ERR_FORMAT, format!("{}: the file has {} bytes, more than the {MAX_FILE_BYTES} a vocabulary may have", path.display(), meta.len()));
    }
    let mut data = Vec::new();
    // One byte past the limit: a file that grows while it is read is caught too.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut data).map_err(io)?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return fail(BP_ERR_FORMAT, format!("{}: the file grew past the {MAX_FILE_BYTES} bytes a vocabulary may have while it was read", path.display()));
    }
    Ok(data)
}

/// bp_tokenizer_load from a file's bytes in memory (`len` bytes at `data`, copied: the buffer
/// may be freed once this returns).
#[no_mangle]
pub extern "C" fn bp_tokenizer_load_memory(data: *const u8, len: usize, out: *mut *mut bp_tokenizer) -> c_int {
    guard("bp_tokenizer_load_memory", || {
        let out = need_mut(out, "out")?;
        *out = std::ptr::null_mut();
        let data = bytes(data, len, "data")?;
        new_tokenizer(load::load(data)?, out);
        Ok(())
    })
}

/// A tokenizer compiled into the library: "cl100k_base", "o200k_base" or "o200k_harmony"
/// (o200k_base's ranks with the harmony chat format's special tokens). BP_ERR_INVALID_ARG for
/// another name, or when the library was built without the `builtin` feature.
#[no_mangle]
pub extern "C" fn bp_tokenizer_builtin(name: *const c_char, out: *mut *mut bp_tokenizer) -> c_int {
    guard("bp_tokenizer_builtin", || {
        let out = need_mut(out, "out")?;
        *out = std::ptr::null_mut();
        let name = need(name, "name")?;
        // SAFETY: a non-NULL name is a NUL-terminated string (the caller's promise).
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        if !cfg!(feature = "builtin") {
            return fail(BP_ERR_INVALID_ARG, "this library was built without the bundled tables (cargo feature `builtin`)");
        }
        match load::builtin(&name) {
            Some(tok) => new_tokenizer(tok?.into(), out),
            None => return fail(BP_ERR_INVALID_ARG, format!("no built-in tokenizer {name:?}; expected \"cl100k_base\", \"o200k_base\" or \"o200k_harmony\"")),
        }
        Ok(())
    })
}

/// Frees a tokenizer. NULL is a no-op. Streams made from it stay usable.
#[no_mangle]
pub extern "C" fn bp_tokenizer_free(tok: *mut bp_tokenizer) {
    if !tok.is_null() {
        // SAFETY: a non-NULL handle came from Box::into_raw in new_tokenizer and is freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(tok) })));
    }
}

// ------------------------------------------------------------------ encoding

/// Writes ids into the caller's buffer as the rank model makes them, counting past its end:
/// one pass gives the ids when they fit and the size needed when they do not.
struct SliceSink<'a> {
    buf: &'a mut [u32],
    n: usize,
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn push(&mut self, id: u32) {
        if let Some(slot) = self.buf.get_mut(self.n) {
            *slot = id;
        }
        self.n += 1;
    }
    #[inline]
    fn extend(&mut self, ids: &[u32]) {
        let end = self.n + ids.len();
        if end <= self.buf.len() {
            self.buf[self.n..end].copy_from_slice(ids);
        } else if self.n < self.buf.len() {
            let room = self.buf.len() - self.n;
            self.buf[self.n..].copy_from_slice(&ids[..room]);
        }
        self.n = end;
    }
}

/// The text and options of an encode or count call, after every check but the buffer's.
fn prepare<'a>(tok: &'a Inner, utf8: *const c_char, len: usize, flags: u32) -> Result<(&'a Tokenizer, &'a str, EncodeOptions), Fail> {
    if flags & !ENCODE_FLAGS != 0 {
        return fail(BP_ERR_INVALID_ARG, format!("unknown flag bits {:#x}", flags & !ENCODE_FLAGS));
    }
    let data: &'a [u8] = bytes(utf8.cast(), len, "utf8")?;
    let text = std::str::from_utf8(data).map_err(|e| Fail(BP_ERR_UTF8, format!("the text is not valid UTF-8 at byte {}", e.valid_up_to())))?;
    let t = &tok.tokenizer;
    let allow = flags & BP_ENCODE_ALLOW_SPECIAL != 0;
    if !allow && flags & BP_ENCODE_REFUSE_SPECIAL != 0 {
        if let Some(m) = t.find_special(text, &SpecialFilter::All) {
            let (spelling, at) = (t.added().spelling(&m), m.start);
            return fail(BP_ERR_SPECIAL_TOKEN, format!("the text spells the special token {spelling:?} at byte {at} (BP_ENCODE_REFUSE_SPECIAL); pass BP_ENCODE_ALLOW_SPECIAL to encode it as its id, or neither flag to encode it as text"));
        }
    }
    let opts = EncodeOptions {
        allowed: if allow { SpecialFilter::All } else { SpecialFilter::None },
        add_bos: flags & BP_ENCODE_ADD_BOS != 0,
        add_eos: flags & BP_ENCODE_ADD_EOS != 0,
    };
    if opts.add_bos && t.bos_id().is_none() {
        return fail(BP_ERR_SPECIAL_TOKEN, "BP_ENCODE_ADD_BOS: this tokenizer has no BOS token");
    }
    if opts.add_eos && t.eos_id().is_none() {
        return fail(BP_ERR_SPECIAL_TOKEN, "BP_ENCODE_ADD_EOS: this tokenizer has no EOS token");
    }
    Ok((t, text, opts))
}

/// The most ids (4 MB) the per-thread buffer keeps between calls.
const IDS_KEPT: usize = 1 << 20;

thread_local! {
    /// The ids of non-rank encodes before they are copied out (grown once, reused).
    static IDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Encodes `len` bytes of UTF-8 at `utf8` (NULL allowed when `len` is 0; no NUL needed) into
/// `ids` (room for `cap` ids). `flags`: BP_ENCODE_* or 0. `*n_out` is the number of ids; when
/// `ids` is NULL or `cap` is too small the result is BP_ERR_BUFFER_TOO_SMALL, `*n_out` is the
/// number needed and the contents of `ids` are unspecified.
#[no_mangle]
pub extern "C" fn bp_encode(tok: *const bp_tokenizer, utf8: *const c_char, len: usize, flags: u32, ids: *mut u32, cap: usize, n_out: *mut usize) -> c_int {
    guard("bp_encode", || {
        let tok = &need(tok, "tok")?.inner;
        let n_out = need_mut(n_out, "n_out")?;
        *n_out = 0;
        let (t, text, opts) = prepare(tok, utf8, len, flags)?;
        let cap = if ids.is_null() { 0 } else { cap };
        let n = match t.model() {
            AnyModel::Rank(e) => {
                // SAFETY: `ids` holds `cap` u32 (the caller's promise); an empty slice if NULL.
                let buf = if cap == 0 { &mut [][..] } else { unsafe { std::slice::from_raw_parts_mut(ids, cap) } };
                let mut sink = SliceSink { buf, n: 0 };
                if opts.add_bos {
                    sink.push(t.bos_id().unwrap_or_default());
                }
                e.encode_into(text, &opts.allowed, &mut sink)?;
                if opts.add_eos {
                    sink.push(t.eos_id().unwrap_or_default());
                }
                sink.n
            }
            _ => IDS.with(|v| -> Result<usize, Fail> {
                let mut v = v.borrow_mut();
                v.clear();
                // Room for the most ids there can be (one per byte, and BOS/EOS), as the Python
                // binding reserves: growing by doubling copied and page-faulted a large text's
                // ids several times (SentencePiece on 4 MB of English: 0.93x the Python path,
                // 1.0x with this). Best effort: if the room cannot be had, the vector grows.
                let _ = v.try_reserve(len.saturating_add(2));
                t.encode_into(text, &opts, &mut v)?;
                if !ids.is_null() && v.len() <= cap {
                    // SAFETY: `ids` holds `cap >= v.len()` u32.
                    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), ids, v.len()) };
                }
                let n = v.len();
                // One huge text must not pin its ids' memory in this thread for good.
                if v.capacity() > IDS_KEPT {
                    *v = Vec::new();
                }
                Ok(n)
            })?,
        };
        *n_out = n;
        if n > cap {
            return fail(BP_ERR_BUFFER_TOO_SMALL, format!("{n} ids needed, the buffer holds {cap}"));
        }
        Ok(())
    })
}

/// How many ids bp_encode would give for the same arguments, without storing them.
#[no_mangle]
pub extern "C" fn bp_count(tok: *const bp_tokenizer, utf8: *const c_char, len: usize, flags: u32, n_out: *mut usize) -> c_int {
    guard("bp_count", || {
        let tok = &need(tok, "tok")?.inner;
        let n_out = need_mut(n_out, "n_out")?;
        *n_out = 0;
        let (t, text, opts) = prepare(tok, utf8, len, flags)?;
        *n_out = t.count(text, &opts)?;
        Ok(())
    })
}

// ------------------------------------------------------------------ decoding

/// Decodes `n` ids into bytes at `out` (room for `cap`), as the model's home system decodes
/// (SentencePiece drops control pieces and the dummy prefix). The bytes are not NUL-terminated
/// and may be invalid UTF-8 when the ids cut a character (bp_stream_step never does).
/// `flags`: BP_DECODE_SKIP_SPECIAL or 0. `*len_out` is the length; BP_ERR_BUFFER_TOO_SMALL
/// with the length needed when `out` is NULL or too small; BP_ERR_UNKNOWN_TOKEN for an id
/// outside the vocabulary.
#[no_mangle]
pub extern "C" fn bp_decode(tok: *const bp_tokenizer, ids: *const u32, n: usize, flags: u32, out: *mut c_char, cap: usize, len_out: *mut usize) -> c_int {
    guard("bp_decode", || {
        let tok = &need(tok, "tok")?.inner;
        let len_out = need_mut(len_out, "len_out")?;
        *len_out = 0;
        if flags & !DECODE_FLAGS != 0 {
            return fail(BP_ERR_INVALID_ARG, format!("unknown flag bits {:#x}", flags & !DECODE_FLAGS));
        }
        let ids: &[u32] = if n == 0 {
            &[]
        } else if ids.is_null() {
            return fail(BP_ERR_INVALID_ARG, format!("ids is NULL but n is {n}"));
        } else {
            // SAFETY: the caller promises `n` ids at `ids`.
            unsafe { std::slice::from_raw_parts(ids, n) }
        };
        let decoded = if flags & BP_DECODE_SKIP_SPECIAL != 0 {
            let kept: Vec<u32> = ids.iter().copied().filter(|id| tok.specials.binary_search(id).is_err()).collect();
            tok.tokenizer.decode_bytes(&kept)?
        } else {
            tok.tokenizer.decode_bytes(ids)?
        };
        write_out(&decoded, out.cast::<u8>(), cap, len_out, "bytes")
    })
}

/// A new streaming decoder over `tok` (`*out`; free it with bp_stream_free).
#[no_mangle]
pub extern "C" fn bp_stream_new(tok: *const bp_tokenizer, out: *mut *mut bp_stream) -> c_int {
    guard("bp_stream_new", || {
        let out = need_mut(out, "out")?;
        *out = std::ptr::null_mut();
        let tok = need(tok, "tok")?;
        *out = Box::into_raw(Box::new(bp_stream { inner: Arc::clone(&tok.inner), state: Default::default() }));
        Ok(())
    })
}

/// Decodes one more id: writes to `out` (room for `cap` bytes, not NUL-terminated) the text
/// that `id` completes: only whole UTF-8 characters; the bytes of a character split across ids
/// wait for the id that completes it (`*len_out` may be 0). Invalid bytes come out as U+FFFD.
/// BP_ERR_BUFFER_TOO_SMALL (with the length needed) leaves the stream as it was, so the same
/// id can be given again with a larger buffer; 16 bytes plus the longest token always suffice.
#[no_mangle]
pub extern "C" fn bp_stream_step(s: *mut bp_stream, id: u32, out: *mut c_char, cap: usize, len_out: *mut usize) -> c_int {
    guard("bp_stream_step", || {
        let s = need_mut(s, "s")?;
        let len_out = need_mut(len_out, "len_out")?;
        *len_out = 0;
        let step = s.state.step(&s.inner.tokenizer, id)?;
        write_out(&step.text, out.cast::<u8>(), cap, len_out, "bytes")?;
        s.state.commit(step);
        Ok(())
    })
}

/// Ends the text: writes what is held back (an unfinished character, as U+FFFD; usually
/// nothing) and resets the stream for a new text.
#[no_mangle]
pub extern "C" fn bp_stream_flush(s: *mut bp_stream, out: *mut c_char, cap: usize, len_out: *mut usize) -> c_int {
    guard("bp_stream_flush", || {
        let s = need_mut(s, "s")?;
        let len_out = need_mut(len_out, "len_out")?;
        *len_out = 0;
        write_out(&s.state.flush_text(), out.cast::<u8>(), cap, len_out, "bytes")?;
        s.state.reset();
        Ok(())
    })
}

/// Frees a stream. NULL is a no-op.
#[no_mangle]
pub extern "C" fn bp_stream_free(s: *mut bp_stream) {
    if !s.is_null() {
        // SAFETY: a non-NULL stream came from Box::into_raw in bp_stream_new and is freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(s) })));
    }
}

// ------------------------------------------------------------------ lookups

/// The bytes of token `id` as the vocabulary stores them (special tokens included):
/// `*bytes` points into the tokenizer (valid until bp_tokenizer_free; not NUL-terminated).
#[no_mangle]
pub extern "C" fn bp_token_to_bytes(tok: *const bp_tokenizer, id: u32, bytes: *mut *const u8, len: *mut usize) -> c_int {
    guard("bp_token_to_bytes", || {
        let tok = &need(tok, "tok")?.inner;
        let bytes = need_mut(bytes, "bytes")?;
        let len = need_mut(len, "len")?;
        *bytes = std::ptr::null();
        *len = 0;
        let b = tok.tokenizer.token_bytes(id)?;
        *bytes = b.as_ptr();
        *len = b.len();
        Ok(())
    })
}

/// The id of the token whose bytes are exactly these `len` bytes (ordinary or special);
/// BP_ERR_UNKNOWN_TOKEN when no token is.
#[no_mangle]
pub extern "C" fn bp_token_id(tok: *const bp_tokenizer, bytes: *const u8, len: usize, id: *mut u32) -> c_int {
    guard("bp_token_id", || {
        let tok = &need(tok, "tok")?.inner;
        let id = need_mut(id, "id")?;
        let data = self::bytes(bytes, len, "bytes")?;
        match tok.tokenizer.token_id(data) {
            Some(found) => {
                *id = found;
                Ok(())
            }
            None => fail(BP_ERR_UNKNOWN_TOKEN, format!("no token is the {len} bytes {:?}", String::from_utf8_lossy(data))),
        }
    })
}

/// The size of the id space (the largest id + 1); 0 for a NULL handle.
#[no_mangle]
pub extern "C" fn bp_vocab_size(tok: *const bp_tokenizer) -> usize {
    let Some(tok) = (unsafe { tok.as_ref() }) else { return 0 };
    catch_unwind(AssertUnwindSafe(|| tok.inner.tokenizer.n_vocab())).unwrap_or(0)
}

fn id_or_minus_one(tok: *const bp_tokenizer, f: impl Fn(&Inner) -> Option<u32>) -> i64 {
    // SAFETY: a non-NULL handle is one bp_tokenizer_* made.
    let Some(tok) = (unsafe { tok.as_ref() }) else { return -1 };
    f(&tok.inner).map_or(-1, i64::from)
}

/// The BOS id BP_ENCODE_ADD_BOS puts first, or -1 when there is none (or `tok` is NULL).
#[no_mangle]
pub extern "C" fn bp_bos_id(tok: *const bp_tokenizer) -> i64 {
    id_or_minus_one(tok, |t| t.tokenizer.bos_id())
}

/// The EOS id BP_ENCODE_ADD_EOS puts last, or -1 when there is none (or `tok` is NULL).
#[no_mangle]
pub extern "C" fn bp_eos_id(tok: *const bp_tokenizer) -> i64 {
    id_or_minus_one(tok, |t| t.tokenizer.eos_id())
}

/// The PAD id the file records (QTKR), or -1 when there is none (or `tok` is NULL).
#[no_mangle]
pub extern "C" fn bp_pad_id(tok: *const bp_tokenizer) -> i64 {
    id_or_minus_one(tok, |t| t.pad)
}

// ------------------------------------------------------------------ chat templates

/// Compiles the Jinja chat template at `source` (`len` bytes of UTF-8, a tokenizer_config.json's
/// `chat_template`) into `*out` (free it with bp_chat_template_free). It renders as
/// transformers' apply_chat_template(tokenize=False) does, with minijinja in place of jinja2
/// (docs/chat.md, "Engine"). BP_ERR_TEMPLATE when it does not compile; BP_ERR_UTF8.
#[no_mangle]
pub extern "C" fn bp_chat_template_new(source: *const c_char, len: usize, out: *mut *mut bp_chat_template) -> c_int {
    guard("bp_chat_template_new", || {
        let out = need_mut(out, "out")?;
        *out = std::ptr::null_mut();
        let source = utf8(bytes(source.cast::<u8>(), len, "source")?, "source")?;
        let inner = JinjaTemplate::plain(source).map_err(|e| Fail(BP_ERR_TEMPLATE, e.to_string()))?;
        *out = Box::into_raw(Box::new(bp_chat_template { inner }));
        Ok(())
    })
}

/// Renders the template with the variables of `context_json` (`len` bytes: a JSON object such
/// as `{"messages": [...], "add_generation_prompt": true, "bos_token": "<s>", "tools": [...]}`;
/// its keys keep their order) into `out` (room for `cap` bytes, not NUL-terminated).
/// `*len_out` is the text's length; BP_ERR_BUFFER_TOO_SMALL with the length needed when `out`
/// is NULL or too small (each call renders again). BP_ERR_TEMPLATE when the template fails,
/// runs past its instruction budget (about a second: a runaway loop in a model's template is
/// an error, not a hang) or the context is not a JSON object (the message says which);
/// BP_ERR_UTF8.
#[no_mangle]
pub extern "C" fn bp_chat_template_render(
    t: *const bp_chat_template,
    context_json: *const c_char,
    len: usize,
    out: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    guard("bp_chat_template_render", || {
        let t = need(t, "t")?;
        let len_out = need_mut(len_out, "len_out")?;
        *len_out = 0;
        let context = utf8(bytes(context_json.cast::<u8>(), len, "context_json")?, "context_json")?;
        let text = t.inner.render_json(context).map_err(|e| Fail(BP_ERR_TEMPLATE, e.to_string()))?;
        write_out(text.as_bytes(), out.cast::<u8>(), cap, len_out, "bytes")
    })
}

/// Frees a chat template. NULL is a no-op.
#[no_mangle]
pub extern "C" fn bp_chat_template_free(t: *mut bp_chat_template) {
    if !t.is_null() {
        // SAFETY: a non-NULL template came from Box::into_raw in bp_chat_template_new and is
        // freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(t) })));
    }
}


/// Panics inside the library, caught at the boundary: returns BP_ERR_PANIC. It exists so
/// that a caller's tests (and ours) can check the panic path; it has no other use.
#[no_mangle]
pub extern "C" fn bp_debug_panic() -> c_int {
    guard("bp_debug_panic", || panic!("bp_debug_panic was called"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_path(path: &str) -> (c_int, *mut bp_tokenizer) {
        let c = CString::new(path).unwrap();
        let mut tok = std::ptr::null_mut();
        (bp_tokenizer_load(c.as_ptr(), &mut tok), tok)
    }

    #[test]
    fn devices_and_fifos_are_refused_before_reading() {
        // /dev/zero was read until memory ran out (then the allocation failure aborted).
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let (code, tok) = load_path(dev);
            assert_eq!(code, BP_ERR_FORMAT as c_int, "{dev}");
            assert!(tok.is_null());
            let msg = unsafe { CStr::from_ptr(bp_last_error_message()) }.to_string_lossy().into_owned();
            assert!(msg.contains("not a regular file"), "{msg}");
        }
        // A FIFO with no writer blocked in open.
        let dir = std::env::temp_dir().join(format!("bp-capi-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (code, _) = load_path(fifo.to_str().unwrap());
        assert_eq!(code, BP_ERR_FORMAT as c_int);
        let (code, _) = load_path(dir.to_str().unwrap());
        assert_eq!(code, BP_ERR_IO as c_int);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn _handles_are_shareable() {
        fn sync<T: Send + Sync>() {}
        sync::<super::Inner>();
    }
}
