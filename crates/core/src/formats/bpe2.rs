//! BPE2 and BPZ2: compact binary vocabularies for rank BPE, little-endian throughout.
//!
//! ```text
//! offset  size  field
//!      0     4  magic "BPE2" (or "BPZ2": table and blob zstd-compressed)
//!      4     4  version, u32 = 2
//!      8     4  token_count, u32: entries in the token table (= largest id + 1)
//!     12     4  max_token_len, u32
//!     16     4  blob_size, u32
//!     20    32  source_hash: SHA-256 of the .tiktoken file this was made from (zeros if none)
//!     52    12  reserved: zero in BPE2; in BPZ2 the first 4 bytes are compressed_size, u32
//!     64   8*N  token table, by id: offset u32, length u32 into the blob; length 0 = no token
//!  64+8N     B  blob: the tokens' bytes
//! ```
//! In BPZ2 the table and the blob (8N + B bytes) are one zstd frame of `compressed_size`
//! bytes at offset 64; everything else is as in BPE2.
//!
//! After the blob (BPE2) or the compressed frame (BPZ2) an optional **trailing section** holds
//! what the base layout does not: the split pattern and which ids are special. A reader that
//! knows only the base layout stops at the end of the blob and never sees it.
//!
//! ```text
//!      0     4  magic "BPEM"
//!      4     4  section version, u32 = 1
//!      8     4  body_len, u32: the bytes that follow, up to the end of the file exactly
//!     12     .  name_len u32, name (UTF-8; may be empty)
//!              pattern_len u32, pattern (UTF-8; empty = not recorded)
//!              special_count u32, then per special token: id u32, len u32, spelling (UTF-8)
//! ```
//! A special token's spelling is also in the token table at its id (so a base-layout reader
//! decodes it); the trailer repeats it so that `inspect` needs no decompression.
//!
//! Fields are read byte by byte (`from_le_bytes`), never by casting pointers, so any alignment
//! is safe; every count and length is checked against the bytes present before anything is
//! allocated from it.


use crate::error::{Error, Result};
use crate::vocab::Vocab;

pub const MAGIC: &[u8; 4] = b"BPE2";
pub const MAGIC_ZSTD: &[u8; 4] = b"BPZ2";
pub const TRAILER_MAGIC: &[u8; 4] = b"BPEM";
pub const VERSION: u32 = 2;
pub const TRAILER_VERSION: u32 = 1;
pub const HEADER_LEN: usize = 64;
/// BPZ2 refuses to inflate to more than this, or to more than [`MAX_RATIO`] times the
/// compressed size when that is larger: a real vocabulary compresses 2-4x, and a forged header
/// must not make the reader allocate gigabytes.
pub const MAX_INFLATE_FLOOR: u64 = 64 << 20;
pub const MAX_RATIO: u64 = 64;

/// What the trailing section holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub name: String,
    pub pattern: String,
    /// (spelling, id) of each special token.
    pub specials: Vec<(String, u32)>,
}

/// The header and trailing section of a BPE2/BPZ2 file, read without touching the table.
#[derive(Debug, Clone)]
pub struct Info {
    pub compressed: bool,
    pub token_count: u32,
    pub max_token_len: u32,
    pub blob_size: u32,
    pub source_hash: [u8; 32],
    /// BPZ2 only: the size of the zstd frame.
    pub compressed_size: Option<u32>,
    pub meta: Option<Meta>,
    /// Where the table (BPE2) or the frame (BPZ2) starts and ends.
    payload: (usize, usize),
}

/// A BPE2 file's contents: the id table, the blob and the hash of its source.
#[derive(Debug, Clone)]
pub struct Bpe2 {
    pub spans: Vec<(u32, u32)>,
    pub blob: Vec<u8>,
    pub source_hash: [u8; 32],
    pub meta: Option<Meta>,
    pub compressed: bool,
}

