//! The rank model's vocabulary: the one [`TokenTable`] (id -> bytes for decoding, in the BPE2
//! file's layout; every model keeps its tokens in one) and the bytes -> rank index the merge
//! engine uses.
//!
//! Special tokens live in the table at their ids, so decoding is one lookup for any id, but
//! they are kept out of the rank index: ordinary text must never merge into a special token.
//!
//! The rank index has three parts by token length: up to 7 bytes in [`short`] (one packed `u64`
//! key), 8-15 bytes in [`medium`] (two packed words), longer in the table's own bytes -> id
//! index, which stores only ranks and compares keys against the blob. See docs/engine.md,
//! section 2.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

mod medium;
mod pages;
mod short;
pub mod table;
mod long;
use long::LongFilter;
pub use table::TokenTable;
pub(crate) use medium::{hash16, pack16, pack16_words, KEEP};
use medium::{MediumIndex, MAX_MEDIUM};
use short::{pack, pack_word, ShortIndex, MAX_SHORT};

/// Ids above this are refused: they would make the id-indexed table absurdly large.
pub const MAX_TOKEN_ID: u32 = (1 << 31) - 1;

#[derive(Clone)]
pub struct Vocab {
    /// Every token by id; indexes the mergeable tokens longer than [`MAX_MEDIUM`] bytes.
    table: TokenTable,
    /// The ranks of tokens of at most [`MAX_SHORT`] bytes, keyed by the packed bytes: the
    /// lookup the merge engine makes most.
    short: ShortIndex,
    /// And for tokens of 8 to [`MAX_MEDIUM`] bytes, keyed by two packed words.
    medium: MediumIndex,
    /// The rank of each single byte, so the merge engine never hashes one.
    byte_ranks: [u32; 256],
    /// Which ids are special tokens (sorted).
    special_ids: Vec<u32>,
    n_mergeable: usize,
    max_token_len: usize,
    /// Which pieces of 16+ bytes may be tokens, asked before the hashed lookup (vocab/long.rs).
    long: LongFilter,
    /// The long-piece engine, built on first use (models/rank/backtrack.rs).
    backtrack: crate::models::rank::backtrack::LazyBacktrack,
    /// Which two- and three-byte characters the merge may start from whole, built on first
    /// use (models/rank/chars.rs).
    chars: crate::models::rank::chars::LazyChars,
    /// A number no other table in this process has had: what a thread's kept piece cache
    /// (models/rank/cache.rs) is tied to. An address could be reused by a later table.
    serial: Serial,
}

/// [`Vocab::serial`]: a fresh number from a process-wide counter, replaced by
/// [`Vocab::forget_cached`]. A clone keeps the number, as it holds the same tokens.
#[derive(Debug)]
struct Serial(AtomicU64);

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

impl Serial {
    fn new() -> Self {
        Serial(AtomicU64::new(NEXT_SERIAL.fetch_add(1, Ordering::Relaxed)))
    }
}

