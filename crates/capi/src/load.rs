//! A [`Tokenizer`] from a vocabulary file's bytes, whatever its format: the format is told by
//! content alone, by the rules of python/bytepair/formats/detect.py (docs/formats.md explains
//! the order), and each format is built as python/bytepair/formats/ builds it, so that the C
//! path gives the Python path's ids.
//!
//! What a file cannot say is never guessed: a `.tiktoken` file (or a BPE2 table without a
//! trailing section) gets a split pattern and special tokens only when its SHA-256 is that of a
//! vocabulary bytepair knows (python/bytepair/formats/known.py); otherwise loading fails.

use bytepair_core::formats::{bpe2, tiktoken};
use bytepair_core::pretokenize::patterns;
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

/// A vocabulary recognised by the SHA-256 of its ranks written as a `.tiktoken` file.
struct Known {
    sha256: &'static str,
    pattern: &'static str,
    specials: &'static [(&'static str, u32)],
}

const ENDOFTEXT: &str = "<|endoftext|>";
const ENDOFPROMPT: &str = "<|endofprompt|>";

pub const CL100K_SPECIALS: &[(&str, u32)] = &[
    (ENDOFTEXT, 100257),
    ("<|fim_prefix|>", 100258),
    ("<|fim_middle|>", 100259),
    ("<|fim_suffix|>", 100260),
    (ENDOFPROMPT, 100276),
];
pub const O200K_SPECIALS: &[(&str, u32)] = &[(ENDOFTEXT, 199999), (ENDOFPROMPT, 200018)];
const R50K_SPECIALS: &[(&str, u32)] = &[(ENDOFTEXT, 50256)];

/// The rows of python/bytepair/formats/known.py that C needs most (Llama 3's 256 named
/// specials are left out: such a file needs its pattern and specials from the caller's side).
const KNOWN: &[Known] = &[
    Known { // cl100k_base
        sha256: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", pattern: patterns::CL100K, specials: CL100K_SPECIALS },
    Known { // o200k_base
        sha256: "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", pattern: patterns::O200K, specials: O200K_SPECIALS },
    Known { // r50k_base
        sha256: "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", pattern: patterns::R50K, specials: R50K_SPECIALS },
    Known { // p50k_base
        sha256: "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069", pattern: patterns::R50K, specials: R50K_SPECIALS },
];

fn known(digest: &[u8]) -> Option<&'static Known> {
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    KNOWN.iter().find(|k| k.sha256 == hex)
}

fn owned(specials: &[(&str, u32)]) -> Vec<(String, u32)> {
    specials.iter().map(|(s, i)| ((*s).to_owned(), *i)).collect()
}

fn no_pattern(digest: &[u8]) -> Error {
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
    let known = if file.source_hash.iter().any(|&b| b != 0) { known(&file.source_hash) } else { None };
    let pattern = match file.meta.as_ref().map(|m| m.pattern.clone()).filter(|p| !p.is_empty()) {
        Some(p) => p,
        None => match known {
            Some(k) => k.pattern.to_owned(),
            None => return Err(no_pattern(&file.source_hash)),
        },
    };
    let specials = match (&file.meta, known) {
        (Some(_), _) => file.recorded_specials(),
        (None, Some(k)) => owned(k.specials),
        (None, None) => Vec::new(),
    };
    let vocab = file.into_vocab(&specials)?;
    Ok(Encoder::new(vocab, &pattern, specials)?.into())
}

fn from_tiktoken(data: &[u8]) -> Result<Tokenizer> {
    let ranks = tiktoken::parse(data)?;
    let digest = Sha256::digest(data);
    let k = known(&digest).ok_or_else(|| no_pattern(&digest))?;
    Ok(Encoder::from_ranks(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), owned(k.specials), k.pattern)?.into())
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

/// The special tokens of OpenAI's harmony chat format (gpt-oss) on o200k_base's ranks, as
/// python/bytepair/registry/openai.py's o200k_harmony has them.
pub fn harmony_specials() -> Vec<(String, u32)> {
    let mut specials = owned(O200K_SPECIALS);
    let named: &[(&str, u32)] = &[
        ("<|startoftext|>", 199998),
        ("<|return|>", 200002),
        ("<|constrain|>", 200003),
        ("<|channel|>", 200005),
        ("<|start|>", 200006),
        ("<|end|>", 200007),
        ("<|message|>", 200008),
        ("<|call|>", 200012),
    ];
    specials.extend(owned(named));
    let reserved = [200000u32, 200001, 200004, 200009, 200010, 200011].into_iter().chain(200013..201088);
    // As in tiktoken, 200018 is both <|endofprompt|> and <|reserved_200018|>.
    specials.extend(reserved.map(|i| (format!("<|reserved_{i}|>"), i)));
    specials
}

#[cfg(feature = "builtin")]
pub fn builtin(name: &str) -> Option<Result<Tokenizer>> {
    static CL100K: &[u8] = include_bytes!("../../../python/bytepair/data/cl100k_base.bpe2");
    static O200K: &[u8] = include_bytes!("../../../python/bytepair/data/o200k_base.bpe2");
    let (data, specials, pattern) = match name {
        "cl100k_base" => (CL100K, owned(CL100K_SPECIALS), patterns::CL100K),
        "o200k_base" => (O200K, owned(O200K_SPECIALS), patterns::O200K),
        "o200k_harmony" => (O200K, harmony_specials(), patterns::O200K),
        _ => return None,
    };
    Some((|| {
        let file = bpe2::read(data)?;
        let vocab = file.into_vocab(&specials)?;
        Ok(Encoder::new(vocab, pattern, specials)?.into())
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