fn u32_at(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

fn err(at: usize, field: &str, message: impl std::fmt::Display) -> Error {
    Error::format(format!("byte {at} ({field})"), message.to_string())
}

/// Reads the header and the trailing section; checks every size against the file's length.
pub fn read_info(data: &[u8]) -> Result<Info> {
    let mut info = read_header(data, data.len())?;
    let payload_end = info.payload.1;
    info.meta = if payload_end < data.len() { Some(read_trailer(&data[payload_end..], payload_end)?) } else { None };
    Ok(info)
}

/// The header, at the start of `data`, of a file of `file_len` bytes (`data` may hold just the
/// header): every size is checked against `file_len`. `meta` is left `None`.
fn read_header(data: &[u8], file_len: usize) -> Result<Info> {
    if data.len() < HEADER_LEN {
        return Err(err(0, "header", format!("file is {} bytes, shorter than the 64-byte header", data.len())));
    }
    let compressed = match &data[0..4] {
        m if m == MAGIC => false,
        m if m == MAGIC_ZSTD => true,
        m => return Err(err(0, "magic", format!("expected b\"BPE2\" or b\"BPZ2\", found {m:?}"))),
    };
    let version = u32_at(data, 4);
    if version != VERSION {
        return Err(err(4, "version", format!("expected {VERSION}, found {version}")));
    }
    let token_count = u32_at(data, 8);
    let max_token_len = u32_at(data, 12);
    let blob_size = u32_at(data, 16);
    let mut source_hash = [0u8; 32];
    source_hash.copy_from_slice(&data[20..52]);
    let zero_from = if compressed { 56 } else { 52 };
    if data[zero_from..64].iter().any(|&b| b != 0) {
        return Err(err(zero_from, "reserved", format!("expected {} zero bytes", 64 - zero_from)));
    }
    let inflated = 8 * token_count as u64 + blob_size as u64;
    let (payload_end, compressed_size) = if compressed {
        let csize = u32_at(data, 52);
        let end = HEADER_LEN as u64 + csize as u64;
        if (file_len as u64) < end {
            return Err(err(52, "compressed_size", format!("a {csize}-byte zstd frame needs {end} bytes, the file has {file_len}")));
        }
        let limit = MAX_INFLATE_FLOOR.max(MAX_RATIO * csize as u64);
        if inflated > limit {
            return Err(err(8, "token_count/blob_size", format!(
                "{token_count} table entries and a {blob_size}-byte blob would inflate a {csize}-byte frame to {inflated} bytes (limit {limit})")));
        }
        (end as usize, Some(csize))
    } else {
        let end = HEADER_LEN as u64 + inflated;
        if (file_len as u64) < end {
            return Err(err(8, "token_count/blob_size", format!(
                "{token_count} table entries and a {blob_size}-byte blob need {end} bytes, the file has {file_len}")));
        }
        (end as usize, None)
    };
    Ok(Info { compressed, token_count, max_token_len, blob_size, source_hash, compressed_size, meta: None, payload: (HEADER_LEN, payload_end) })
}

/// A cursor over the trailing section that names the field and file offset of any failure.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
    /// The file offset of `data[0]`.
    base: usize,
}

impl<'a> Cursor<'a> {
    fn u32(&mut self, field: &str) -> Result<u32> {
        if self.data.len() - self.at < 4 {
            return Err(err(self.base + self.at, field, "expected a u32, found the end of the file"));
        }
        let v = u32_at(self.data, self.at);
        self.at += 4;
        Ok(v)
    }
    fn str(&mut self, field: &str) -> Result<String> {
        let len_at = self.base + self.at;
        let len = self.u32(field)? as usize;
        if self.data.len() - self.at < len {
            return Err(err(len_at, field, format!("length {len} runs past the end of the file ({} bytes left)", self.data.len() - self.at)));
        }
        let bytes = &self.data[self.at..self.at + len];
        let s = std::str::from_utf8(bytes).map_err(|e| err(self.base + self.at, field, format!("not UTF-8: {e}")))?;
        self.at += len;
        Ok(s.to_owned())
    }
}

