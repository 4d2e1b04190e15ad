//! The bodies of bytepair's fuzz targets, one public function per target in `fuzz_targets/`.
//!
//! They live in a library, not in the target files, so that `tests/seeds.rs` can run the same
//! bodies over the committed seed corpora and regression inputs as an ordinary `cargo test`
//! (stable Rust, no libFuzzer): what a fuzzer once found is replayed on every CI run.
//!
//! Each body states its property with `assert!`: a failed assertion, a panic in bytepair, an
//! abort or a timeout is a finding. "No panic" is the minimum; where there is an independent
//! answer the body compares with it (the general regex for the hand-written scanners, a plain
//! merge loop for rank BPE, `decode` for the streaming decoder), and where the model is
//! lossless it checks the round trip.
//!
//! Inputs are bounded here as well as by libFuzzer's `-max_len`: text and file sizes are cut
//! so that each run stays in the milliseconds and a slow case is a complexity bug, not a big
//! input.

use std::sync::OnceLock;

use bytepair_core::formats::{bpe2, gpt2, qtkr, tiktoken};
use bytepair_core::pretokenize::{patterns, Pretokenizer};
use bytepair_core::train::{ChunkCounts, Merger};
use bytepair_core::{EncodeOptions, Encoder, SpecialFilter, Tokenizer};

/// The golden vocabularies of the test suite (tests/data/golden, small files of our own).
pub mod golden {
    pub const BPE2: &[u8] = include_bytes!("../../tests/data/golden/tiny.bpe2");
    pub const QTKR: &[u8] = include_bytes!("../../tests/data/golden/tiny.qtkr");
    pub const SP_MODEL: &[u8] = include_bytes!("../../tests/data/golden/tiny_sp.model");
    pub const SP_LEAP: &[u8] = include_bytes!("../../tests/data/golden/tiny_sp.leap");
    pub const LEAP: &[u8] = include_bytes!("../../tests/data/golden/tiny.leap");
    pub const HF: &[u8] = include_bytes!("../../tests/data/golden/tiny_hf.json");
    pub const HF_FALLBACK: &[u8] = include_bytes!("../../tests/data/golden/tiny_hf_fallback.json");
}

/// Most bytes of text a body encodes: enough for every scanner state, small enough that a
/// run is fast and only a complexity bug makes it slow.
const MAX_TEXT: usize = 4096;

fn opts(allowed: SpecialFilter) -> EncodeOptions {
    EncodeOptions { allowed, add_bos: false, add_eos: false }
}