impl Clone for Serial {
    fn clone(&self) -> Self {
        Serial(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

impl std::fmt::Debug for Vocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocab")
            .field("n_mergeable", &self.n_mergeable)
            .field("n_special", &self.special_ids.len())
            .field("table_len", &self.table.len())
            .finish()
    }
}

fn show(bytes: &[u8]) -> String {
    let mut s = String::from("b'");
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'\'' && b != b'\\' || b == b' ' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s.push('\'');
    s
}

impl Vocab {
    /// Builds the table from mergeable tokens `(bytes, rank)` and special tokens `(bytes, id)`.
    ///
    /// Refuses: empty tokens, a rank used twice, the same bytes at two ranks, ids above
    /// [`MAX_TOKEN_ID`], and a vocabulary that lacks one of the 256 single bytes (without all of
    /// them some text could not be encoded at all). A special token may share its id with
    /// another special token or with a mergeable token, as tiktoken allows: the table keeps the
    /// first entry's bytes (mergeable tokens come first), so that is what the id decodes to.
    pub fn new<'a, 'b, M, S>(mergeable: M, special: S) -> Result<Vocab>
    where
        M: IntoIterator<Item = (&'a [u8], u32)>,
        S: IntoIterator<Item = (&'b [u8], u32)>,
    {
        let mut entries: Vec<(&[u8], u32, bool)> = Vec::new();
        for (bytes, rank) in mergeable {
            entries.push((bytes, rank, false));
        }
        let n_mergeable = entries.len();
        for (bytes, id) in special {
            entries.push((bytes, id, true));
        }
        Self::from_entries(&entries, n_mergeable)
    }

    fn from_entries(entries: &[(&[u8], u32, bool)], n_mergeable: usize) -> Result<Vocab> {
        let max_id = entries.iter().map(|e| e.1).max().unwrap_or(0);
        if max_id > MAX_TOKEN_ID {
            return Err(Error::Vocab(format!("token id {max_id} is larger than {MAX_TOKEN_ID}")));
        }
        // An id-indexed table is only sensible when it is not mostly holes.
        let limit = 16 * entries.len() as u64 + (1 << 20);
        if max_id as u64 > limit {
            return Err(Error::Vocab(format!(
                "token id {max_id} is far beyond the {} tokens given; ids must be dense",
                entries.len()
            )));
        }
        let blob_len: usize = entries.iter().map(|e| e.0.len()).sum();
        if blob_len > u32::MAX as usize {
            return Err(Error::Vocab("the tokens' bytes add up to more than 4 GiB".into()));
        }
        let mut spans = vec![(0u32, 0u32); max_id as usize + 1];
        let mut blob = Vec::with_capacity(blob_len);
        let mut owner: Vec<Option<usize>> = vec![None; spans.len()];
        let mut max_token_len = 0;
        for (k, &(bytes, id, is_special)) in entries.iter().enumerate() {
            if bytes.is_empty() {
                let what = if is_special { "special token" } else { "rank" };
                return Err(Error::Vocab(format!("{what} {id} has an empty token")));
            }
            if let Some(prev) = owner[id as usize] {
                if is_special {
                    // A second spelling of a special token (tiktoken's o200k_harmony has
                    // <|endofprompt|> and <|reserved_200018|> at one id), or a special token at
                    // a mergeable token's id (tiktoken accepts it: its decoder looks mergeable
                    // ranks up first). It encodes to the id; decoding gives the first entry.
                    continue;
                }
                return Err(Error::Vocab(format!(
                    "id {id} is given to both {} and {}",
                    show(entries[prev].0),
                    show(bytes)
                )));
            }
            owner[id as usize] = Some(k);
            spans[id as usize] = (blob.len() as u32, bytes.len() as u32);
            blob.extend_from_slice(bytes);
            max_token_len = max_token_len.max(bytes.len());
        }
        // Only ids whose entry is a special token's spelling: an id that a special token shares
        // with a mergeable token stays mergeable (in the rank index, `mergeable()`).
        let special_ids = entries[n_mergeable..]
            .iter()
            .map(|e| e.1)
            .filter(|&id| owner[id as usize].is_some_and(|k| k >= n_mergeable))
            .collect();
        let table = TokenTable::from_spans(spans, blob)?;
        Self::assemble(table, special_ids, entries[..n_mergeable].iter().map(|e| e.1), max_token_len)
    }

    /// The vocabulary over `table`: these special ids, and the `mergeable` ids in the rank
    /// indexes.
    fn assemble(table: TokenTable, mut special_ids: Vec<u32>, mergeable: impl Iterator<Item = u32> + Clone, max_token_len: usize) -> Result<Vocab> {
        special_ids.sort_unstable();
        special_ids.dedup();
        let mut vocab = Vocab {
            table,
            short: ShortIndex::with_capacity(0),
            medium: MediumIndex::with_capacity(0),
            byte_ranks: [u32::MAX; 256],
            special_ids,
            n_mergeable: mergeable.clone().count(),
            max_token_len,
            long: Default::default(),
            backtrack: Default::default(),
            chars: Default::default(),
            serial: Serial::new(),
        };
        vocab.build_index(mergeable)?;
        Ok(vocab)
    }

    /// Builds from an id-indexed table already in BPE2 layout (used by the BPE2 reader).
    /// `special_ids` says which ids are special; every other non-empty id is mergeable.
    pub(crate) fn from_table(
        spans: Vec<(u32, u32)>,
        blob: Vec<u8>,
        special_ids: Vec<u32>,
    ) -> Result<Vocab> {
        let mut is_special = vec![false; spans.len()];
        for &id in &special_ids {
            match is_special.get_mut(id as usize) {
                Some(s) => *s = true,
                None => return Err(Error::Vocab(format!("special id {id} is outside the table"))),
            }
        }
        let max_token_len = spans.iter().map(|s| s.1 as usize).max().unwrap_or(0);
        let mergeable: Vec<u32> = (0..spans.len() as u32).filter(|&id| spans[id as usize].1 > 0 && !is_special[id as usize]).collect();
        let table = TokenTable::from_spans(spans, blob)?;
        Self::assemble(table, special_ids, mergeable.into_iter(), max_token_len)
    }

    /// Indexes the mergeable ids (their spans already in the table): tokens of up to
    /// [`MAX_SHORT`] bytes in the packed-key index, up to [`MAX_MEDIUM`] in the two-word one,
    /// longer ones in the hash table. Refuses the same bytes at two ranks and a missing single
    /// byte.
    fn build_index(&mut self, ids: impl Iterator<Item = u32>) -> Result<()> {
        let Vocab { table, short, medium, byte_ranks, long: long_filter, .. } = self;
        let twice = |bytes: &[u8], a: u32, b: u32| {
            Error::Vocab(format!("{} has two ranks, {} and {}", show(bytes), a.min(b), a.max(b)))
        };
        let mut short_pairs = Vec::new();
        let mut medium_pairs = Vec::new();
        let mut long = Vec::new();
        for rank in ids {
            let bytes = table.token_unchecked(rank);
            if bytes.len() <= MAX_SHORT {
                if bytes.len() == 1 {
                    byte_ranks[bytes[0] as usize] = rank;
                }
                short_pairs.push((pack(bytes), rank));
            } else if bytes.len() <= MAX_MEDIUM {
                medium_pairs.push((pack16(bytes), rank));
            } else {
                long.push(rank);
            }
        }
        *long_filter = LongFilter::new(long.iter().map(|&id| table.token_unchecked(id)));
        table.index(long).map_err(|table::Duplicate(a, b)| twice(table.token_unchecked(b), a, b))?;
        let token = |id: u32| table.token_unchecked(id);
        // Keys made in rank order (reading the token bytes in order) and then inserted in home
        // order (see `ShortIndex::from_pairs`).
        *short = ShortIndex::from_pairs(short_pairs.len(), &short_pairs).map_err(|(a, b)| twice(token(b), a, b))?;
        *medium = MediumIndex::from_pairs(&medium_pairs).map_err(|(a, b)| twice(token(b), a, b))?;
        self.check_bytes()
    }

    fn check_bytes(&self) -> Result<()> {
        match self.byte_ranks.iter().position(|&r| r == u32::MAX) {
            Some(b) => Err(Error::Vocab(format!(
                "the single byte {} has no rank; a byte-level vocabulary needs all 256",
                show(&[b as u8])
            ))),
            None => Ok(()),
        }
    }

    /// The rank of a mergeable token, or `None`. Special tokens are never found here.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= MAX_SHORT {
            return if bytes.is_empty() { None } else { self.short.get(pack(bytes)) };
        }
        if bytes.len() <= MAX_MEDIUM {
            return self.medium.get(pack16(bytes));
        }
        if !self.long.may_hold(bytes) {
            return None;
        }
        self.table.id(bytes)
    }

