//! [`MergeTokenizer`]: the encode/decode path of merge-list models (QTKR files, HF
//! `tokenizer.json` BPE models).
//!
//! HF's order, which this follows exactly:
//!
//! text -> added tokens that match raw text split out ([`crate::added`]: flags `lstrip`,
//! `rstrip`, `single_word`) -> each part between them normalized ([`Normalizer`]) -> added
//! tokens that match normalized text split out -> each part pre-tokenized: [`Prefix`] (HF's
//! `ByteLevel(add_prefix_space)` or `Metaspace`, applied per part as HF does), then the split
//! pattern (with `emit_gaps` the text between matches is a piece too, as HF's `Split` with
//! `Isolated` does) -> per piece: optional whole-piece lookup (HF's `ignore_merges`) -> initial
//! symbols (bytes, or characters with byte fallback) -> merge-list BPE -> ids.

pub mod merge;



use crate::added::{AddedToken, AddedTokens, Part};

use crate::models::cache::ShardedCache;
use crate::models::merges::merge::{merge, Merges, Scratch};
use crate::vocab::table::{Duplicate, TokenTable};
use crate::added::SpecialFilter;
use crate::error::{Error, Result};
use crate::normalizers::Normalizer;
use crate::pretokenize::prefix::Prefix;
use crate::pretokenize::Pretokenizer;

const NONE: u32 = u32::MAX;

use crate::normalizers::SPACE;

/// How a piece is cut into initial symbols.
#[derive(Debug, Clone)]
pub enum Initial {
    /// One symbol per byte (byte-level vocabularies): every byte must have a token.
    Bytes(Box<[u32; 256]>),
    /// One symbol per character; a character with no token becomes its `<0xHH>` byte tokens
    /// (`byte_fallback`) or the unknown id (consecutive unknowns fused when `fuse_unk`).
    Chars { byte_fallback: Option<Box<[u32; 256]>>, unk: Option<u32>, fuse_unk: bool },
}

#[derive(Debug, Clone)]
pub struct MergeTokenizer {
    /// Every token by id; every one but the special tokens indexed.
    tokens: TokenTable,
    /// bytes -> id for every token (whole-piece lookups and character symbols).
    merges: Merges,
    initial: Initial,
    ignore_merges: bool,
    pretokenizer: Option<Pretokenizer>,
    emit_gaps: bool,
    added: AddedTokens,
    normalizer: Normalizer,
    prefix: Prefix,
    /// The merge list as given, `(left, right, merged)` in priority order: what writers save.
    merge_list: Vec<(u32, u32, u32)>,
    /// Decoding turns U+2581 back into spaces and drops the one the normalizer or pre-tokenizer
    /// put in front (HF's `Replace` + `Strip` decoders, or `Metaspace`'s).
    metaspace_decoder: bool,
    /// Merged pieces (see [`crate::models::cache`]): a piece's ids depend on its bytes alone
    /// (initial symbols, unknown ids fused within the piece, merges), so each is merged once.
    cache: ShardedCache,
}

