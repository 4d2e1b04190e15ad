//! BPE2: a compact binary vocabulary for rank BPE, little-endian throughout.
//!
//! ```text
//! offset  size  field
//!      0     4  magic "BPE2"
//!      4     4  version, u32 = 2
//!      8     4  token_count, u32: entries in the token table (= largest id + 1)
//!     12     4  max_token_len, u32
//!     16     4  blob_size, u32
//!     20    32  source_hash: SHA-256 of the .tiktoken file this was made from (zeros if none)
//!     52    12  reserved, zero
//!     64   8*N  token table, by id: offset u32, length u32 into the blob; length 0 = no token
//!  64+8N     B  blob: the tokens' bytes
//! ```
//! Anything after the blob is a trailing section this reader ignores. Fields are read byte by
//! byte (`from_le_bytes`), never by casting pointers, so any alignment is safe.

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::vocab::Vocab;

pub const MAGIC: &[u8; 4] = b"BPE2";
pub const VERSION: u32 = 2;
pub const HEADER_LEN: usize = 64;

/// A BPE2 file's contents: the id table, the blob and the hash of its source.
#[derive(Debug, Clone)]
pub struct Bpe2 {
    pub spans: Vec<(u32, u32)>,
    pub blob: Vec<u8>,
    pub source_hash: [u8; 32],
}

fn u32_at(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

fn err(at: usize, field: &str, message: impl std::fmt::Display) -> Error {
    Error::format(format!("byte {at} ({field})"), message.to_string())
}

/// Reads and checks a BPE2 file held in memory.
pub fn read(data: &[u8]) -> Result<Bpe2> {
    if data.len() < HEADER_LEN {
        return Err(err(0, "header", format!("file is {} bytes, shorter than the 64-byte header", data.len())));
    }
    if &data[0..4] != MAGIC {
        return Err(err(0, "magic", format!("expected b\"BPE2\", found {:?}", &data[0..4])));
    }
    let version = u32_at(data, 4);
    if version != VERSION {
        return Err(err(4, "version", format!("expected {VERSION}, found {version}")));
    }
    let count = u32_at(data, 8) as usize;
    let max_len = u32_at(data, 12);
    let blob_size = u32_at(data, 16) as usize;
    let mut source_hash = [0u8; 32];
    source_hash.copy_from_slice(&data[20..52]);
    if data[52..64].iter().any(|&b| b != 0) {
        return Err(err(52, "reserved", "expected 12 zero bytes"));
    }
    let table_end = HEADER_LEN as u64 + 8 * count as u64;
    let need = table_end + blob_size as u64;
    if (data.len() as u64) < need {
        return Err(err(
            8,
            "token_count/blob_size",
            format!("{count} table entries and a {blob_size}-byte blob need {need} bytes, the file has {}", data.len()),
        ));
    }
    let table_end = table_end as usize;
    let mut spans = Vec::with_capacity(count);
    for id in 0..count {
        let at = HEADER_LEN + 8 * id;
        let (off, len) = (u32_at(data, at), u32_at(data, at + 4));
        if off as u64 + len as u64 > blob_size as u64 {
            return Err(err(at, "token table", format!("token {id} spans {off}..{} past the {blob_size}-byte blob", off as u64 + len as u64)));
        }
        if len > max_len {
            return Err(err(at + 4, "token table", format!("token {id} is {len} bytes, more than max_token_len {max_len}")));
        }
        spans.push((off, len));
    }
    let blob = data[table_end..table_end + blob_size].to_vec();
    Ok(Bpe2 { spans, blob, source_hash })
}

/// Writes a vocabulary as BPE2. Special tokens are written at their ids like any other token.
pub fn write(vocab: &Vocab, source_hash: [u8; 32]) -> Vec<u8> {
    let spans = vocab.spans();
    let blob = vocab.blob();
    let mut out = Vec::with_capacity(HEADER_LEN + 8 * spans.len() + blob.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(spans.len() as u32).to_le_bytes());
    out.extend_from_slice(&(vocab.max_token_len() as u32).to_le_bytes());
    out.extend_from_slice(&(blob.len() as u32).to_le_bytes());
    out.extend_from_slice(&source_hash);
    out.extend_from_slice(&[0u8; 12]);
    for &(off, len) in spans {
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(blob);
    out
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

impl Bpe2 {
    /// The vocabulary, with `specials` `(spelling, id)` marked special. A special may already be
    /// in the table at its id with the same bytes; otherwise its id must be free.
    pub fn into_vocab(self, specials: &[(String, u32)]) -> Result<Vocab> {
        let Bpe2 { mut spans, mut blob, .. } = self;
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

    #[test]
    fn round_trip_and_hostile() {
        let toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain([b"ab".to_vec()]).collect();
        let v = Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), []).unwrap();
        let data = write(&v, [7; 32]);
        let back = read(&data).unwrap();
        assert_eq!(back.source_hash, [7; 32]);
        let v2 = back.into_vocab(&[("<s>".into(), 300)]).unwrap();
        assert_eq!(v2.rank(b"ab"), Some(256));
        assert_eq!(v2.token(300), Some(b"<s>".as_slice()));

        assert!(read(&data[..40]).unwrap_err().to_string().contains("header"));
        assert!(read(&data[..data.len() - 1]).unwrap_err().to_string().contains("need"));
        let mut bad = data.clone();
        bad[0] = b'X';
        assert!(read(&bad).unwrap_err().to_string().contains("magic"));
        let mut bad = data.clone();
        bad[64 + 8 * 256..64 + 8 * 256 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&bad).unwrap_err().to_string().contains("past the"));
    }
}