/// The trailing section: `data` is the file from the section's start, at file offset `base`,
/// to the end of the file.
fn read_trailer(data: &[u8], base: usize) -> Result<Meta> {
    let err = |at: usize, field: &str, message: String| err(base + at, field, message);
    let rest = data.len();
    if rest < 12 {
        return Err(err(0, "trailing section", format!("{rest} bytes after the table; a trailing section has a 12-byte header")));
    }
    if &data[0..4] != TRAILER_MAGIC {
        return Err(err(0, "trailing section magic", format!("expected b\"BPEM\" after the table, found {:?}", &data[0..4])));
    }
    let version = u32_at(data, 4);
    if version != TRAILER_VERSION {
        return Err(err(4, "trailing section version", format!("expected {TRAILER_VERSION}, found {version}")));
    }
    let body_len = u32_at(data, 8) as usize;
    if body_len != rest - 12 {
        return Err(err(8, "trailing section length", format!("says {body_len} bytes follow, the file has {}", rest - 12)));
    }
    let mut c = Cursor { data, at: 12, base };
    let name = c.str("name")?;
    let pattern = c.str("pattern")?;
    let count_at = c.at;
    let count = c.u32("special_count")? as usize;
    // Each entry takes at least 8 bytes: check before reserving room for them.
    if count > (data.len() - c.at) / 8 {
        return Err(err(count_at, "special_count", format!("{count} special tokens cannot fit in the {} bytes left", data.len() - c.at)));
    }
    let mut specials = Vec::with_capacity(count);
    for _ in 0..count {
        let id = c.u32("special id")?;
        let spelling = c.str("special spelling")?;
        if spelling.is_empty() {
            return Err(err(c.at - 4, "special spelling", format!("special token {id} has an empty spelling")));
        }
        specials.push((spelling, id));
    }
    if c.at != data.len() {
        return Err(err(c.at, "trailing section", format!("{} unexpected bytes at the end", data.len() - c.at)));
    }
    Ok(Meta { name, pattern, specials })
}

/// Reads and checks a BPE2 or BPZ2 file held in memory.
pub fn read(data: &[u8]) -> Result<Bpe2> {
    let info = read_info(data)?;
    let count = info.token_count as usize;
    let blob_size = info.blob_size as usize;
    let inflated;
    let table: &[u8] = if info.compressed {
        let frame = &data[info.payload.0..info.payload.1];
        let want = 8 * count + blob_size;
        inflated = zstd::bulk::decompress(frame, want)
            .map_err(|e| err(HEADER_LEN, "zstd frame", format!("does not decompress to the {want}-byte table and blob: {e}")))?;
        if inflated.len() != want {
            return Err(err(HEADER_LEN, "zstd frame", format!("decompresses to {} bytes, the header says {want}", inflated.len())));
        }
        &inflated
    } else {
        &data[info.payload.0..info.payload.1]
    };
    // Offsets in errors are file offsets for BPE2, offsets into the inflated data for BPZ2.
    let (base, where_) = if info.compressed { (0, "token table (inflated)") } else { (HEADER_LEN, "token table") };
    let mut spans = Vec::with_capacity(count);
    push_spans(&mut spans, &table[..8 * count], &info, base, where_)?;
    let blob = table[8 * count..8 * count + blob_size].to_vec();
    let file = Bpe2 { spans, blob, source_hash: info.source_hash, meta: info.meta, compressed: info.compressed };
    check_specials(&file)?;
    Ok(file)
}

/// Decodes and checks table entries (8 bytes each) onto `spans`; `base` is the file offset of
/// entry `spans.len()` (as given), for error messages.
fn push_spans(spans: &mut Vec<(u32, u32)>, entries: &[u8], info: &Info, base: usize, where_: &str) -> Result<()> {
    let blob_size = info.blob_size;
    for (k, e) in entries.chunks_exact(8).enumerate() {
        let id = spans.len();
        let at = base + 8 * k;
        let (off, len) = (u32_at(e, 0), u32_at(e, 4));
        if off as u64 + len as u64 > blob_size as u64 {
            return Err(err(at, where_, format!("token {id} spans {off}..{} past the {blob_size}-byte blob", off as u64 + len as u64)));
        }
        if len > info.max_token_len {
            return Err(err(at + 4, where_, format!("token {id} is {len} bytes, more than max_token_len {}", info.max_token_len)));
        }
        spans.push((off, len));
    }
    Ok(())
}

/// The trailing section's special tokens must be in the table at their ids. An id may have two
/// spellings (o200k_harmony's 200018 is `<|endofprompt|>` and `<|reserved_200018|>`): the table
/// holds the first one listed, the one the id decodes to, and a later one is a second name for it.
fn check_specials(file: &Bpe2) -> Result<()> {
    if let Some(meta) = &file.meta {
        let mut named = std::collections::HashSet::new();
        for (spelling, id) in &meta.specials {
            match file.token(*id) {
                Some(t) if t == spelling.as_bytes() => {
                    named.insert(*id);
                }
                Some(_) if named.contains(id) => {}
                Some(t) => return Err(err(0, "trailing section", format!(
                    "special token {spelling:?} has id {id}, but the table holds {:?} there", String::from_utf8_lossy(t)))),
                None => return Err(err(0, "trailing section", format!(
                    "special token {spelling:?} has id {id}, which has no entry in the {}-entry table", file.spans.len()))),
            }
        }
    }
    Ok(())
}

