//! Hugging Face `tokenizer.json`, BPE models, parsed with `serde_json` into an [`HfModel`]:
//! token bytes by id, the merge list as id triples, the pipeline around the model, and the
//! added tokens with their flags.
//!
//! Read: byte-level BPE (`ByteLevel` pre-tokenizer or decoder; the vocabulary spelled with
//! GPT-2's printable stand-ins for bytes, mapped back here), optionally after a `Split`
//! (Isolated) regex pre-tokenizer; character-level BPE with `byte_fallback`/`unk_token`/
//! `fuse_unk` under Llama's `Prepend("▁")` + `Replace(" ", "▁")` normalizer or a non-splitting
//! `Metaspace`. Anything else (other models, normalizers, pre-tokenizers,
//! `continuing_subword_prefix`, `end_of_word_suffix`, dropout) is an error naming the field.
//!
//! Cost: one pass over the JSON (serde_json's `Value`), then O(V + M) hash lookups for V tokens
//! and M merges. No Python object is made per token.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::added::AddedToken;
use crate::error::{Error, Result};
use crate::merged::{Normalizer, Prefix};

/// GPT-2's pattern as HF's ByteLevel pre-tokenizer applies it (`use_regex: true`).
pub const BYTE_LEVEL_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

const SPACE: &str = "\u{2581}";

/// What a tokenizer.json holds, ready for [`crate::merged::MergeTokenizer`].
#[derive(Debug, Clone)]
pub struct HfModel {
    /// Token bytes by id (empty = no token); added tokens at their ids.
    pub tokens: Vec<Vec<u8>>,
    /// (left id, right id, merged id) in priority order.
    pub merges: Vec<(u32, u32, u32)>,
    /// `None` for byte-level, else (byte_fallback, unk id, fuse_unk).
    pub char_level: Option<(bool, Option<u32>, bool)>,
    pub ignore_merges: bool,
    /// The split pattern (a `Split` or `ByteLevel(use_regex)` pre-tokenizer).
    pub pattern: Option<String>,
    pub normalizer: Normalizer,
    pub prefix: Prefix,
    /// Added tokens in HF's matching order: special ones first, then the others, each in file
    /// order.
    pub added: Vec<AddedToken>,
    /// Decoding turns "▁" back into spaces and drops the first leading space (Llama-style
    /// models: HF's Replace + Strip decoders, or Metaspace's).
    pub space_symbol: bool,
}

fn fail<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T> {
    Err(Error::format(field, message))
}

/// GPT-2's byte -> stand-in character: printable Latin-1 bytes other than space keep their
/// code point, the others are numbered from U+0100 upwards in byte order.
pub fn byte_chars() -> [char; 256] {
    let printable = |b: u32| matches!(b, 33..=126 | 161..=172 | 174..=255);
    let mut out = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..256u32 {
        out[b as usize] = if printable(b) {
            char::from_u32(b).unwrap_or('\0')
        } else {
            next += 1;
            char::from_u32(next - 1).unwrap_or('\0')
        };
    }
    out
}

fn type_of(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

fn has_type(node: &Value, name: &str) -> bool {
    if type_of(node) == Some(name) {
        return true;
    }
    ["pretokenizers", "decoders", "normalizers"].iter().any(|key| {
        node.get(key).and_then(Value::as_array).is_some_and(|a| a.iter().any(|n| has_type(n, name)))
    })
}

fn flag(t: &Map<String, Value>, key: &str, default: bool) -> bool {
    t.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}...", &s[..s.char_indices().nth(77).map_or(s.len(), |c| c.0)])
    } else {
        s
    }
}

