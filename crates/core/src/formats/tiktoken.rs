//! The tiktoken text format: one `base64(token) rank` pair per line, blank lines ignored.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::error::{Error, Result};

/// Parses a `.tiktoken` file into `(token bytes, rank)` pairs, in file order.
pub fn parse(data: &[u8]) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut out = Vec::with_capacity(data.len() / 12);
    for (lineno, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let location = || format!("line {}", lineno + 1);
        let mut fields = line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty());
        let (tok, rank) = match (fields.next(), fields.next(), fields.next()) {
            (Some(t), Some(r), None) => (t, r),
            _ => {
                return Err(Error::format(
                    location(),
                    format!("expected 'base64-token rank', found {:?}", String::from_utf8_lossy(line)),
                ))
            }
        };
        let bytes = STANDARD
            .decode(tok)
            .map_err(|e| Error::format(location(), format!("bad base64 token: {e}")))?;
        let rank = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse::<u32>().ok())
            .ok_or_else(|| {
                Error::format(location(), format!("bad rank {:?}", String::from_utf8_lossy(rank)))
            })?;
        out.push((bytes, rank));
    }
    Ok(out)
}

/// Writes `(token bytes, rank)` pairs in tiktoken text form, in the order given.
pub fn write<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (bytes, rank) in tokens {
        out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
        out.push(b' ');
        out.extend_from_slice(rank.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let toks = vec![(b"a".to_vec(), 0), (b"\xff\x00".to_vec(), 1)];
        let text = write(toks.iter().map(|(b, r)| (b.as_slice(), *r)));
        assert_eq!(parse(&text).unwrap(), toks);
        let e = parse(b"YQ== 0\n!!! 1\n").unwrap_err().to_string();
        assert!(e.starts_with("line 2: bad base64"), "{e}");
        let e = parse(b"YQ== zero\n").unwrap_err().to_string();
        assert!(e.starts_with("line 1: bad rank"), "{e}");
        let e = parse(b"YQ==\n").unwrap_err().to_string();
        assert!(e.starts_with("line 1: expected"), "{e}");
    }
}
