//! A [`Tokenizer`] from a vocabulary file's bytes, whatever its format: the format is told by
//! content alone, by the rules of python/bytepair/formats/detect.py (docs/formats.md explains
//! the order), and each format is built as python/bytepair/formats/ builds it, so that the C
//! path gives the Python path's ids.
//!
//! What a file cannot say is never guessed: a `.tiktoken` file (or a BPE2 table without a
//! trailing section) gets a split pattern and special tokens only when its SHA-256 is that of a
//! vocabulary bytepair knows (bytepair_core::known, the table the Python package reads too);
//! otherwise loading fails.

use bytepair_core::formats::{bpe2, tiktoken};
use bytepair_core::known;
use bytepair_core::{Encoder, Error, Result, Tokenizer};
use sha2::{Digest, Sha256};

/// A loaded tokenizer and what the core's `Tokenizer` does not hold: QTKR's PAD id.
pub struct Loaded {
    pub tokenizer: Tokenizer,
    pub pad: Option<u32>,
}

impl From<Tokenizer> for Loaded {
    fn from(tokenizer: Tokenizer) -> Self {
        Loaded { tokenizer, pad: None }
    }
}

fn no_pattern(digest: &[u8; 32]) -> Error {
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Error::format(
        "split pattern",
        format!("the file records no split pattern, and its SHA-256 {hex} is no vocabulary bytepair knows; convert it to BPE2 with its pattern (bytepair convert --pattern)"),
    )
}

/// The format of a vocabulary file, by content (detect.py's rules, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Bpe2,
    Qtkr,
    TokenizerJson,
    Gpt2,
    Tiktoken,
    SentencePiece,
    Leap,
}

fn is_tiktoken_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let Some(space) = line.iter().position(|&b| b == b' ') else { return false };
    let (b64, num) = (&line[..space], &line[space + 1..]);
    let body = b64.iter().rposition(|&b| b != b'=').map_or(0, |i| i + 1);
    body > 0
        && b64.len() - body <= 2
        && b64[..body].iter().all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && !num.is_empty()
        && num.iter().all(u8::is_ascii_digit)
}

/// GPT-2's encoder.json (first value a number) or HF tokenizer.json (anything else).
fn json_kind(data: &[u8]) -> Format {
    let mut i = 1;
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    while i < data.len() && ws(data[i]) {
        i += 1;
    }
    if data.get(i) == Some(&b'}') {
        return Format::Gpt2;
    }
    // Skip the first key (a JSON string), then ':' and blanks; the value's first byte decides.
    if data.get(i) == Some(&b'"') {
        i += 1;
        while i < data.len() && data[i] != b'"' {
            i += if data[i] == b'\\' { 2 } else { 1 };
        }
        i += 1;
        while i < data.len() && ws(data[i]) {
            i += 1;
        }
        if data.get(i) == Some(&b':') {
            i += 1;
            while i < data.len() && ws(data[i]) {
                i += 1;
            }
            if matches!(data.get(i), Some(b'-' | b'0'..=b'9')) {
                return Format::Gpt2;
            }
        }
    }
    // Anything else that starts with '{' is tokenizer.json; its reader reports what is wrong.
    Format::TokenizerJson
}

pub fn detect(data: &[u8]) -> Result<Format> {
    match data.get(..4) {
        Some(b"BPE2") | Some(b"BPZ2") => return Ok(Format::Bpe2),
        Some(b"RKTQ") => return Ok(Format::Qtkr),
        _ => {}
    }
    if data.is_empty() {
        return Err(Error::format("byte 0", "the file is empty"));
    }
    let start = data.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(data.len());
    if data.get(start) == Some(&b'{') {
        return Ok(json_kind(&data[start..]));
    }
    let window = &data[..data.len().min(65536)];
    let first_line = match window.iter().position(|&b| b == b'\n') {
        Some(end) => &data[..end],
        None => window,
    };
    if first_line.starts_with(b"#version") {
        return Ok(Format::Gpt2);
    }
    if is_tiktoken_line(first_line) {
        return Ok(Format::Tiktoken);
    }
    if data[0] == 0x0A && data.len() > 1 && data[1] != 0 {
        return Ok(Format::SentencePiece);
    }
    if data.len() >= 4 {
        let max_len = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        if 0 < max_len && max_len <= 1 << 16 {
            return Ok(Format::Leap);
        }
    }
    let shown: String = data.iter().take(16).map(|b| format!("{b:02x}")).collect();
    Err(Error::format(
        "byte 0",
        format!("not a known vocabulary format (expected BPE2/BPZ2/QTKR magic, tokenizer.json, tiktoken text, a SentencePiece model or a LEAP table); first bytes {shown}"),
    ))
}