    /// [`rank`](Self::rank) of `text[start..end]` (at least one byte). A piece of up to 7 bytes
    /// with 8 bytes of `text` readable from its start is keyed from one load (15 bytes: two
    /// loads), with no branch on its length.
    ///
    /// A piece longer than the longest token is no token and is not hashed; that test comes
    /// last, as the short and medium indexes answer for every length they hold (so the encoder's
    /// per-piece path, nearly all pieces of up to 7 bytes, pays no compare for it).
    #[inline(always)]
    pub fn rank_in(&self, text: &[u8], start: usize, end: usize) -> Option<u32> {
        let n = end - start;
        // `start < len - 7` is `start + 8 <= len`, one compare against a bound computed once
        // per call, where `text.get(start..start + 8)` compiled to an overflow check, a
        // compare and, behind them, the slice's own length check again.
        if n <= MAX_SHORT {
            if start < text.len().saturating_sub(7) {
                // Safety: `start + 8 <= text.len()` (above), so the eight bytes are in `text`.
                let word = unsafe { text.as_ptr().add(start).cast::<u64>().read_unaligned() };
                return self.rank_word(u64::from_le(word), n);
            }
        } else if n <= MAX_MEDIUM {
            if start < text.len().saturating_sub(15) {
                return self.medium.get(pack16_words(&text[start..][..16], n));
            }
        } else if n > self.max_token_len {
            return None;
        }
        self.rank(&text[start..end])
    }