/// Parses a tokenizer.json file's bytes.
pub fn read(data: &[u8]) -> Result<HfModel> {
    let obj: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(e) => return fail("JSON", format!("does not parse: {e}")),
    };
    let Some(model) = obj.get("model").and_then(Value::as_object) else {
        return fail("model", "expected an object");
    };
    let mtype = model.get("type").and_then(Value::as_str).unwrap_or("BPE");
    if mtype != "BPE" {
        return fail("model.type", format!("{mtype:?}: only BPE models are supported"));
    }
    for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
        match model.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(v) => return fail(format!("model.{key}"), format!("{} is not supported", show(v))),
        }
    }
    if model.get("dropout").is_some_and(|d| !d.is_null() && d.as_f64() != Some(0.0)) {
        return fail("model.dropout", "BPE dropout makes encoding random; only deterministic models are read");
    }
    let vocab_err = || fail("model.vocab", "expected an object of token -> non-negative id");
    let Some(vocab_obj) = model.get("vocab").and_then(Value::as_object) else { return vocab_err() };
    let mut vocab: HashMap<&str, u32> = HashMap::with_capacity(vocab_obj.len());
    let mut size = 0u64;
    for (s, v) in vocab_obj {
        let Some(id) = v.as_u64().filter(|&i| i < u32::MAX as u64) else { return vocab_err() };
        vocab.insert(s.as_str(), id as u32);
        size = size.max(id + 1);
    }

    let (pattern, mut byte_level, normalizer, prefix) = pipeline(&obj)?;
    if !byte_level && obj.get("decoder").is_some_and(|d| has_type(d, "ByteLevel")) {
        byte_level = true;
    }

    let added_raw: &[Value] = match obj.get("added_tokens") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(v) => return fail("added_tokens", format!("expected a list, found {}", show(v))),
    };
    let mut added = Vec::with_capacity(added_raw.len());
    for t in added_raw {
        let parsed = t.as_object().and_then(|o| {
            let id = o.get("id")?.as_u64().filter(|&i| i < u32::MAX as u64)? as u32;
            let content = o.get("content")?.as_str()?.to_owned();
            let special = flag(o, "special", false);
            Some(AddedToken {
                id,
                content,
                special,
                single_word: flag(o, "single_word", false),
                lstrip: flag(o, "lstrip", false),
                rstrip: flag(o, "rstrip", false),
                normalized: flag(o, "normalized", !special),
            })
        });
        let Some(parsed) = parsed else {
            return fail("added_tokens", format!("expected {{id, content, ...}} objects, found {}", show(t)));
        };
        size = size.max(parsed.id as u64 + 1);
        added.push(parsed);
    }
    let given = (vocab.len() + added.len()) as u64;
    if size > 16 * given + (1 << 20) {
        return fail("model.vocab", format!("id {} is far beyond the {} tokens given", size - 1, vocab.len()));
    }

    // Token bytes by id.
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); size as usize];
    let mut char_to_byte: HashMap<char, u8> = HashMap::new();
    if byte_level {
        for (b, c) in byte_chars().into_iter().enumerate() {
            char_to_byte.insert(c, b as u8);
        }
    }
    for (s, &id) in &vocab {
        let bytes = if byte_level {
            let mut out = Vec::with_capacity(s.len());
            for c in s.chars() {
                match char_to_byte.get(&c) {
                    Some(&b) => out.push(b),
                    None => {
                        return fail(format!("model.vocab[{s:?}]"), format!("character {c:?} is not one of ByteLevel's byte characters"))
                    }
                }
            }
            out
        } else {
            s.as_bytes().to_vec()
        };
        let slot = &mut tokens[id as usize];
        if !slot.is_empty() {
            return fail("model.vocab", format!("id {id} is given to two tokens"));
        }
        *slot = bytes;
    }
    for t in &added {
        let content = t.content.as_bytes();
        let slot = &mut tokens[t.id as usize];
        if !slot.is_empty() && slot.as_slice() != content && !vocab.contains_key(t.content.as_str()) {
            return fail("added_tokens", format!("{:?} has id {}, which the vocabulary gives to another token", t.content, t.id));
        }
        *slot = content.to_vec();
    }
    // HF matches special tokens before the others when spellings are equal.
    added.sort_by_key(|t| !t.special);

    let merges = read_merges(model.get("merges"), &vocab)?;

    let char_level = if byte_level {
        None
    } else {
        let unk_id = match model.get("unk_token") {
            None | Some(Value::Null) => None,
            Some(Value::String(u)) => match vocab.get(u.as_str()) {
                Some(&id) => Some(id),
                None => return fail("model.unk_token", format!("{u:?} is not in the vocabulary")),
            },
            Some(v) => return fail("model.unk_token", format!("expected a string, found {}", show(v))),
        };
        Some((flag(model, "byte_fallback", false), unk_id, flag(model, "fuse_unk", false)))
    };
    let space_symbol = !byte_level && (normalizer != Normalizer::None || matches!(prefix, Prefix::Metaspace { .. }));
    Ok(HfModel {
        tokens,
        merges,
        char_level,
        ignore_merges: flag(model, "ignore_merges", false),
        pattern,
        normalizer,
        prefix,
        added,
        space_symbol,
    })
}

fn read_merges(merges: Option<&Value>, vocab: &HashMap<&str, u32>) -> Result<Vec<(u32, u32, u32)>> {
    let list: &[Value] = match merges {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(v) => return fail("model.merges", format!("expected a list, found {}", show(v))),
    };
    let mut out = Vec::with_capacity(list.len());
    let mut joined = String::new();
    for (k, m) in list.iter().enumerate() {
        let pair = match m {
            Value::String(s) => {
                let mut it = s.split(' ');
                match (it.next(), it.next(), it.next()) {
                    (Some(a), Some(b), None) => Some((a, b)),
                    _ => None,
                }
            }
            Value::Array(a) if a.len() == 2 => a[0].as_str().zip(a[1].as_str()),
            _ => None,
        };
        let Some((a, b)) = pair else {
            return fail(format!("model.merges[{k}]"), format!("expected 'a b' or [a, b], found {}", show(m)));
        };
        joined.clear();
        joined.push_str(a);
        joined.push_str(b);
        let ids = (vocab.get(a), vocab.get(b), vocab.get(joined.as_str()));
        let (Some(&x), Some(&y), Some(&z)) = ids else {
            let missing = if ids.0.is_none() { a } else if ids.1.is_none() { b } else { joined.as_str() };
            return fail(format!("model.merges[{k}]"), format!("{} names {missing:?}, which is not in the vocabulary", show(m)));
        };
        out.push((x, y, z));
    }
    Ok(out)
}