/// Table entries decoded per read in [`read_from`]: 32 KiB of file at a time.
const ENTRIES_PER_READ: usize = 4096;

/// Reads a BPE2 file of `file_len` bytes from `r` straight into the table it becomes: the
/// header, then the token table a chunk at a time into `spans`, then the blob into its own
/// buffer, then the trailing section. The file is never held in memory whole, so loading
/// copies each byte once (from the OS into its final place) and touches no memory for a
/// buffer that is thrown away. The checks and errors are those of [`read`]; a BPZ2 file (or
/// one that is neither) is read whole and handed to [`read`].
pub fn read_from<R: std::io::Read>(r: &mut R, file_len: u64) -> Result<Bpe2> {
    let mut head = [0u8; HEADER_LEN];
    let got = read_up_to(r, &mut head)?;
    if got < HEADER_LEN || &head[0..4] != MAGIC {
        let mut data = head[..got].to_vec();
        r.read_to_end(&mut data).map_err(io)?;
        return read(&data);
    }
    let file_len = usize::try_from(file_len).map_err(|_| err(0, "header", "file too large for this platform"))?;
    let info = read_header(&head, file_len)?;
    let count = info.token_count as usize;
    let mut spans = Vec::with_capacity(count);
    let mut chunk = vec![0u8; 8 * ENTRIES_PER_READ.min(count)];
    while spans.len() < count {
        let entries = &mut chunk[..8 * (count - spans.len()).min(ENTRIES_PER_READ)];
        r.read_exact(entries).map_err(io)?;
        let base = HEADER_LEN + 8 * spans.len();
        push_spans(&mut spans, entries, &info, base, "token table")?;
    }
    let mut blob = vec![0u8; info.blob_size as usize];
    r.read_exact(&mut blob).map_err(io)?;
    let payload_end = info.payload.1;
    let mut rest = Vec::with_capacity(file_len - payload_end);
    r.read_to_end(&mut rest).map_err(io)?;
    if rest.len() != file_len - payload_end {
        return Err(Error::Io(std::io::Error::other(format!(
            "the file changed while it was read ({} bytes expected after the table, {} found)", file_len - payload_end, rest.len()))));
    }
    let meta = if rest.is_empty() { None } else { Some(read_trailer(&rest, payload_end)?) };
    let file = Bpe2 { spans, blob, source_hash: info.source_hash, meta, compressed: false };
    check_specials(&file)?;
    Ok(file)
}

/// Fills `buf` from `r` as far as the data goes; returns how many bytes were read.
fn read_up_to<R: std::io::Read>(r: &mut R, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(got)
}

fn io(e: std::io::Error) -> Error {
    Error::Io(e)
}

/// Writes a vocabulary as BPE2 (or BPZ2 when `zstd_level` is given), with a trailing section
/// when `meta` is given. `meta.specials` should name the vocabulary's special tokens.
pub fn write(vocab: &Vocab, source_hash: [u8; 32], meta: Option<&Meta>, zstd_level: Option<i32>) -> Result<Vec<u8>> {
    let spans = vocab.spans();
    let blob = vocab.blob();
    let mut payload = Vec::with_capacity(8 * spans.len() + blob.len());
    for &(off, len) in spans {
        payload.extend_from_slice(&off.to_le_bytes());
        payload.extend_from_slice(&len.to_le_bytes());
    }
    payload.extend_from_slice(blob);
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(if zstd_level.is_some() { MAGIC_ZSTD } else { MAGIC });
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(spans.len() as u32).to_le_bytes());
    out.extend_from_slice(&(vocab.max_token_len() as u32).to_le_bytes());
    out.extend_from_slice(&(blob.len() as u32).to_le_bytes());
    out.extend_from_slice(&source_hash);
    match zstd_level {
        Some(level) => {
            let frame = zstd::bulk::compress(&payload, level).map_err(|e| Error::Vocab(format!("zstd: {e}")))?;
            out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            out.extend_from_slice(&[0u8; 8]);
            out.extend_from_slice(&frame);
        }
        None => {
            out.extend_from_slice(&[0u8; 12]);
            out.extend_from_slice(&payload);
        }
    }
    if let Some(meta) = meta {
        let mut body = Vec::new();
        let mut put = |b: &[u8]| {
            body.extend_from_slice(&(b.len() as u32).to_le_bytes());
            body.extend_from_slice(b);
        };
        put(meta.name.as_bytes());
        put(meta.pattern.as_bytes());
        body.extend_from_slice(&(meta.specials.len() as u32).to_le_bytes());
        for (spelling, id) in &meta.specials {
            body.extend_from_slice(&id.to_le_bytes());
            body.extend_from_slice(&(spelling.len() as u32).to_le_bytes());
            body.extend_from_slice(spelling.as_bytes());
        }
        out.extend_from_slice(TRAILER_MAGIC);
        out.extend_from_slice(&TRAILER_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
    }
    Ok(out)
}