    /// The rank of the `n` (1..=7) bytes at the start of `word` (a little-endian load of them
    /// and possibly more).
    #[inline(always)]
    pub fn rank_word(&self, word: u64, n: usize) -> Option<u32> {
        self.short.get(pack_word(word, n))
    }

    /// [`rank_word`](Self::rank_word) as a rank or `u32::MAX`, with no branch on whether the
    /// bytes are a token (`ShortIndex::get_or_none`): for pair lookups whose outcomes the
    /// branch predictor cannot guess.
    #[inline(always)]
    pub fn rank_word_or_none(&self, word: u64, n: usize) -> u32 {
        self.short.get_or_none(pack_word(word, n))
    }

    /// The rank of a single byte (every vocabulary has all 256).
    #[inline]
    pub fn byte_rank(&self, byte: u8) -> u32 {
        self.byte_ranks[byte as usize]
    }


    /// The bytes of any token, mergeable or special; `None` for an unknown id.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        self.table.token(id)
    }

    /// The table every token is kept in.
    pub fn table(&self) -> &TokenTable {
        &self.table
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special_ids.binary_search(&id).is_ok()
    }

    /// Mergeable tokens as `(bytes, rank)`, in rank order.
    pub fn mergeable(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        (0..self.table.len() as u32)
            .filter(move |&id| !self.is_special(id))
            .filter_map(move |id| self.token(id).map(|b| (b, id)))
    }

    /// The largest mergeable rank (0 for an empty vocabulary).
    pub fn max_rank(&self) -> u32 {
        (0..self.table.len() as u32).rev().find(|&id| self.table.token(id).is_some() && !self.is_special(id)).unwrap_or(0)
    }

    pub fn special_ids(&self) -> &[u32] {
        &self.special_ids
    }
    pub fn n_mergeable(&self) -> usize {
        self.n_mergeable
    }
    /// Length of the id table: the largest id + 1.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }
    /// This table's identity within the process (no two tables share one; a clone keeps it,
    /// as it holds the same tokens).
    #[inline]
    pub fn serial(&self) -> u64 {
        self.serial.0.load(Ordering::Relaxed)
    }

