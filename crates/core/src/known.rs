//! The encodings whose facts are pinned: for each name, the SHA-256 of the ranks it is built
//! from, its split pattern, its special tokens and the `n_vocab` tiktoken checks.
//!
//! A `.tiktoken` file holds ranks only; for the files OpenAI and Meta publish, the pattern and
//! the specials are facts of the encoding the file is named after. This table is where those
//! facts are written, once: the Python package (`bytepair._core.known_encoding`, read by
//! `bytepair.registry` and `bytepair.formats.known`) and the C library both read it, so a file is
//! recognised by the same hash and given the same specials on every path. Anything not in the
//! table gets no pattern by guess: the readers ask for one.
//!
//! The hash is of the ranks written as a `.tiktoken` file (`base64(token) rank\n` in rank order),
//! which is byte for byte what each published file is.

use crate::pretokenize::patterns;

/// One pinned encoding.
#[derive(Debug)]
pub struct KnownEncoding {
    /// tiktoken's name for it (`cl100k_base`), or `llama3`.
    pub name: &'static str,
    /// SHA-256 (lowercase hex) of its ranks as a `.tiktoken` file.
    pub sha256: &'static str,
    /// Its split pattern, from [`patterns`] (never a copy of the text).
    pub pattern: &'static str,
    /// The `explicit_n_vocab` tiktoken checks for it, if any.
    pub n_vocab: Option<u32>,
    /// Builds its special tokens, in the order given (some encodings have over a thousand, so
    /// they are made when asked for, not held).
    special_tokens: fn() -> Vec<(String, u32)>,
}

impl KnownEncoding {
    /// `(spelling, id)` of every special token, in tiktoken's order. An id can have two
    /// spellings (o200k_harmony's 200018); decoding gives the first.
    pub fn special_tokens(&self) -> Vec<(String, u32)> {
        (self.special_tokens)()
    }
}

const ENDOFTEXT: &str = "<|endoftext|>";
const ENDOFPROMPT: &str = "<|endofprompt|>";
const FIM: [&str; 3] = ["<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"];

const R50K_SHA256: &str = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930";
const P50K_SHA256: &str = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069";
const O200K_SHA256: &str = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d";

fn owned(pairs: &[(&str, u32)]) -> Vec<(String, u32)> {
    pairs.iter().map(|&(s, i)| (s.to_owned(), i)).collect()
}

fn r50k_specials() -> Vec<(String, u32)> {
    owned(&[(ENDOFTEXT, 50256)])
}

fn p50k_edit_specials() -> Vec<(String, u32)> {
    owned(&[(ENDOFTEXT, 50256), (FIM[0], 50281), (FIM[1], 50282), (FIM[2], 50283)])
}

fn cl100k_specials() -> Vec<(String, u32)> {
    owned(&[(ENDOFTEXT, 100257), (FIM[0], 100258), (FIM[1], 100259), (FIM[2], 100260), (ENDOFPROMPT, 100276)])
}

fn o200k_specials() -> Vec<(String, u32)> {
    owned(&[(ENDOFTEXT, 199999), (ENDOFPROMPT, 200018)])
}

/// OpenAI's harmony chat format (gpt-oss) on o200k_base's ranks: o200k_base's two, then every
/// id from 199998 to 201087 in order, by its name or else as `<|reserved_N|>` (tiktoken's
/// order). As in tiktoken, 200018 is both `<|endofprompt|>` and `<|reserved_200018|>`.
fn o200k_harmony_specials() -> Vec<(String, u32)> {
    const NAMED: [(&str, u32); 9] = [
        ("<|startoftext|>", 199998),
        (ENDOFTEXT, 199999),
        ("<|return|>", 200002),
        ("<|constrain|>", 200003),
        ("<|channel|>", 200005),
        ("<|start|>", 200006),
        ("<|end|>", 200007),
        ("<|message|>", 200008),
        ("<|call|>", 200012),
    ];
    let mut specials = o200k_specials();
    for id in 199998..201088u32 {
        let spelling = match NAMED.iter().find(|n| n.1 == id) {
            Some((s, _)) => (*s).to_owned(),
            None => format!("<|reserved_{id}|>"),
        };
        if !specials.iter().any(|(s, _)| *s == spelling) {
            specials.push((spelling, id));
        }
    }
    specials
}

/// Llama 3's 128,000 ranks are followed by 256 special tokens: these named ones, then
/// `<|reserved_special_token_N|>` numbered on from 2.
const LLAMA3_N_RANKS: u32 = 128_000;
const LLAMA3_N_SPECIAL: u32 = 256;
const LLAMA3_NAMED: [&str; 12] = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
];

