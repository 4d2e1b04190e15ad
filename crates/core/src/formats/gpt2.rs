//! GPT-2's original vocabulary files: `encoder.json` (token spelling -> rank) and `vocab.bpe`
//! (the merge list), tokens spelled with GPT-2's printable stand-ins for bytes (see
//! [`super::byte_level`]).
//!
//! Ranks as tiktoken's `data_gym_to_mergeable_bpe_ranks` gives them: the 256 single bytes in
//! printable-first order ([`printable_first`]), then merge k of `vocab.bpe` at rank 256 + k.
//! `encoder.json` must agree (its `<|endoftext|>` / `<|startoftext|>` entries are special
//! tokens, left out).
//!
//! Errors name the file: locations start with `vocab.bpe` or `encoder.json`.

use std::collections::HashMap;

use super::byte_level::{self, printable_first};
use super::hf::parse_vocab_object;
use crate::error::{Error, Result};

/// Token bytes by rank.
pub fn read(vocab_bpe: &[u8], encoder_json: &[u8]) -> Result<Vec<Vec<u8>>> {
    let bytes_of = |s: &str, file: &str, at: &dyn Fn() -> String| -> Result<Vec<u8>> {
        s.chars()
            .map(|c| byte_level::byte_of(c).ok_or_else(|| Error::format(format!("{file} {}", at()), format!("character {c:?} is not a GPT-2 byte character"))))
            .collect()
    };
    let text = std::str::from_utf8(vocab_bpe).map_err(|e| Error::format("vocab.bpe", format!("not UTF-8: {e}")))?;
    let mut tokens: Vec<Vec<u8>> = printable_first().into_iter().map(|b| vec![b]).collect();
    let mut seen: HashMap<Vec<u8>, u32> = tokens.iter().enumerate().map(|(r, t)| (t.clone(), r as u32)).collect();
    // The first line is a version comment ("#version: 0.2").
    for (n, line) in text.split('\n').enumerate().skip(1) {
        let lineno = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("line {lineno}");
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [a, b] = parts[..] else {
            return Err(Error::format(format!("vocab.bpe {}", at()), format!("expected two tokens separated by a space, found {line:?}")));
        };
        let mut merged = bytes_of(a, "vocab.bpe", &at)?;
        merged.extend(bytes_of(b, "vocab.bpe", &at)?);
        if seen.insert(merged.clone(), tokens.len() as u32).is_some() {
            return Err(Error::format(format!("vocab.bpe {}", at()), format!("merge {line:?} makes a token that already exists")));
        }
        tokens.push(merged);
    }
    let entries = parse_vocab_object(encoder_json)
        .ok_or_else(|| Error::format("encoder.json", "expected a JSON object of token -> id"))?;
    let mut agree = 0usize;
    for (k, id) in &entries {
        if k == "<|endoftext|>" || k == "<|startoftext|>" {
            continue;
        }
        let b = bytes_of(k, "encoder.json", &|| format!("[{k:?}]"))?;
        if tokens.get(*id as usize) != Some(&b) {
            return Err(Error::format("encoder.json", format!("{k:?} has id {id}, but vocab.bpe gives it rank {}",
                seen.get(&b).map_or("none".to_string(), |r| r.to_string()))));
        }
        agree += 1;
    }
    if agree != tokens.len() {
        return Err(Error::format("encoder.json", format!("{agree} tokens, but vocab.bpe implies {}", tokens.len())));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest consistent pair: no merges, encoder.json listing the 256 byte tokens.
    fn encoder_json() -> String {
        let entries: Vec<String> = printable_first()
            .into_iter()
            .enumerate()
            .map(|(rank, b)| format!("{}: {rank}", serde_json::to_string(&byte_level::BYTE_CHARS[b as usize].to_string()).unwrap()))
            .collect();
        format!("{{{}}}", entries.join(", "))
    }

    #[test]
    fn encoder_json_must_end_after_its_object() {
        let vocab_bpe = b"#version: 0.2\n";
        let good = encoder_json();
        assert_eq!(read(vocab_bpe, good.as_bytes()).unwrap().len(), 256);
        // A second object, a stray token or a truncated copy after the first: not encoder.json.
        for junk in [" {}", "x", "\u{0}", r#"{"a": 0"#] {
            let bad = format!("{good}{junk}");
            let e = read(vocab_bpe, bad.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("encoder.json"), "{junk:?}: {e}");
        }
    }
}
