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
//! Cost: one pass over the JSON. The top level and the model are read as raw slices
//! (`RawValue`); the vocabulary and the merges, nearly all of the file, are streamed by
//! visitors that borrow each string from the input (a copy only for strings with escapes), and
//! the small parts (normalizer, pre-tokenizer, added tokens) become `Value`s. Then O(V + M)
//! hash lookups for V tokens and M merges. No Python object is made per token.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::added::AddedToken;
use crate::error::{Error, Result};
use super::byte_level;
use crate::normalizers::Normalizer;
use crate::pretokenize::patterns;
use crate::pretokenize::prefix::Prefix;

const SPACE: &str = "\u{2581}";

/// What a tokenizer.json holds, ready for [`crate::models::merges::MergeTokenizer`].
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

/// A JSON object of string -> non-negative 32-bit id (GPT-2's `encoder.json`), streamed;
/// `None` if it is not one.
pub fn parse_vocab_object(data: &[u8]) -> Option<Vec<(String, u32)>> {
    let v = whole_document(data, VocabVisitor).ok()??;
    Some(v.into_iter().map(|(k, id)| (k.into_owned(), id)).collect())
}

/// One JSON object that is the whole of `data`: `deserialize_map` alone stops at the object's
/// closing brace, so without `end` a file with anything after it (a second object, a truncated
/// copy, binary junk) would load as if the rest were not there.
fn whole_document<'de, V: serde::de::Visitor<'de>>(data: &'de [u8], visitor: V) -> serde_json::Result<V::Value> {
    let mut de = serde_json::Deserializer::from_slice(data);
    let v = de.deserialize_map(visitor)?;
    de.end()?;
    Ok(v)
}

/// Parses a tokenizer.json file's bytes.
pub fn read(data: &[u8]) -> Result<HfModel> {
    let parsed = whole_document(data, TopVisitor);
    let top = parsed.map_err(|e| Error::format("JSON", format!("does not parse: {e}")))?;
    let obj = Value::Object(top.rest);
    let Some(Parts { rest: model, vocab: vocab_list, merges: merge_pairs }) = top.model else {
        return fail("model", "expected an object");
    };
    let model = &model;
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
    let Some(Some(vocab_list)) = vocab_list else {
        return fail("model.vocab", "expected an object of token -> non-negative id");
    };
    let mut vocab: Index = Index::with_capacity_and_hasher(vocab_list.len(), Default::default());
    let mut size = 0u64;
    for (s, id) in &vocab_list {
        vocab.insert(s.as_ref(), *id);
        size = size.max(*id as u64 + 1);
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
    for (s, id) in &vocab_list {
        let (s, id) = (s.as_ref(), *id);
        let bytes = if byte_level {
            let mut out = Vec::with_capacity(s.len());
            for c in s.chars() {
                match byte_level::byte_of(c) {
                    Some(b) => out.push(b),
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

    let merges = match merge_pairs {
        None => Vec::new(),
        Some(None) => return fail("model.merges", "expected a list of merges"),
        Some(Some(pairs)) => {
            let mut by_id = vec![""; size as usize];
            for (s, id) in &vocab_list {
                by_id[*id as usize] = s.as_ref();
            }
            merge_ids(&pairs, &vocab, &by_id)?
        }
    };

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

type Index<'a> = hashbrown::HashMap<&'a str, u32, foldhash::fast::FixedState>;

/// A JSON string, borrowed from the input unless it has escapes.
struct Str<'de>(Cow<'de, str>);

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Str<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Str(Cow::Owned(v.to_owned())))
    }
}

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_str(StrVisitor)
    }
}

type VocabList<'de> = Vec<(Cow<'de, str>, u32)>;
type MergeList<'de> = Vec<Option<(Cow<'de, str>, Cow<'de, str>)>>;

/// The top level of the file: the model's parts, and everything else as values.
struct Top<'de> {
    model: Option<Parts<'de>>,
    rest: Map<String, Value>,
}

