//! QTKR, a merge-list vocabulary, little-endian:
//!
//! ```text
//! offset  size  field
//!      0     4  magic u32 0x51544B52 (the bytes "RKTQ" on disk)
//!      4     4  version u32 = 1
//!      8     4  vocab_size u32
//!     12     4  num_merges u32
//!     16    12  bos_token_id, eos_token_id, pad_token_id u32 (0xFFFFFFFF = none)
//!     28     4  reserved u32 = 0
//!     32     .  per token id: length u8, bytes (length 0 = no token at this id)
//!      .  12*M  per merge: token_id1 u32, token_id2 u32, merged_id u32, applied in this order
//! ```

use crate::error::{Error, Result};

pub const MAGIC: u32 = 0x5154_4B52;
pub const VERSION: u32 = 1;
pub const HEADER_LEN: usize = 32;
pub const NO_ID: u32 = u32::MAX;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qtkr {
    pub tokens: Vec<Vec<u8>>,
    pub merges: Vec<(u32, u32, u32)>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub pad: Option<u32>,
}

fn bad(at: usize, field: &str, message: impl Into<String>) -> Error {
    Error::format(format!("byte {at} ({field})"), message)
}

fn u32_at(d: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]])
}

pub fn read(data: &[u8]) -> Result<Qtkr> {
    if data.len() < HEADER_LEN {
        return Err(bad(0, "header", format!("file is {} bytes, shorter than the 32-byte header", data.len())));
    }
    let magic = u32_at(data, 0);
    if magic != MAGIC {
        return Err(bad(0, "magic", format!("expected 0x51544B52 ('QTKR'), found {magic:#010x}")));
    }
    let version = u32_at(data, 4);
    if version != VERSION {
        return Err(bad(4, "version", format!("expected {VERSION}, found {version}")));
    }
    let vocab_size = u32_at(data, 8) as usize;
    let num_merges = u32_at(data, 12) as usize;
    if u32_at(data, 28) != 0 {
        return Err(bad(28, "reserved", "expected 0"));
    }
    // Every token takes at least its length byte: bound the count before allocating.
    if vocab_size > data.len() - HEADER_LEN {
        return Err(bad(8, "vocab_size", format!("{vocab_size} tokens cannot fit in the {} bytes after the header", data.len() - HEADER_LEN)));
    }
    let mut tokens = Vec::with_capacity(vocab_size);
    let mut at = HEADER_LEN;
    for id in 0..vocab_size {
        let Some(&len) = data.get(at) else {
            return Err(bad(at, &format!("token {id} length"), "the file ends inside the token list"));
        };
        let start = at + 1;
        if data.len() - start < len as usize {
            return Err(bad(at, &format!("token {id} length"), format!("{len} bytes run past the end of the file")));
        }
        tokens.push(data[start..start + len as usize].to_vec());
        at = start + len as usize;
    }
    let rest = data.len() - at;
    if rest as u64 != 12 * num_merges as u64 {
        return Err(bad(12, "num_merges", format!(
            "{num_merges} merges need {} bytes after the tokens (which end at byte {at}); the file has {rest}", 12 * num_merges as u64)));
    }
    let mut merges = Vec::with_capacity(num_merges);
    for k in 0..num_merges {
        let p = at + 12 * k;
        let (a, b, m) = (u32_at(data, p), u32_at(data, p + 4), u32_at(data, p + 8));
        for (v, off, name) in [(a, 0, "token_id1"), (b, 4, "token_id2"), (m, 8, "merged_id")] {
            if v as usize >= vocab_size || tokens[v as usize].is_empty() {
                return Err(bad(p + off, &format!("merge {k} {name}"), format!("{v} is not a token id (vocab_size {vocab_size})")));
            }
        }
        let (ta, tb, tm) = (&tokens[a as usize], &tokens[b as usize], &tokens[m as usize]);
        if ta.len() + tb.len() != tm.len() || !tm.starts_with(ta) || !tm.ends_with(tb) {
            return Err(bad(p, &format!("merge {k}"), format!(
                "token {a} + token {b} is not token {m} ({:?} + {:?} != {:?})",
                String::from_utf8_lossy(ta), String::from_utf8_lossy(tb), String::from_utf8_lossy(tm))));
        }
        merges.push((a, b, m));
    }
    let id_field = |at: usize, name: &str| -> Result<Option<u32>> {
        match u32_at(data, at) {
            NO_ID => Ok(None),
            v if (v as usize) < vocab_size => Ok(Some(v)),
            v => Err(bad(at, name, format!("{v} is not a token id (vocab_size {vocab_size})"))),
        }
    };
    Ok(Qtkr { bos: id_field(16, "bos_token_id")?, eos: id_field(20, "eos_token_id")?, pad: id_field(24, "pad_token_id")?, tokens, merges })
}

pub fn write(q: &Qtkr) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for v in [MAGIC, VERSION, q.tokens.len() as u32, q.merges.len() as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [q.bos, q.eos, q.pad] {
        out.extend_from_slice(&v.unwrap_or(NO_ID).to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    for (id, t) in q.tokens.iter().enumerate() {
        if t.len() > 255 {
            return Err(Error::Vocab(format!(
                "token {id} is {} bytes; QTKR stores lengths in one byte, so tokens longer than 255 bytes cannot be written", t.len())));
        }
        out.push(t.len() as u8);
        out.extend_from_slice(t);
    }
    for &(a, b, m) in &q.merges {
        for v in [a, b, m] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let q = Qtkr { tokens: vec![b"a".to_vec(), b"b".to_vec(), b"ab".to_vec()], merges: vec![(0, 1, 2)], bos: None, eos: Some(1), pad: None };
        let data = write(&q).unwrap();
        assert_eq!(&data[..4], b"RKTQ");
        assert_eq!(read(&data).unwrap(), q);
        assert!(read(&data[..data.len() - 1]).unwrap_err().to_string().contains("num_merges"));
        let mut bad = data.clone();
        bad[data.len() - 4..].copy_from_slice(&1u32.to_le_bytes());
        assert!(read(&bad).unwrap_err().to_string().contains("is not token 1"));
        let long = Qtkr { tokens: vec![vec![b'x'; 256]], ..q };
        assert!(write(&long).unwrap_err().to_string().contains("255"));
    }
}