/// Text from fuzz bytes: the valid UTF-8 prefix of at most [`MAX_TEXT`] bytes (a text API
/// never sees anything else; lossy conversion would hide which bytes the fuzzer chose).
fn text_of(data: &[u8]) -> &str {
    let data = &data[..data.len().min(MAX_TEXT)];
    match std::str::from_utf8(data) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&data[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// What any tokenizer must do with any text and any ids: no panic; `count` equals the
/// length of `encode`; every id `encode` gives decodes; ids from the fuzzer decode or are an
/// error, never a panic. Returns the ids of `text` with nothing allowed, if it encoded.
fn exercise(tok: &Tokenizer, text: &str, ids_from: &[u8]) -> Option<Vec<u32>> {
    let mut plain = Vec::new();
    let encoded = tok.encode_into(text, &opts(SpecialFilter::None), &mut plain).is_ok();
    if encoded {
        assert_eq!(tok.count(text, &opts(SpecialFilter::None)).ok(), Some(plain.len()), "count != len(encode)");
        for &id in &plain {
            assert!((id as usize) < tok.n_vocab() || tok.token_bytes(id).is_ok(), "encode gave id {id} outside the vocabulary");
        }
        assert!(tok.decode_bytes(&plain).is_ok(), "encode's own ids do not decode");
    }
    let mut all = Vec::new();
    let _ = tok.encode_into(text, &opts(SpecialFilter::All), &mut all);
    let mut ordinary = Vec::new();
    let _ = tok.encode_ordinary_into(text, &mut ordinary);
    let ids: Vec<u32> = ids_from.chunks(4).map(|c| {
        let mut b = [0u8; 4];
        b[..c.len()].copy_from_slice(c);
        // Mostly ids near the table (small numbers find unused ids and specials), sometimes any.
        let v = u32::from_le_bytes(b);
        if v & 1 == 0 { v % (tok.n_vocab() as u32 + 8).max(1) } else { v }
    }).take(256).collect();
    let _ = tok.decode_bytes(&ids);
    for &id in ids.iter().take(16) {
        let _ = tok.token_bytes(id);
    }
    encoded.then_some(plain)
}

/// Splits fuzz input in two at the first `0xFF` byte (never in UTF-8 text), else in the middle.
fn split2(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => data.split_at(data.len() / 2),
    }
}

// ---------------------------------------------------------------------------------------------
// File readers: no panic, no abort, bounded time on any bytes; what loads encodes and decodes.
// ---------------------------------------------------------------------------------------------

/// tiktoken text: what parses writes back to a file that parses to the same pairs, and loads
/// as a rank encoder when the pairs form a valid vocabulary.
pub fn read_tiktoken(data: &[u8]) {
    let Ok(pairs) = tiktoken::parse(data) else { return };
    let again = tiktoken::parse(&tiktoken::write(pairs.iter().map(|(b, r)| (b.as_slice(), *r))))
        .expect("a written .tiktoken file parses");
    assert_eq!(again, pairs, "tiktoken write -> parse changed the pairs");
    if let Ok(enc) = Encoder::from_ranks(pairs.iter().map(|(b, r)| (b.as_slice(), *r)), vec![], patterns::CL100K) {
        let tok = Tokenizer::from(enc);
        let text = text_of(data);
        if let Some(ids) = exercise(&tok, text, data) {
            assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes(), "rank round trip");
        }
    }
}

/// BPE2 / BPZ2: what reads becomes a vocabulary (with its recorded specials) or an error;
/// a vocabulary writes back to a file that reads to the same tokens.
pub fn read_bpe2(data: &[u8]) {
    let _ = bpe2::read_info(data);
    let Ok(file) = bpe2::read(data) else { return };
    let specials = file.recorded_specials();
    let pattern = file.meta.as_ref().map(|m| m.pattern.clone()).filter(|p| !p.is_empty());
    let Ok(vocab) = file.into_vocab(&specials) else { return };
    let written = bpe2::write(&vocab, [0; 32], None, None).expect("a vocabulary that loaded writes");
    let back = bpe2::read(&written).expect("a written BPE2 file reads").into_vocab(&specials).expect("and loads");
    assert_eq!(back.table_len(), vocab.table_len(), "BPE2 write -> read changed the table's length");
    for id in 0..vocab.table_len() as u32 {
        assert_eq!(back.token(id), vocab.token(id), "BPE2 write -> read changed token {id}");
    }
    let text = text_of(data);
    // The file's own pattern, whatever it is: no panic. A pattern need not match every
    // character (tiktoken drops what no alternative matches), so no round trip with it.
    if let Some(p) = pattern {
        if let Ok(enc) = Encoder::new(vocab.clone(), &p, specials.clone()) {
            exercise(&Tokenizer::from(enc), text, data);
        }
    }
    if let Ok(enc) = Encoder::new(vocab, patterns::O200K, specials) {
        let tok = Tokenizer::from(enc);
        if let Some(ids) = exercise(&tok, text, data) {
            assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes(), "rank round trip");
        }
    }
}

/// QTKR: reads or refuses; what reads writes back identically and loads as a merge-list model.
pub fn read_qtkr(data: &[u8]) {
    let Ok(q) = qtkr::read(data) else { return };
    let written = qtkr::write(&q).expect("a QTKR file that reads writes");
    let again = qtkr::read(&written).expect("a written QTKR file reads");
    assert_eq!(again.tokens, q.tokens);
    assert_eq!(again.merges, q.merges);
    if let Ok((tok, _pad)) = Tokenizer::from_qtkr(data, Some(patterns::CL100K)) {
        exercise(&tok, text_of(data), data);
    }
}