/// The model object: `vocab` and `merges` streamed (`Some(None)`: present but of the wrong
/// shape, reported by the caller with the field's name), the rest as values.
struct Parts<'de> {
    vocab: Option<Option<VocabList<'de>>>,
    merges: Option<Option<MergeList<'de>>>,
    rest: Map<String, Value>,
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer.json object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut top = Top { model: None, rest: Map::new() };
        while let Some(Str(k)) = map.next_key::<Str>()? {
            if k == "model" {
                top.model = map.next_value_seed(Lenient(PartsVisitor))?;
            } else {
                top.rest.insert(k.into_owned(), map.next_value()?);
            }
        }
        Ok(top)
    }
}

struct PartsVisitor;

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = Parts<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the model object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut parts = Parts { vocab: None, merges: None, rest: Map::new() };
        while let Some(Str(k)) = map.next_key::<Str>()? {
            match k.as_ref() {
                "vocab" => parts.vocab = Some(map.next_value_seed(Lenient(VocabVisitor))?.flatten()),
                "merges" => parts.merges = Some(map.next_value_seed(Lenient(MergesVisitor))?.flatten()),
                _ => {
                    parts.rest.insert(k.into_owned(), map.next_value()?);
                }
            }
        }
        Ok(parts)
    }
}

/// Reads a value with `V` if it has the shape `V` expects (an object, a list), else consumes
/// it and gives `None`; so a wrong shape is reported with the field's name, not as bad JSON.
struct Lenient<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Lenient<V> {
    type Value = Option<V::Value>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(LenientVisitor(self.0))
    }
}

struct LenientVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for LenientVisitor<V> {
    type Value = Option<V::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Some)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
        self.0.visit_seq(seq).map(Some)
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(self.0.visit_unit::<E>().ok())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

/// `model.vocab`: (token, id) in file order; `None` inside if an id is not a non-negative
/// 32-bit integer.
struct VocabVisitor;

impl<'de> Visitor<'de> for VocabVisitor {
    type Value = Option<VocabList<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of token -> id")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
        let mut ok = true;
        while let Some(Str(k)) = map.next_key::<Str>()? {
            match map.next_value::<Value>()?.as_u64().filter(|&i| i < u32::MAX as u64) {
                Some(id) => out.push((k, id as u32)),
                None => ok = false,
            }
        }
        Ok(ok.then_some(out))
    }
}

/// `model.merges`: each merge's two parts (`None` for an entry of the wrong shape).
struct MergesVisitor;

impl<'de> Visitor<'de> for MergesVisitor {
    type Value = Option<MergeList<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges")
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(Some(Vec::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Merge(m)) = seq.next_element_seed(MergeVisitor)? {
            out.push(m);
        }
        Ok(Some(out))
    }
}

/// One merge: `"a b"` or `["a", "b"]`; `None` for anything else (located by the caller).
struct Merge<'de>(Option<(Cow<'de, str>, Cow<'de, str>)>);

struct MergeVisitor;

fn split_merge(s: Cow<'_, str>) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    let mut it = s.split(' ');
    let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else { return None };
    Some(match s {
        Cow::Borrowed(s) => (Cow::Borrowed(&s[..a.len()]), Cow::Borrowed(&s[a.len() + 1..])),
        Cow::Owned(_) => (Cow::Owned(a.to_owned()), Cow::Owned(b.to_owned())),
    })
}