impl Bpe2 {
    /// The bytes at `id`, or `None` for a hole or an id past the table.
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        match self.spans.get(id as usize) {
            Some(&(off, len)) if len > 0 => Some(&self.blob[off as usize..(off + len) as usize]),
            _ => None,
        }
    }

    /// The special tokens recorded in the trailing section (none without one).
    pub fn recorded_specials(&self) -> Vec<(String, u32)> {
        self.meta.as_ref().map(|m| m.specials.clone()).unwrap_or_default()
    }

    /// The vocabulary, with `specials` `(spelling, id)` marked special. A special may already be
    /// in the table at its id with the same bytes; otherwise its id must be free.
    pub fn into_vocab(self, specials: &[(String, u32)]) -> Result<Vocab> {
        let Bpe2 { mut spans, mut blob, .. } = self;
        // Ids bounded by the table before anything is sized by them: a special at id 2**31-1
        // made a 16 GiB table (and aborted the process). The bound is `Vocab::new`'s, so a
        // file loads exactly when the same tokens given as ranks do.
        let limit = 16 * (spans.len() + specials.len()) as u64 + (1 << 20);
        if let Some((spelling, id)) = specials.iter().find(|s| s.1 > crate::vocab::MAX_TOKEN_ID || s.1 as u64 > limit) {
            return Err(Error::Vocab(format!(
                "special token {spelling:?} has id {id}, far beyond the {} tokens in the table; ids must be dense",
                spans.len()
            )));
        }
        // Room for the specials in one step (exact, not doubling: a table can be megabytes).
        let top = specials.iter().map(|s| s.1 as usize + 1).max().unwrap_or(0);
        if top > spans.len() {
            spans.reserve_exact(top - spans.len());
        }
        blob.reserve_exact(specials.iter().map(|s| s.0.len()).sum());
        let mut special_ids = Vec::with_capacity(specials.len());
        for (spelling, id) in specials {
            let i = *id as usize;
            if *id > crate::vocab::MAX_TOKEN_ID {
                return Err(Error::Vocab(format!("special token {spelling:?} has id {id}, too large")));
            }
            if i >= spans.len() {
                spans.resize(i + 1, (0, 0));
            }
            let (off, len) = spans[i];
            if len > 0 {
                let alias = special_ids.contains(id);
                if !alias && &blob[off as usize..(off + len) as usize] != spelling.as_bytes() {
                    return Err(Error::Vocab(format!("special token {spelling:?} has id {id}, which the table gives to another token")));
                }
            } else {
                spans[i] = (blob.len() as u32, spelling.len() as u32);
                blob.extend_from_slice(spelling.as_bytes());
            }
            special_ids.push(*id);
        }
        Vocab::from_table(spans, blob, special_ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> Vocab {
        let toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain([b"ab".to_vec()]).collect();
        Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), [(b"<s>".as_slice(), 300)]).unwrap()
    }

    #[test]
    fn round_trip_and_hostile() {
        let v = toy();
        let data = write(&v, [7; 32], None, None).unwrap();
        let back = read(&data).unwrap();
        assert_eq!(back.source_hash, [7; 32]);
        assert!(back.meta.is_none());
        let v2 = back.into_vocab(&[("<s>".into(), 300), ("<t>".into(), 301)]).unwrap();
        assert_eq!(v2.rank(b"ab"), Some(256));
        assert_eq!(v2.token(301), Some(b"<t>".as_slice()));

        assert!(read(&data[..40]).unwrap_err().to_string().contains("header"));
        assert!(read(&data[..data.len() - 1]).unwrap_err().to_string().contains("need"));
        let mut bad = data.clone();
        bad[0] = b'X';
        assert!(read(&bad).unwrap_err().to_string().contains("magic"));
        let mut bad = data.clone();
        bad[64 + 8 * 256..64 + 8 * 256 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&bad).unwrap_err().to_string().contains("past the"));
    }

    /// `read_from` (streaming, as files are loaded) agrees with `read` on every file, good or bad.
    #[test]
    fn read_from_agrees_with_read() {
        let v = toy();
        let meta = Meta { name: "toy".into(), pattern: r"\w+".into(), specials: vec![("<s>".into(), 300)] };
        let plain = write(&v, [1; 32], Some(&meta), None).unwrap();
        let packed = write(&v, [1; 32], Some(&meta), Some(19)).unwrap();
        let bare = write(&v, [1; 32], None, None).unwrap();
        let mut bad_span = bare.clone();
        bad_span[64 + 8 * 200..64 + 8 * 200 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut bad_trailer = plain.clone();
        let n = bad_trailer.len();
        bad_trailer[n - 5] ^= 0xff;
        let mut cases = vec![plain.clone(), packed, bare.clone(), bad_span, bad_trailer, plain[..40].to_vec(), vec![]];
        for cut in [64, 64 + 8 * 100 + 3, bare.len() - 1, bare.len() + 5] {
            cases.push(plain[..cut].to_vec());
        }
        for data in cases {
            let want = read(&data);
            let got = read_from(&mut &data[..], data.len() as u64);
            match (want, got) {
                (Ok(a), Ok(b)) => {
                    assert_eq!((a.spans, a.blob, a.meta, a.source_hash), (b.spans, b.blob, b.meta, b.source_hash));
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("read gave {a:?}, read_from gave {b:?}"),
            }
        }
    }

    #[test]
    fn trailer_and_zstd() {
        let v = toy();
        let meta = Meta { name: "toy".into(), pattern: r"\w+".into(), specials: vec![("<s>".into(), 300)] };
        let plain = write(&v, [1; 32], Some(&meta), None).unwrap();
        let packed = write(&v, [1; 32], Some(&meta), Some(19)).unwrap();
        for data in [&plain, &packed] {
            let f = read(data).unwrap();
            assert_eq!(f.meta.as_ref(), Some(&meta));
            assert_eq!(f.spans, v.spans());
            assert_eq!(f.blob, v.blob());
        }
        // A base-layout reader stops at the blob: the first 64 + 8N + B bytes are plain BPE2.
        let base = write(&v, [1; 32], None, None).unwrap();
        assert_eq!(&plain[..base.len()], &base[..]);
        // The trailer's length must reach the end of the file exactly.
        let mut bad = plain.clone();
        bad.push(0);
        assert!(read(&bad).unwrap_err().to_string().contains("trailing section length"));
        // A forged inflated size is refused before any allocation.
        let mut bad = packed.clone();
        bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&bad).unwrap_err().to_string().contains("limit"));
        // A second spelling of an id, after the one the table holds, reads back (the other
        // order does not: the table holds the first spelling listed).
        let alias = Meta { specials: vec![("<s>".into(), 300), ("<start>".into(), 300)], ..meta.clone() };
        let f = read(&write(&v, [1; 32], Some(&alias), None).unwrap()).unwrap();
        assert_eq!(f.meta.as_ref(), Some(&alias));
        let swapped = Meta { specials: vec![("<start>".into(), 300), ("<s>".into(), 300)], ..meta.clone() };
        assert!(read(&write(&v, [1; 32], Some(&swapped), None).unwrap()).unwrap_err().to_string().contains("holds"));
        // A special whose id holds another token.
        let wrong = Meta { specials: vec![("<s>".into(), 97)], ..meta };
        let bad = write(&v, [1; 32], Some(&wrong), None).unwrap();
        assert!(read(&bad).unwrap_err().to_string().contains("holds"));
    }
}