/// LEAP / llama2.c tokenizer.bin.
pub fn read_leap(data: &[u8]) {
    for dummy in [None, Some(true), Some(false)] {
        if let Ok(tok) = Tokenizer::from_leap(data, dummy) {
            exercise(&tok, text_of(data), data);
        }
    }
}

/// HF tokenizer.json.
pub fn read_tokenizer_json(data: &[u8]) {
    if let Ok((tok, _)) = Tokenizer::from_tokenizer_json(data) {
        exercise(&tok, text_of(data), data);
    }
}

/// SentencePiece `.model`: any protobuf bytes.
pub fn read_sentencepiece(data: &[u8]) {
    if let Ok(tok) = Tokenizer::from_sentencepiece(data) {
        exercise(&tok, text_of(data), data);
    }
}

/// GPT-2's two files (`vocab.bpe`, then `encoder.json`, split by [`split2`]): token bytes by
/// rank, every token distinct, which load as a rank encoder with a lossless round trip.
pub fn read_gpt2(data: &[u8]) {
    let (vocab_bpe, encoder_json) = split2(data);
    let Ok(tokens) = gpt2::read(vocab_bpe, encoder_json) else { return };
    let enc = Encoder::from_ranks(tokens.iter().enumerate().map(|(r, t)| (t.as_slice(), r as u32)), vec![], patterns::R50K)
        .expect("GPT-2 ranks that read form a vocabulary");
    let tok = Tokenizer::from(enc);
    let text = text_of(vocab_bpe);
    if let Some(ids) = exercise(&tok, text, data) {
        assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes(), "rank round trip");
    }
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers: differential, the hand-written scanners (and the regex-automata rewrite)
// against fancy-regex running the pattern as written.
// ---------------------------------------------------------------------------------------------

fn regexes() -> &'static [(&'static str, Pretokenizer, Pretokenizer)] {
    static ALL: OnceLock<Vec<(&'static str, Pretokenizer, Pretokenizer)>> = OnceLock::new();
    ALL.get_or_init(|| {
        [patterns::CL100K, patterns::CL100K_HF, patterns::O200K, patterns::R50K, patterns::GPT2, patterns::LLAMA3,
         patterns::RUSTBPE_GPT4, patterns::NANOCHAT]
            .into_iter()
            .map(|p| (p, Pretokenizer::new(p).expect("built-in pattern"), Pretokenizer::new_regex(p).expect("built-in pattern")))
            .collect()
    })
}

fn pieces(p: &Pretokenizer, text: &str) -> Option<Vec<(usize, usize)>> {
    let base = text.as_ptr() as usize;
    let mut out = Vec::new();
    p.for_each_piece(text, |s| out.push((s.as_ptr() as usize - base, s.len()))).ok()?;
    Some(out)
}

/// Every built-in pattern: the fast splitter's pieces are the general regex's, and the
/// parallel entry (`for_each_piece_in` from each split point) gives the serial pieces.
pub fn pretokenize_diff(data: &[u8]) {
    let text = text_of(data);
    for (pattern, fast, general) in regexes() {
        let Some(want) = pieces(general, text) else { continue }; // the regex's backtrack limit
        let got = pieces(fast, text).expect("the fast splitters cannot fail");
        assert_eq!(got, want, "pattern {pattern:?} on {text:?}");
        if let Some(points) = fast.split_points(text, 64) {
            let mut joined = Vec::new();
            let mut bounds = points.clone();
            bounds.insert(0, 0);
            bounds.push(text.len());
            for w in bounds.windows(2) {
                let base = text.as_ptr() as usize;
                fast.for_each_piece_in(text, w[0]..w[1], |s| joined.push((s.as_ptr() as usize - base, s.len()))).unwrap();
            }
            assert_eq!(joined, want, "pattern {pattern:?}: pieces from split points {points:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rank BPE against the definition.
// ---------------------------------------------------------------------------------------------

/// tiktoken's byte-pair merge as the definition states it, quadratic and obvious: merge the
/// adjacent pair whose concatenation has the lowest rank (the leftmost on a tie) until none
/// has one.
pub fn reference_merge(piece: &[u8], rank: &dyn Fn(&[u8]) -> Option<u32>) -> Vec<Vec<u8>> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..parts.len().saturating_sub(1) {
            let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
            if let Some(r) = rank(&joined) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, i));
                }
            }
        }
        let Some((_, i)) = best else { return parts };
        let right = parts.remove(i + 1);
        parts[i].extend_from_slice(&right);
    }
}