fn llama3_specials() -> Vec<(String, u32)> {
    let named = LLAMA3_NAMED.iter().map(|s| (*s).to_owned());
    let reserved = (2..).map(|n| format!("<|reserved_special_token_{n}|>"));
    named.chain(reserved).zip(LLAMA3_N_RANKS..LLAMA3_N_RANKS + LLAMA3_N_SPECIAL).collect()
}

/// Every pinned encoding. Where one file serves several encodings (r50k_base and gpt2,
/// p50k_base and p50k_edit, o200k_base and o200k_harmony), the one the file is named after
/// comes first: it is what [`by_sha256`] answers, as tiktoken names the file.
pub const ENCODINGS: &[KnownEncoding] = &[
    KnownEncoding { name: "r50k_base", sha256: R50K_SHA256, pattern: patterns::R50K, n_vocab: Some(50257), special_tokens: r50k_specials },
    KnownEncoding { name: "gpt2", sha256: R50K_SHA256, pattern: patterns::R50K, n_vocab: Some(50257), special_tokens: r50k_specials },
    KnownEncoding { name: "p50k_base", sha256: P50K_SHA256, pattern: patterns::R50K, n_vocab: Some(50281), special_tokens: r50k_specials },
    KnownEncoding { name: "p50k_edit", sha256: P50K_SHA256, pattern: patterns::R50K, n_vocab: None, special_tokens: p50k_edit_specials },
    KnownEncoding {
        name: "cl100k_base",
        sha256: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pattern: patterns::CL100K,
        n_vocab: None,
        special_tokens: cl100k_specials,
    },
    KnownEncoding { name: "o200k_base", sha256: O200K_SHA256, pattern: patterns::O200K, n_vocab: None, special_tokens: o200k_specials },
    KnownEncoding { name: "o200k_harmony", sha256: O200K_SHA256, pattern: patterns::O200K, n_vocab: None, special_tokens: o200k_harmony_specials },
    // Meta's tokenizer.model as llama-models ships it (tiktoken text format).
    KnownEncoding {
        name: "llama3",
        sha256: "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
        pattern: patterns::LLAMA3,
        n_vocab: Some(LLAMA3_N_RANKS + LLAMA3_N_SPECIAL),
        special_tokens: llama3_specials,
    },
];

/// The pinned encoding of this name.
pub fn encoding(name: &str) -> Option<&'static KnownEncoding> {
    ENCODINGS.iter().find(|k| k.name == name)
}

/// The encoding a ranks file with this SHA-256 is named after, if bytepair knows the file.
pub fn by_sha256(digest: &[u8; 32]) -> Option<&'static KnownEncoding> {
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    ENCODINGS.iter().find(|k| k.sha256 == hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_well_formed() {
        for k in ENCODINGS {
            assert_eq!(k.sha256.len(), 64, "{}", k.name);
            assert!(k.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{}", k.name);
            assert!(patterns::BUILTIN.iter().any(|b| b.pattern == k.pattern), "{}: pattern not in the table", k.name);
            let specials = k.special_tokens();
            assert!(!specials.is_empty(), "{}", k.name);
            if let Some(n) = k.n_vocab {
                assert!(specials.iter().all(|&(_, id)| id < n), "{}", k.name);
            }
        }
    }

    #[test]
    fn a_shared_file_names_the_encoding_it_is_named_after() {
        let digest = |hex: &str| -> [u8; 32] {
            std::array::from_fn(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        };
        assert_eq!(by_sha256(&digest(O200K_SHA256)).unwrap().name, "o200k_base");
        assert_eq!(by_sha256(&digest(R50K_SHA256)).unwrap().name, "r50k_base");
        assert_eq!(by_sha256(&digest(P50K_SHA256)).unwrap().name, "p50k_base");
        assert!(by_sha256(&[0; 32]).is_none());
    }

    #[test]
    fn special_token_counts() {
        assert_eq!(encoding("llama3").unwrap().special_tokens().len(), 256);
        assert_eq!(encoding("llama3").unwrap().special_tokens()[255].0, "<|reserved_special_token_245|>");
        // 2 of o200k_base, 8 named, 6 + 1075 reserved (one of them 200018's second spelling).
        assert_eq!(encoding("o200k_harmony").unwrap().special_tokens().len(), 2 + 8 + 6 + 1075);
    }
}