/// (split pattern, byte-level, normalizer, prefix rule) from the normalizer and pre-tokenizer.
fn pipeline(obj: &Value) -> Result<(Option<String>, bool, Normalizer, Prefix)> {
    let mut normalizer = Normalizer::None;
    match obj.get("normalizer") {
        None | Some(Value::Null) => {}
        Some(norm) => {
            let steps: Vec<&Value> = if type_of(norm) == Some("Sequence") {
                norm.get("normalizers").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default()
            } else {
                vec![norm]
            };
            let kinds: Vec<&str> = steps.iter().map(|s| type_of(s).unwrap_or("?")).collect();
            let llama = kinds == ["Prepend", "Replace"]
                && steps[0].get("prepend").and_then(Value::as_str) == Some(SPACE)
                && steps[1].get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str) == Some(" ")
                && steps[1].get("content").and_then(Value::as_str) == Some(SPACE);
            if !llama {
                return fail("normalizer", format!("{kinds:?} is not supported (only none, or Prepend('▁') + Replace(' ', '▁'))"));
            }
            normalizer = Normalizer::PrependReplace;
        }
    }
    let (mut pattern, mut byte_level, mut prefix) = (None, false, Prefix::None);
    let pre = match obj.get("pre_tokenizer") {
        None | Some(Value::Null) => return Ok((pattern, byte_level, normalizer, prefix)),
        Some(p) => p,
    };
    let steps: Vec<&Value> = if type_of(pre) == Some("Sequence") {
        pre.get("pretokenizers").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default()
    } else {
        vec![pre]
    };
    for (k, s) in steps.iter().enumerate() {
        let where_ = format!("pre_tokenizer[{k}]");
        let two = || fail(where_.clone(), "two splitting pre-tokenizers are not supported");
        match type_of(s) {
            Some("ByteLevel") => {
                byte_level = true;
                if s.get("add_prefix_space").and_then(Value::as_bool).unwrap_or(false) {
                    prefix = Prefix::Space;
                }
                if s.get("use_regex").and_then(Value::as_bool).unwrap_or(true) {
                    if pattern.is_some() {
                        return two();
                    }
                    pattern = Some(BYTE_LEVEL_PATTERN.to_string());
                }
            }
            Some("Split") => {
                if pattern.is_some() {
                    return two();
                }
                let behavior = s.get("behavior").and_then(Value::as_str);
                let invert = s.get("invert").and_then(Value::as_bool).unwrap_or(false);
                if behavior != Some("Isolated") || invert {
                    return fail(where_, format!("Split with behavior {behavior:?}, invert {invert}: only Isolated, not inverted, is supported"));
                }
                let p = s.get("pattern");
                let re = if let Some(r) = p.and_then(|p| p.get("Regex")).and_then(Value::as_str) {
                    r.to_string()
                } else {
                    fancy_regex::escape(p.and_then(|p| p.get("String")).and_then(Value::as_str).unwrap_or("")).into_owned()
                };
                if re.is_empty() {
                    return fail(where_, "empty Split pattern");
                }
                pattern = Some(re);
            }
            Some("Metaspace")
                if !s.get("split").and_then(Value::as_bool).unwrap_or(true)
                    && s.get("replacement").and_then(Value::as_str) == Some(SPACE)
                    && matches!(s.get("prepend_scheme").and_then(Value::as_str).unwrap_or("always"), "always" | "first") =>
            {
                let first_only = s.get("prepend_scheme").and_then(Value::as_str) == Some("first");
                prefix = Prefix::Metaspace { first_only };
            }
            t => {
                return fail(where_, format!("pre-tokenizer {:?} is not supported (ByteLevel, Split, non-splitting Metaspace)", t.unwrap_or("?")))
            }
        }
    }
    Ok((pattern, byte_level, normalizer, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_chars_are_gpt2s() {
        let t = byte_chars();
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[b' ' as usize], '\u{120}');
        assert_eq!(t[0], '\u{100}');
        assert_eq!(t[0xad], '\u{143}');
    }

    #[test]
    fn reads_and_refuses() {
        let doc = br#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
                      "pre_tokenizer": null, "added_tokens": [{"id": 3, "content": "<x>", "special": true}]}"#;
        let m = read(doc).unwrap();
        assert_eq!(m.merges, vec![(0, 1, 2)]);
        assert_eq!(m.tokens[3], b"<x>");
        let bad = br#"{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a c"]}}"#;
        assert!(read(bad).unwrap_err().to_string().contains("model.merges[0]"));
        assert!(read(b"{").unwrap_err().to_string().contains("JSON"));
    }
}