/// A rank model from a read BPE2/BPZ2 table: its trailing section's pattern and specials, or
/// else those of the known vocabulary its header's source hash names (as formats/_load_bpe2).
pub fn from_bpe2(file: bpe2::Bpe2) -> Result<Tokenizer> {
    let known = if file.source_hash.iter().any(|&b| b != 0) { known::by_sha256(&file.source_hash) } else { None };
    let pattern = match file.meta.as_ref().map(|m| m.pattern.clone()).filter(|p| !p.is_empty()) {
        Some(p) => p,
        None => match known {
            Some(k) => k.pattern.to_owned(),
            None => return Err(no_pattern(&file.source_hash)),
        },
    };
    let specials = match (&file.meta, known) {
        (Some(_), _) => file.recorded_specials(),
        (None, Some(k)) => k.special_tokens(),
        (None, None) => Vec::new(),
    };
    let vocab = file.into_vocab(&specials)?;
    Ok(Encoder::new(vocab, &pattern, specials)?.into())
}

fn from_tiktoken(data: &[u8]) -> Result<Tokenizer> {
    let ranks = tiktoken::parse(data)?;
    let digest: [u8; 32] = Sha256::digest(data).into();
    let k = known::by_sha256(&digest).ok_or_else(|| no_pattern(&digest))?;
    Ok(Encoder::from_ranks(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), k.special_tokens(), k.pattern)?.into())
}

/// A tokenizer from a vocabulary file's bytes, any supported format.
pub fn load(data: &[u8]) -> Result<Loaded> {
    match detect(data)? {
        Format::Bpe2 => Ok(from_bpe2(bpe2::read(data)?)?.into()),
        Format::Tiktoken => Ok(from_tiktoken(data)?.into()),
        Format::Qtkr => {
            // QTKR has no split pattern: the text is one piece, as python formats/qtkr.load.
            let (tokenizer, pad) = Tokenizer::from_qtkr(data, None)?;
            Ok(Loaded { tokenizer, pad })
        }
        Format::TokenizerJson => Ok(Tokenizer::from_tokenizer_json(data)?.0.into()),
        Format::SentencePiece => Ok(Tokenizer::from_sentencepiece(data)?.into()),
        Format::Leap => Ok(Tokenizer::from_leap(data, None)?.into()),
        Format::Gpt2 => Err(Error::format(
            "byte 0",
            "this is one of GPT-2's two vocabulary files (vocab.bpe, encoder.json); convert the pair to BPE2 (bytepair convert) to load it here",
        )),
    }
}

#[cfg(feature = "builtin")]
pub fn builtin(name: &str) -> Option<Result<Tokenizer>> {
    static CL100K: &[u8] = include_bytes!("../../../python/bytepair/data/cl100k_base.bpe2");
    static O200K: &[u8] = include_bytes!("../../../python/bytepair/data/o200k_base.bpe2");
    let data = match name {
        "cl100k_base" => CL100K,
        "o200k_base" | "o200k_harmony" => O200K,
        _ => return None,
    };
    let k = known::encoding(name)?;
    Some((|| {
        let file = bpe2::read(data)?;
        let specials = k.special_tokens();
        let vocab = file.into_vocab(&specials)?;
        Ok(Encoder::new(vocab, k.pattern, specials)?.into())
    })())
}

#[cfg(not(feature = "builtin"))]
pub fn builtin(_name: &str) -> Option<Result<Tokenizer>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content() {
        assert_eq!(detect(b"BPE2....").unwrap(), Format::Bpe2);
        assert_eq!(detect(b"RKTQ....").unwrap(), Format::Qtkr);
        assert_eq!(detect(b"IQ== 0\nIg== 1\n").unwrap(), Format::Tiktoken);
        assert_eq!(detect(b" {\"!\": 0}").unwrap(), Format::Gpt2);
        assert_eq!(detect(b"{\"version\": \"1.0\"}").unwrap(), Format::TokenizerJson);
        assert_eq!(detect(b"#version: 0.2\n").unwrap(), Format::Gpt2);
        assert_eq!(detect(&[0x0A, 0x05, 0x0A]).unwrap(), Format::SentencePiece);
        assert_eq!(detect(&[0x0A, 0, 0, 0, 1]).unwrap(), Format::Leap);
        assert!(detect(b"").is_err());
        assert!(detect(&[0xff, 0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn unknown_tiktoken_file_is_an_error_never_a_guess() {
        let text: Vec<u8> = (0..=255u8).flat_map(|b| tiktoken::write([(&[b][..], b as u32)])).collect();
        let err = load(&text).err().expect("no pattern is known for these ranks");
        assert!(err.to_string().contains("no split pattern"), "{err}");
    }
}