/// A rank table from fuzz bytes: the 256 bytes in an order the input picks, then up to 64
/// merges of two existing tokens (so every token is reachable, as in a trained vocabulary).
fn toy_ranks(spec: &[u8]) -> Vec<Vec<u8>> {
    let mut order: Vec<u8> = (0..=255).collect();
    for (i, &b) in spec.iter().take(32).enumerate() {
        order.swap(i * 7 % 256, b as usize);
    }
    let mut tokens: Vec<Vec<u8>> = order.into_iter().map(|b| vec![b]).collect();
    // Merges lean on ASCII letters and space so that fuzz text hits them.
    let pick = |b: u8, n: usize| if b & 0x80 == 0 { (b" etaoinshrdlu"[(b % 13) as usize]) as usize } else { (b as usize * 31) % n };
    for pair in spec.get(32..).unwrap_or(&[]).chunks_exact(2).take(64) {
        let n = tokens.len();
        let (a, b) = (pick(pair[0], n), pick(pair[1], n));
        let t = [tokens[a].as_slice(), tokens[b].as_slice()].concat();
        if t.len() <= 16 && !tokens.contains(&t) {
            tokens.push(t);
        }
    }
    tokens
}

/// Rank BPE (the real encoder, its caches and fast paths) against [`reference_merge`] on
/// every piece, on a table the input builds; the ids decode to the text.
pub fn rank_encode(data: &[u8]) {
    let (spec, text) = split2(data);
    // The reference is quadratic in a piece's length: texts of at most 512 bytes.
    let text = text_of(&text[..text.len().min(512)]);
    let tokens = toy_ranks(spec);
    let index: std::collections::HashMap<&[u8], u32> = tokens.iter().enumerate().map(|(r, t)| (t.as_slice(), r as u32)).collect();
    let specials = vec![("<|s|>".to_string(), tokens.len() as u32)];
    let enc = Encoder::from_ranks(index.iter().map(|(t, r)| (*t, *r)), specials, patterns::CL100K).expect("toy table");
    let tok = Tokenizer::from(enc);
    let ids = exercise(&tok, text, spec);
    let mut want = Vec::new();
    static GENERAL: OnceLock<Pretokenizer> = OnceLock::new();
    let general = GENERAL.get_or_init(|| Pretokenizer::new_regex(patterns::CL100K).unwrap());
    let mut ok = true;
    let _ = general.for_each_piece(text, |piece| {
        // As tiktoken: a piece that is itself a token is that token, even where the merge
        // from bytes would not reach it (a toy table need not be a merge order: `nnnnnn` as
        // `nnn` + `nnn` while `nn` merges first). This harness compared the merge alone and
        // failed on such a piece (docs/fuzzing.md).
        let whole = index.contains_key(piece.as_bytes());
        let parts = if whole { vec![piece.as_bytes().to_vec()] } else { reference_merge(piece.as_bytes(), &|b| index.get(b).copied()) };
        for part in parts {
            match index.get(part.as_slice()) {
                Some(&r) => want.push(r),
                None => ok = false,
            }
        }
    });
    // With nothing allowed the core encodes a special spelling as text (refusing it is the
    // binding's policy), so the reference applies to every text.
    let ids = ids.expect("any text encodes with nothing allowed");
    if ok {
        assert_eq!(ids, want, "rank BPE differs from the reference merge on {text:?}");
    }
    assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes());
}