impl<'de> Visitor<'de> for MergeVisitor {
    type Value = Merge<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Merge(split_merge(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Merge(split_merge(Cow::Owned(v.to_owned()))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let mut parts = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            parts.push(v);
        }
        Ok(Merge(match parts.as_slice() {
            [Value::String(a), Value::String(b)] => Some((Cow::Owned(a.clone()), Cow::Owned(b.clone()))),
            _ => None,
        }))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
        Ok(Merge(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(Merge(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(Merge(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(Merge(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(Merge(None))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(Merge(None))
    }
}

impl<'de> DeserializeSeed<'de> for MergeVisitor {
    type Value = Merge<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The merges as id triples, each checked: its two parts and their concatenation are tokens.
///
/// Three hash lookups per merge, the third (the merged token) a random probe of a 100 K-entry
/// table, were most of the cost of reading a large file. Real files list merges in the order of
/// the tokens they make (merge k makes token 256 + k, or a few merges make each token in id
/// order), so the merged token's id is first guessed as the previous merge's or the next one
/// and checked by comparing spellings (`by_id` is read in order, so the guess costs no cache
/// miss); a wrong guess falls back to the lookup. Exact either way. Chunks run on the rayon pool.
fn merge_ids(pairs: &MergeList, vocab: &Index, by_id: &[&str]) -> Result<Vec<(u32, u32, u32)>> {
    use rayon::prelude::*;
    let is = |id: u32, a: &str, b: &str| {
        by_id.get(id as usize).is_some_and(|s| s.len() == a.len() + b.len() && s.starts_with(a) && s.ends_with(b))
    };
    let chunk = |ms: &[Option<(Cow<str>, Cow<str>)>]| -> Vec<Option<(u32, u32, u32)>> {
        let mut joined = String::new();
        let mut prev = u32::MAX - 1;
        ms.iter()
            .map(|m| {
                let (a, b) = m.as_ref()?;
                let (x, y) = (*vocab.get(a.as_ref())?, *vocab.get(b.as_ref())?);
                let z = if is(prev, a, b) {
                    prev
                } else if is(prev + 1, a, b) {
                    prev + 1
                } else {
                    joined.clear();
                    joined.push_str(a);
                    joined.push_str(b);
                    *vocab.get(joined.as_str())?
                };
                prev = z;
                Some((x, y, z))
            })
            .collect()
    };
    let ids: Vec<Option<(u32, u32, u32)>> = pairs.par_chunks(16384).flat_map_iter(chunk).collect();
    let mut out = Vec::with_capacity(ids.len());
    for (k, (found, m)) in ids.into_iter().zip(pairs).enumerate() {
        match (found, m) {
            (Some(t), _) => out.push(t),
            (None, None) => return fail(format!("model.merges[{k}]"), "expected 'a b' or [a, b]"),
            (None, Some((a, b))) => {
                let joined = format!("{a}{b}");
                let missing = [a.as_ref(), b.as_ref(), joined.as_str()].into_iter().find(|s| !vocab.contains_key(s)).unwrap_or("");
                return fail(format!("model.merges[{k}]"), format!("{a:?} + {b:?} names {missing:?}, which is not in the vocabulary"));
            }
        }
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
                    // HF's ByteLevel pre-tokenizer with `use_regex: true` splits with GPT-2's own pattern.
                    pattern = Some(patterns::GPT2.to_string());
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

    #[test]
    fn trailing_bytes_after_the_object_are_refused() {
        let doc = br#"{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}"#;
        assert!(read(doc).is_ok());
        let mut padded = doc.to_vec();
        padded.extend_from_slice(b" \n\t");
        assert!(read(&padded).is_ok(), "trailing whitespace is still one document");
        for junk in [&b"{}"[..], b"x", b"\0", b"]", br#"{"model": null}"#] {
            let mut bad = doc.to_vec();
            bad.extend_from_slice(junk);
            let e = read(&bad).unwrap_err().to_string();
            assert!(e.contains("trailing"), "{junk:?}: {e}");
        }
        assert_eq!(parse_vocab_object(br#"{"a": 0} "#).map(|v| v.len()), Some(1));
        assert!(parse_vocab_object(br#"{"a": 0} {"b": 1}"#).is_none());
        assert!(parse_vocab_object(br#"{"a": 0}xyz"#).is_none());
    }
}