    /// Gives the table a new serial, so that no thread's kept piece cache is used for it again
    /// (each is emptied, its memory reused, when its thread next encodes): `Encoding.clear_cache`.
    pub fn forget_cached(&self) {
        self.serial.0.store(NEXT_SERIAL.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
    }

    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }
    pub(crate) fn spans(&self) -> &[(u32, u32)] {
        self.table.spans()
    }
    /// The long-piece engine, built on the first call.
    pub(crate) fn backtrack(&self) -> Option<&crate::models::rank::backtrack::Backtrack> {
        self.backtrack.get(self)
    }
    /// The sealed-character table for a piece of `piece_len` bytes, built once enough pieces
    /// have asked for it (models/rank/chars.rs, `LazyChars`).
    pub(crate) fn chars(&self, piece_len: usize) -> Option<&crate::models::rank::chars::Chars> {
        self.chars.get(self, piece_len)
    }
    /// The sealed-character table if it has been built (asking does not count toward building
    /// it).
    pub(crate) fn chars_built(&self) -> Option<&crate::models::rank::chars::Chars> {
        self.chars.built()
    }
    pub(crate) fn blob(&self) -> &[u8] {
        self.table.blob()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes256() -> Vec<Vec<u8>> {
        (0..=255u8).map(|b| vec![b]).collect()
    }

    #[test]
    fn lookups() {
        let mut toks = bytes256();
        toks.push(b"ab".to_vec());
        let v = Vocab::new(
            toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)),
            [(b"<s>".as_slice(), 300)],
        )
        .unwrap();
        assert_eq!(v.rank(b"ab"), Some(256));
        assert_eq!(v.rank(b"<s>"), None, "specials are not mergeable");
        assert_eq!(v.token(300), Some(b"<s>".as_slice()));
        assert_eq!(v.token(299), None, "a hole");
        assert_eq!(v.byte_rank(b'a'), 97);
        assert_eq!(v.table_len(), 301);
    }

    /// Tokens of every length go to the short, medium or general index; `rank` and `rank_in`
    /// (keys read as words from a larger text, or byte by byte near its end) find each, and
    /// find nothing for a one-byte change of each.
    #[test]
    fn every_length_in_every_index() {
        let mut toks = bytes256();
        let text: Vec<u8> = (0..400u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut spans = Vec::new();
        for n in 2..=20 {
            for start in [0, 3 * n, text.len() - n - 5, text.len() - n] {
                if !toks.contains(&text[start..start + n].to_vec()) {
                    toks.push(text[start..start + n].to_vec());
                    spans.push((start, n, toks.len() as u32 - 1));
                }
            }
        }
        let v = Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), []).unwrap();
        for &(start, n, rank) in &spans {
            assert_eq!(v.rank(&text[start..start + n]), Some(rank), "len {n} at {start}");
            assert_eq!(v.rank_in(&text, start, start + n), Some(rank), "len {n} at {start}");
            let mut other = text.clone();
            other[start + n - 1] ^= 0x80;
            assert_eq!(v.rank_in(&other, start, start + n), None, "changed, len {n} at {start}");
            assert_eq!(v.rank(&other[start..start + n]), None, "changed, len {n} at {start}");
        }
        let e = Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32 % 300)), []).unwrap_err();
        assert!(e.to_string().contains("given to both"), "{e}");
    }

    #[test]
    fn refuses_missing_byte_and_duplicates() {
        let toks = bytes256();
        let e = Vocab::new(toks[1..].iter().map(|t| (t.as_slice(), t[0] as u32)), []).unwrap_err();
        assert!(e.to_string().contains("\\x00"), "{e}");
        let e = Vocab::new(
            toks.iter().map(|t| (t.as_slice(), t[0] as u32)).chain([(b"a".as_slice(), 256)]),
            [],
        )
        .unwrap_err();
        assert!(e.to_string().contains("two ranks"), "{e}");
        let e = Vocab::new(toks.iter().map(|t| (t.as_slice(), 0)), []).unwrap_err();
        assert!(e.to_string().contains("id 0 is given to both"), "{e}");
    }

    /// tiktoken accepts a special token at a mergeable token's id: the id stays mergeable
    /// (ranked, decoded as the mergeable bytes) and is not marked special in the table.
    #[test]
    fn special_token_may_share_a_mergeable_id() {
        let toks = bytes256();
        let v = Vocab::new(
            toks.iter().map(|t| (t.as_slice(), t[0] as u32)),
            [(b"<x>".as_slice(), 38), (b"<y>".as_slice(), 38), (b"<z>".as_slice(), 300)],
        )
        .unwrap();
        assert_eq!(v.token(38), Some(b"&".as_slice()));
        assert_eq!(v.rank(b"&"), Some(38));
        assert!(!v.is_special(38));
        assert!(v.is_special(300));
        assert_eq!(v.mergeable().count(), 256);
        assert_eq!(v.max_rank(), 255);
    }
}
