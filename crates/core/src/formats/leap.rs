//! LEAP / llama2.c scored vocabulary (`tokenizer.bin`), little-endian:
//!
//! ```text
//! max_token_length  i32
//! per token id 0, 1, ...:  score f32, length i32, bytes[length]
//! ```
//! The file does not store the number of tokens: records run to the end of the file.

use crate::error::{Error, Result};

/// Token lengths above this are refused (llama2.c allocates per token; real ones are short).
pub const MAX_LEN: i32 = 1 << 16;

fn bad(at: usize, field: &str, message: impl Into<String>) -> Error {
    Error::format(format!("byte {at} ({field})"), message)
}

/// A table's tokens by id: `(bytes, score)`.
pub type Tokens = Vec<(Vec<u8>, f32)>;

/// `(max_token_length, tokens)`.
pub fn read(data: &[u8]) -> Result<(u32, Tokens)> {
    if data.len() < 4 {
        return Err(bad(0, "max_token_length", format!("file is {} bytes; expected a 4-byte header", data.len())));
    }
    let max = i32::from_le_bytes(data[0..4].try_into().expect("4 bytes"));
    if max <= 0 || max > MAX_LEN {
        return Err(bad(0, "max_token_length", format!("{max} is not between 1 and {MAX_LEN}")));
    }
    // Each record takes at least 8 bytes: the count is bounded by the file size.
    let mut tokens = Vec::with_capacity((data.len() - 4) / 8);
    let mut at = 4;
    while at < data.len() {
        let id = tokens.len();
        if data.len() - at < 8 {
            return Err(bad(at, &format!("token {id}"), format!("{} bytes left; a record needs 8 for score and length", data.len() - at)));
        }
        let score = f32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"));
        if !score.is_finite() {
            return Err(bad(at, &format!("token {id} score"), format!("{score} is not a finite number")));
        }
        let len = i32::from_le_bytes(data[at + 4..at + 8].try_into().expect("4 bytes"));
        if len < 0 || len > max {
            return Err(bad(at + 4, &format!("token {id} length"), format!("{len} is not between 0 and max_token_length {max}")));
        }
        let start = at + 8;
        if data.len() - start < len as usize {
            return Err(bad(at + 4, &format!("token {id} length"), format!("{len} bytes run past the end of the file ({} left)", data.len() - start)));
        }
        tokens.push((data[start..start + len as usize].to_vec(), score));
        at = start + len as usize;
    }
    if tokens.is_empty() {
        return Err(bad(4, "tokens", "the file has no tokens"));
    }
    Ok((max as u32, tokens))
}

pub fn write<'a>(tokens: impl IntoIterator<Item = (&'a [u8], f32)> + Clone) -> Result<Vec<u8>> {
    let max = tokens.clone().into_iter().map(|t| t.0.len()).max().unwrap_or(0);
    if max > MAX_LEN as usize {
        return Err(Error::Vocab(format!("a {max}-byte token is longer than LEAP's limit of {MAX_LEN}")));
    }
    let mut out = Vec::new();
    out.extend_from_slice(&(max.max(1) as i32).to_le_bytes());
    for (bytes, score) in tokens {
        out.extend_from_slice(&score.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as i32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let toks: Vec<(&[u8], f32)> = vec![(b"a", 0.0), (b"bc", -1.5)];
        let data = write(toks.clone()).unwrap();
        let (max, back) = read(&data).unwrap();
        assert_eq!(max, 2);
        assert_eq!(back, vec![(b"a".to_vec(), 0.0), (b"bc".to_vec(), -1.5)]);
        assert!(read(&data[..data.len() - 1]).unwrap_err().to_string().contains("past the end"));
        let mut nan = data.clone();
        nan[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(read(&nan).unwrap_err().to_string().contains("score"));
        assert!(read(&[0, 0, 0, 0]).unwrap_err().to_string().contains("max_token_length"));
    }
}