// ---------------------------------------------------------------------------------------------
// Score and merge-list models: the golden tokenizers on any text and ids.
// ---------------------------------------------------------------------------------------------

struct Models {
    /// (name, tokenizer, decode(encode(text)) == text for every text). The others normalize
    /// (SentencePiece collapses spaces and reads U+2581 as one; llama2.c keeps the dummy
    /// prefix's space; a Metaspace decoder drops one), as their reference libraries do, so
    /// only "no panic, and their own ids decode" holds for every text.
    all: Vec<(&'static str, Tokenizer, bool)>,
}

fn models() -> &'static Models {
    static M: OnceLock<Models> = OnceLock::new();
    M.get_or_init(|| Models {
        all: vec![
            ("tiny_sp.model", Tokenizer::from_sentencepiece(golden::SP_MODEL).unwrap(), false),
            ("tiny_sp.leap", Tokenizer::from_leap(golden::SP_LEAP, None).unwrap(), false),
            ("tiny.leap", Tokenizer::from_leap(golden::LEAP, None).unwrap(), false),
            ("tiny_hf.json", Tokenizer::from_tokenizer_json(golden::HF).unwrap().0, true),
            ("tiny_hf_fallback.json", Tokenizer::from_tokenizer_json(golden::HF_FALLBACK).unwrap().0, false),
            ("tiny.qtkr", Tokenizer::from_qtkr(golden::QTKR, Some(patterns::CL100K)).unwrap().0, true),
        ],
    })
}

/// Every score and merge-list model on fuzz text: no panic; byte-level merge-list models
/// (tiny_hf.json, QTKR) give back the text.
pub fn model_roundtrip(data: &[u8]) {
    let text = text_of(data);
    for (name, tok, lossless) in &models().all {
        let Some(ids) = exercise(tok, text, data) else { continue };
        let once = tok.decode_bytes(&ids).unwrap();
        if *lossless {
            assert_eq!(once, text.as_bytes(), "{name}: decode(encode(text)) != text");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The trainer.
// ---------------------------------------------------------------------------------------------

/// The trainer on small inputs: documents are the input's lines, the merge count its first
/// byte. Every trained token is distinct, every merge's token is its pair's bytes, and the
/// trained table loads as a rank encoder that round-trips every document.
pub fn train_small(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else { return };
    let text = text_of(rest);
    let mut counter = match bytepair_core::train::ChunkCounter::new(patterns::CL100K, 1) {
        Ok(c) => c,
        Err(e) => panic!("pattern: {e}"),
    };
    let docs: Vec<&str> = text.split('\n').collect();
    counter.add_documents(&docs).expect("counting");
    let counts: ChunkCounts = counter.finish();
    let mut merger = Merger::new(&counts).expect("merger");
    for _ in 0..(n % 64) {
        if merger.step(1).is_none() {
            break;
        }
    }
    let tokens = merger.tokens();
    let mut seen = std::collections::HashSet::new();
    for t in tokens {
        assert!(seen.insert(t.clone()), "trained token {t:?} twice");
    }
    for m in merger.merges() {
        let (a, b) = (m.pair.0, m.pair.1);
        let joined = [tokens[a as usize].as_slice(), tokens[b as usize].as_slice()].concat();
        assert_eq!(tokens[m.id as usize], joined, "merge {m:?} does not make its pair");
    }
    let enc = Encoder::from_ranks(tokens.iter().enumerate().map(|(r, t)| (t.as_slice(), r as u32)), vec![], patterns::CL100K)
        .expect("a trained table loads");
    for doc in &docs {
        let ids = enc.encode_ordinary(doc).expect("encode");
        assert_eq!(enc.decode_bytes(&ids).unwrap(), doc.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// The C API.
// ---------------------------------------------------------------------------------------------

mod capi_body;
pub use capi_body::capi;


mod chat_body;
pub use chat_body::chat_template;