impl MergeTokenizer {
    /// `tokens[id]` (empty = hole), `merges[k] = (left, right, merged)` in priority order.
    /// `Initial::Bytes` is built here from the single-byte tokens when `char_level` is false.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tokens: &[Vec<u8>],
        merges: &[(u32, u32, u32)],
        char_level: Option<(bool, Option<u32>, bool)>,
        ignore_merges: bool,
        pattern: Option<&str>,
        emit_gaps: bool,
        specials: Vec<(String, u32)>,
    ) -> Result<Self> {
        // The three big tables are independent: built side by side (loading a 100 K-token
        // tokenizer.json is otherwise dominated by them).
        let special_ids: std::collections::HashSet<u32> = specials.iter().map(|s| s.1).collect();
        let tables = || -> Result<_> {
            let mut table = TokenTable::from_tokens(tokens.iter().map(Vec::as_slice))?;
            let ordinary = (0..tokens.len() as u32).filter(|id| !special_ids.contains(id));
            table.index(ordinary).map_err(|Duplicate(prev, id)| {
                Error::Vocab(format!("token {:?} appears at ids {prev} and {id}", String::from_utf8_lossy(&tokens[id as usize])))
            })?;
            Ok(table)
        };
        let others = || -> Result<_> {
            let pretokenizer = pattern.map(Pretokenizer::new).transpose()?;
            Ok((Merges::new(merges)?, pretokenizer))
        };
        let (tables, others) = rayon::join(tables, others);
        let (table, (merge_table, pretokenizer)) = (tables?, others?);
        for &(a, b, m) in merges {
            for v in [a, b, m] {
                if tokens.get(v as usize).filter(|t| !t.is_empty()).is_none() {
                    return Err(Error::Vocab(format!("merge ({a}, {b}) -> {m} names id {v}, which has no token")));
                }
            }
        }
        for (s, id) in &specials {
            if tokens.get(*id as usize).map(|t| t.as_slice()) != Some(s.as_bytes()) {
                return Err(Error::Vocab(format!("special token {s:?} is not the token at id {id}")));
            }
        }
        // <0xHH> tokens may be added (special) tokens, so they are looked for in the whole table.
        let mut hex = [NONE; 256];
        for (id, t) in tokens.iter().enumerate() {
            if let Some(b) = crate::models::score::byte_piece(t) {
                hex[b as usize] = id as u32;
            }
        }
        let byte_ids = |what: &str| -> Result<Box<[u32; 256]>> {
            let mut ids = [NONE; 256];
            for b in 0..=255u8 {
                ids[b as usize] = match what {
                    "raw" => table.id(&[b][..]),
                    _ => Some(hex[b as usize]).filter(|&i| i != NONE),
                }
                .ok_or_else(|| Error::Vocab(format!(
                    "byte {b:#04x} has no {} token; a {} vocabulary needs all 256",
                    if what == "raw" { "single-byte" } else { "<0xHH>" },
                    if what == "raw" { "byte-level" } else { "byte-fallback" })))?;
            }
            Ok(Box::new(ids))
        };
        let initial = match char_level {
            None => Initial::Bytes(byte_ids("raw")?),
            Some((fallback, unk, fuse_unk)) => Initial::Chars {
                byte_fallback: if fallback { Some(byte_ids("hex")?) } else { None },
                unk,
                fuse_unk,
            },
        };
        Ok(MergeTokenizer {
            tokens: table,
            merges: merge_table,
            initial,
            ignore_merges,
            pretokenizer,
            emit_gaps,
            added: AddedTokens::from_specials(specials)?,
            normalizer: Normalizer::None,
            prefix: Prefix::None,
            merge_list: merges.to_vec(),
            metaspace_decoder: false,
            cache: ShardedCache::new(),
        })
    }

    /// The merge list, `(left, right, merged)` in priority order.
    pub fn merge_list(&self) -> &[(u32, u32, u32)] {
        &self.merge_list
    }

    /// Every id's bytes (empty for a hole in the table).
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.tokens.tokens()
    }

    /// Decode with HF's Metaspace-style decoder (see the field).
    pub fn with_metaspace_decoder(mut self, on: bool) -> Self {
        self.metaspace_decoder = on;
        self
    }

    /// HF's pipeline around the model: the normalizer, the pre-tokenizer's prefix rule and the
    /// added tokens with their flags (replacing the plain special tokens given to `new`). Each
    /// added token must be the token at its id.
    pub fn with_pipeline(mut self, normalizer: Normalizer, prefix: Prefix, added: Vec<AddedToken>) -> Result<Self> {
        for t in &added {
            if self.token(t.id) != Some(t.content.as_bytes()) {
                return Err(Error::Vocab(format!("added token {:?} is not the token at id {}", t.content, t.id)));
            }
        }
        self.normalizer = normalizer;
        self.prefix = prefix;
        self.added = AddedTokens::new(added, |s| normalizer.apply(s).into_owned())?;
        Ok(self)
    }

    /// Forgets the merged pieces this tokenizer has cached (the ids never depend on them).
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// The added tokens (with their flags) and their matchers.
    pub fn added(&self) -> &AddedTokens {
        &self.added
    }

    /// One piece: its token when it is one and `ignore_merges` is on (HF checks that first),
    /// else its cached ids, else merged (and cached). A single byte is one symbol: nothing to
    /// merge, nothing to cache.
    #[inline]
    fn encode_piece(&self, piece: &[u8], ids: &mut Vec<u32>, scratch: &mut Scratch, out: &mut Vec<u32>) {
        let cacheable = piece.len() > 1 && ShardedCache::holds(piece.len());
        if !(cacheable || self.ignore_merges) {
            return self.merge_piece(piece, ids, scratch, out);
        }
        let hash = self.tokens.hash(piece);
        if self.ignore_merges {
            if let Some(id) = self.tokens.id_hashed(piece, hash) {
                out.push(id);
                return;
            }
        }
        if !cacheable {
            return self.merge_piece(piece, ids, scratch, out);
        }
        if self.cache.get(piece, hash, out) {
            return;
        }
        let before = out.len();
        self.merge_piece(piece, ids, scratch, out);
        self.cache.put(piece, hash, &out[before..]);
    }

    /// A piece's initial symbols, merged, into `out`.
    fn merge_piece(&self, piece: &[u8], ids: &mut Vec<u32>, scratch: &mut Scratch, out: &mut Vec<u32>) {
        ids.clear();
        match &self.initial {
            Initial::Bytes(bytes) => ids.extend(piece.iter().map(|&b| bytes[b as usize])),
            Initial::Chars { byte_fallback, unk, fuse_unk } => {
                let text = std::str::from_utf8(piece).unwrap_or("");
                for (i, c) in text.char_indices() {
                    let ch = &piece[i..i + c.len_utf8()];
                    if let Some(id) = self.tokens.id(ch) {
                        ids.push(id);
                    } else if let Some(bytes) = byte_fallback {
                        ids.extend(ch.iter().map(|&b| bytes[b as usize]));
                    } else if let Some(u) = unk {
                        if !(*fuse_unk && ids.last() == Some(u)) {
                            ids.push(*u);
                        }
                    }
                }
            }
        }
        merge(&self.merges, ids, scratch, out);
    }

    fn encode_ordinary_into(&self, text: &str, ids: &mut Vec<u32>, scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<()> {
        match &self.pretokenizer {
            None => {
                if !text.is_empty() {
                    self.encode_piece(text.as_bytes(), ids, scratch, out);
                }
                Ok(())
            }
            Some(p) => {
                let base = text.as_ptr() as usize;
                let mut last = 0;
                p.for_each_piece(text, |piece| {
                    let start = piece.as_ptr() as usize - base;
                    if self.emit_gaps && start > last {
                        self.encode_piece(&text.as_bytes()[last..start], ids, scratch, out);
                    }
                    last = start + piece.len();
                    self.encode_piece(piece.as_bytes(), ids, scratch, out);
                })?;
                if self.emit_gaps && last < text.len() {
                    self.encode_piece(&text.as_bytes()[last..], ids, scratch, out);
                }
                Ok(())
            }
        }
    }

    /// Encodes text. Non-special added tokens are always split out; special ones only as
    /// `allowed` says (elsewhere their spelling is ordinary text).
    pub fn encode(&self, text: &str, allowed: &SpecialFilter) -> Result<Vec<u32>> {
        crate::models::collect_ids(text.len(), |out| self.encode_into(text, allowed, out))
    }

    /// [`Self::encode`] into `out`.
    pub fn encode_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) -> Result<()> {
        let mut bufs = (Vec::new(), Scratch::default());
        let mut err = Ok(());
        self.added.split(text, false, allowed, |part| match part {
            Part::Token(id) => out.push(id),
            Part::Text(at, s) if err.is_ok() => err = self.encode_raw_part(s, at == 0, allowed, &mut bufs, out),
            Part::Text(..) => {}
        });
        err
    }

    /// A part of the raw text between added tokens: normalized, then searched for the added
    /// tokens that match normalized text.
    fn encode_raw_part(&self, text: &str, at_start: bool, allowed: &SpecialFilter, bufs: &mut (Vec<u32>, Scratch), out: &mut Vec<u32>) -> Result<()> {
        let norm = self.normalizer.apply(text);
        if !self.added.has_normalized() {
            return self.encode_part(&norm, at_start, bufs, out);
        }
        let mut err = Ok(());
        self.added.split(&norm, true, allowed, |part| match part {
            Part::Token(id) => out.push(id),
            Part::Text(at, s) if err.is_ok() => err = self.encode_part(s, at_start && at == 0, bufs, out),
            Part::Text(..) => {}
        });
        err
    }

    /// A normalized part with no added tokens in it: the pre-tokenizer's prefix rule, the split
    /// pattern, the model.
    fn encode_part(&self, text: &str, at_start: bool, bufs: &mut (Vec<u32>, Scratch), out: &mut Vec<u32>) -> Result<()> {
        let text = self.prefix.apply(text, at_start);
        let (ids, scratch) = bufs;
        self.encode_ordinary_into(&text, ids, scratch, out)
    }

    pub fn token(&self, id: u32) -> Option<&[u8]> {
        self.tokens.token(id)
    }

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let t = self.token(id).ok_or(Error::UnknownToken(id))?;
            match (&self.initial, crate::models::score::byte_piece(t)) {
                (Initial::Chars { byte_fallback: Some(_), .. }, Some(b)) => out.push(b),
                _ => out.extend_from_slice(t),
            }
        }
        if self.metaspace_decoder {
            let mut text = Vec::with_capacity(out.len());
            let mut i = 0;
            while i < out.len() {
                if out[i..].starts_with(SPACE.as_bytes()) {
                    text.push(b' ');
                    i += SPACE.len();
                } else {
                    text.push(out[i]);
                    i += 1;
                }
            }
            if text.first() == Some(&b' ') {
                text.remove(0);
            }
            return Ok(text);
        }
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
    pub fn id(&self, bytes: &[u8]) -> Option<u32> {
        self.tokens.id(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte-level: the 256 bytes, then "ab", "bc", "ca", "abc", "bca" made by merges listed in
    /// an order that makes the answer depend on it.
    fn tokenizer(ignore_merges: bool) -> MergeTokenizer {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in ["ab", "bc", "ca", "abc", "bca"] {
            tokens.push(t.as_bytes().to_vec());
        }
        let (a, b, c) = (b'a' as u32, b'b' as u32, b'c' as u32);
        let merges = [(b, c, 257), (a, b, 256), (c, a, 258), (256, c, 259), (257, a, 260)];
        MergeTokenizer::new(&tokens, &merges, None, ignore_merges, Some(r"\S+|\s+"), false, vec![]).unwrap()
    }

    /// Pieces over a, b, c (and spaces between them), from a fixed xorshift stream.
    fn text(words: usize, seed: u64) -> String {
        let mut x = seed;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        (0..words)
            .map(|_| (0..1 + next(12)).map(|_| b"abc"[next(3) as usize] as char).collect::<String>())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Every piece merged directly, with no cache: what the cached encoder must give.
    fn uncached(t: &MergeTokenizer, text: &str) -> Vec<u32> {
        let (mut ids, mut scratch, mut out) = (Vec::new(), Scratch::default(), Vec::new());
        t.pretokenizer.as_ref().unwrap().for_each_piece(text, |p| {
            match t.ignore_merges.then(|| t.id(p.as_bytes())).flatten() {
                Some(id) => out.push(id),
                None => t.merge_piece(p.as_bytes(), &mut ids, &mut scratch, &mut out),
            }
        }).unwrap();
        out
    }

    /// A piece gives the same ids cold (merged, then cached) and warm (from the cache), with and
    /// without the whole-piece lookup.
    #[test]
    fn cold_and_warm_give_the_same_ids() {
        for ignore_merges in [false, true] {
            let t = tokenizer(ignore_merges);
            let s = text(2000, 0x2545_f491_4f6c_dd1d);
            let want = uncached(&t, &s);
            assert!(t.cache.is_empty());
            let cold = t.encode(&s, &SpecialFilter::None).unwrap();
            let cached = t.cache.len();
            assert!(cached > 100, "pieces were cached: {cached}");
            let warm = t.encode(&s, &SpecialFilter::None).unwrap();
            assert_eq!(cold, want);
            assert_eq!(warm, want);
            assert_eq!(t.cache.len(), cached, "the warm pass found every piece");
            // "abcabc": b+c is listed first (a bc a bc), then bc+a (a bca bc); a+b never forms.
            let mut out = Vec::new();
            t.encode_piece(b"abcabc", &mut Vec::new(), &mut Scratch::default(), &mut out);
            assert_eq!(out, [97, 260, 257]);
            // A clone starts with an empty cache and encodes the same; so does a cleared one.
            let clone = t.clone();
            assert!(clone.cache.is_empty());
            assert_eq!(clone.encode(&s, &SpecialFilter::None).unwrap(), want);
            t.clear_cache();
            assert!(t.cache.is_empty());
            assert_eq!(t.encode(&s, &SpecialFilter::None).unwrap(), want);
        }
    }

    /// With shards that clear at 3 entries, the cache is emptied over and over and every answer
    /// is still the merge's.
    #[test]
    fn a_full_shard_clears_and_still_answers() {
        let mut t = tokenizer(true);
        t.cache = ShardedCache::with_limit(3);
        let s = text(3000, 0x9e37_79b9_7f4a_7c15);
        let want = uncached(&t, &s);
        for _ in 0..3 {
            assert_eq!(t.encode(&s, &SpecialFilter::None).unwrap(), want);
            assert!(t.cache.len() <= 3 * crate::models::cache::SHARDS);
        }
    }
}
