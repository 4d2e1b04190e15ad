//! A memo of merged pieces: real text repeats its words, and a piece that is not one token
//! costs a few hundred nanoseconds to merge but a few tens to look up.
//!
//! The cache is created on the first piece of a call that needs merging. Two tables:
//!
//! - **Inline** (nearly every entry): a piece of at most [`INLINE_PIECE`] bytes that merges into
//!   at most [`INLINE_IDS`] tokens is stored whole in one 32-byte slot of an open-addressed
//!   table: its bytes packed into two words (bytes 0-7, then bytes 8-14 and the length), and its
//!   ids. A lookup is two multiplies, one probe (usually one cache line) and two compares; no
//!   pointer into the text, no `memcmp`, no second array. On German text, where a quarter of
//!   the pieces are not one token, cachegrind counted 7% fewer instructions for the encoding
//!   than with the general map alone (wall clock: within this machine's noise;
//!   docs/engine-experiments.md).
//! - **General**: longer pieces, or pieces of more tokens, in a hash map whose keys borrow the
//!   caller's text and whose values point into one id buffer.
//!
//! The cache watches its own hit rate: a window of [`WINDOW`] lookups with fewer than one hit in
//! [`MIN_HIT_DIV`] turns it off for the next [`BYPASS`] pieces, which are merged directly. Text
//! whose pieces never repeat (random letters, base64) otherwise pays for a lookup that misses
//! and an insert that grows the tables on every piece (perf, o200k random letters: a fifth of
//! the time, 1% after).
//!
//! The inline table outlives the call: each thread keeps its last one, with the
//! [`Vocab::serial`] it was filled from, and the next call on the same table starts from it
//! (up to [`KEPT_SLOTS`] slots, 1 MB; a larger one is dropped). A batch of short documents
//! then pays for each missed word once per thread rather than once per document, and so does a
//! loop of `encode` calls. Threads share nothing, so more threads add no contention. The
//! general map borrows the text and dies with the call.
//!
//! At most [`MAX_ENTRIES`] pieces per table, of at most [`MAX_PIECE`] bytes; past that, pieces
//! are merged directly. Output is identical with or without the cache: it stores exactly what
//! the merge produced.

use hashbrown::HashMap;

use super::merge::{merge_miss, merge_miss_unpredictable};
use crate::models::Sink;
use crate::vocab::{pack16, pack16_words, Vocab};

pub const MAX_ENTRIES: usize = 1 << 16;
/// Longest piece cached. 128, the longest piece the quadratic merge takes: German man pages
/// repeat lines of 65-79 bytes (`.\"****…`, ` ----…`) over a thousand times in 4 MB, each a
/// merge of about 2 µs (docs/engine-experiments.md, "Fifth pass").
pub const MAX_PIECE: usize = 128;
/// Longest piece the inline table holds.
pub const INLINE_PIECE: usize = 15;
/// Most ids an inline slot holds.
pub const INLINE_IDS: usize = 4;

/// No id is this (ids are at most 2^31 - 1): marks the unused ids of a slot.
const NO_ID: u32 = u32::MAX;

/// `key[1] == 0` marks an empty slot (a stored key has its length, at least 2, in the top byte).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot {
    key: [u64; 2],
    ids: [u32; INLINE_IDS],
}

const EMPTY: Slot = Slot { key: [0, 0], ids: [NO_ID; INLINE_IDS] };

struct Inline {
    slots: Vec<Slot>,
    len: usize,
    shift: u32,
}

impl Inline {
    fn new(bits: u32) -> Self {
        Inline { slots: vec![EMPTY; 1 << bits], len: 0, shift: 64 - bits }
    }

    #[inline(always)]
    fn home(&self, key: [u64; 2]) -> usize {
        (crate::vocab::hash16(key) >> self.shift) as usize
    }

    /// The slot holding `key`, or the empty slot where it would go.
    #[inline(always)]
    fn find(&self, key: [u64; 2]) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.key == key || s.key[1] == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores a key known to be absent. The table stays at most 3/4 full (it doubles first).
    fn insert(&mut self, key: [u64; 2], ids: [u32; INLINE_IDS]) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let bits = 64 - self.shift + 1;
            let old = std::mem::replace(self, Inline::new(bits));
            for s in old.slots.iter().filter(|s| s.key[1] != 0) {
                let i = self.find(s.key);
                self.slots[i] = *s;
            }
            self.len = old.len;
        }
        let i = self.find(key);
        self.slots[i] = Slot { key, ids };
        self.len += 1;
    }
}

/// Most slots of an inline table a thread keeps after a call (32 bytes each: 1 MB).
pub const KEPT_SLOTS: usize = 1 << 15;

thread_local! {
    /// This thread's inline table from its last call, and the serial of the table it caches.
    static KEPT: std::cell::Cell<Option<(u64, Inline)>> = const { std::cell::Cell::new(None) };
}

pub struct PieceCache<'t> {
    /// The [`Vocab::serial`] of the table whose merges this cache holds.
    serial: u64,
    inline: Inline,
    /// piece -> (offset, length) in `ids`.
    map: HashMap<&'t [u8], (u32, u32), foldhash::fast::FixedState>,
    ids: Vec<u32>,
    /// Lookups and hits in the current window of [`WINDOW`] lookups.
    lookups: u32,
    hits: u32,
    /// Pieces still to merge directly, without the cache (see [`BYPASS`]).
    bypass: u32,
}

/// Lookups per window of the hit-rate check.
const WINDOW: u32 = 1024;
/// A window with fewer hits than `WINDOW / MIN_HIT_DIV` turns the cache off for [`BYPASS`]
/// pieces: on text whose pieces never repeat (random letters, base64) every lookup misses and
/// every insert grows the tables, which cost about a fifth of the time there (perf, o200k
/// letters). Real text hits far more often (German: about nine lookups in ten).
const MIN_HIT_DIV: u32 = 8;
const BYPASS: u32 = 1 << 15;

impl Drop for PieceCache<'_> {
    /// Hands the inline table back to the thread for its next call, unless it grew past
    /// [`KEPT_SLOTS`].
    fn drop(&mut self) {
        if self.inline.slots.len() <= KEPT_SLOTS {
            let inline = std::mem::replace(&mut self.inline, Inline { slots: Vec::new(), len: 0, shift: 64 });
            // `try_with`: during thread teardown the slot may already be gone; then the table
            // is simply freed.
            let _ = KEPT.try_with(|k| k.set(Some((self.serial, inline))));
        }
    }
}

impl<'t> PieceCache<'t> {
    /// A cache for `vocab`: this thread's kept inline table if it was filled from `vocab`,
    /// else an empty one.
    fn new(vocab: &Vocab) -> Self {
        let serial = vocab.serial();
        let kept = KEPT.try_with(|k| k.take()).ok().flatten().filter(|(s, _)| *s == serial);
        PieceCache {
            serial,
            inline: kept.map_or_else(|| Inline::new(8), |(_, inline)| inline),
            map: HashMap::with_hasher(Default::default()),
            ids: Vec::new(),
            lookups: 0,
            hits: 0,
            bypass: 0,
        }
    }

    /// Merges `text[start..end]` (at least two bytes, known not to be a single token) into
    /// `out`, through the cache.
    #[inline]
    pub fn merge<S: Sink>(slot: &mut Option<Self>, vocab: &Vocab, text: &'t [u8], start: usize, end: usize, out: &mut S) {
        let piece = &text[start..end];
        if piece.len() > MAX_PIECE {
            return merge_miss(vocab, piece, out);
        }
        let cache = slot.get_or_insert_with(|| Self::new(vocab));
        if cache.bypass > 0 {
            cache.bypass -= 1;
            // Pieces that do not repeat: which of their pairs are tokens does not either.
            return merge_miss_unpredictable(vocab, piece, out);
        }
        cache.lookups += 1;
        if cache.lookups == WINDOW {
            if cache.hits < WINDOW / MIN_HIT_DIV {
                cache.bypass = BYPASS;
            }
            cache.lookups = 0;
            cache.hits = 0;
        }
        let key = if piece.len() <= INLINE_PIECE {
            let key = match text.get(start..start + 16) {
                Some(words) => pack16_words(words, piece.len()),
                None => pack16(piece),
            };
            let s = &cache.inline.slots[cache.inline.find(key)];
            if s.key[1] != 0 {
                cache.hits += 1;
                // The first two ids always exist: a piece that is not a token merges into at
                // least two.
                out.push(s.ids[0]);
                out.push(s.ids[1]);
                for &id in &s.ids[2..] {
                    if id == NO_ID {
                        break;
                    }
                    out.push(id);
                }
                return;
            }
            Some(key)
        } else {
            None
        };
        // Not inline: in the general map, or not seen yet.
        if let Some(&(off, len)) = cache.map.get(piece) {
            cache.hits += 1;
            out.extend(&cache.ids[off as usize..(off + len) as usize]);
            return;
        }
        let off = cache.ids.len();
        merge_miss(vocab, piece, &mut cache.ids);
        let got = &cache.ids[off..];
        out.extend(got);
        match key {
            // At least two ids (a lookup emits the first two unconditionally); always true here,
            // as a piece that merges into one id is a token, but not assumed.
            Some(key) if (2..=INLINE_IDS).contains(&got.len()) && cache.inline.len < MAX_ENTRIES => {
                let mut ids = [NO_ID; INLINE_IDS];
                for (k, id) in ids.iter_mut().enumerate() {
                    // A fixed-length loop, not a copy of got.len() ids (a `memcpy` call).
                    *id = got.get(k).copied().unwrap_or(NO_ID);
                }
                cache.inline.insert(key, ids);
                cache.ids.truncate(off);
            }
            _ if cache.map.len() < MAX_ENTRIES && cache.ids.len() <= u32::MAX as usize => {
                cache.map.insert(piece, (off as u32, (cache.ids.len() - off) as u32));
            }
            _ => cache.ids.truncate(off),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::rank::merge::merge_piece;

    /// Many distinct pieces (so the inline table grows several times), each asked for twice:
    /// the cached answer is the merge's answer.
    #[test]
    fn cached_answers_equal_the_merge() {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for m in ["ab", "bc", "abc", "cd", "ca", "bca", "dd", "ddd", "abcd", "cdab", "abcdab", "dcba", "bcda"] {
            toks.push(m.as_bytes().to_vec());
        }
        let v = Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), []).unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let pieces: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                // Mostly short pieces (the inline table), some up to 31 bytes (the map), a few
                // around and past MAX_PIECE (the map, or merged directly).
                let n = match next(40) {
                    0 => [MAX_PIECE - 1, MAX_PIECE, MAX_PIECE + 1, 65, 100][next(5) as usize],
                    1..=9 => 2 + next(30) as usize,
                    _ => 2 + next(3) as usize,
                };
                (0..n).map(|_| b"abcdefghijklmnop"[next(16) as usize]).collect()
            })
            .collect();
        // One text holding every piece, so lookups read whole words around them (and the last
        // pieces, near the end, take the byte-by-byte packing).
        let text: Vec<u8> = pieces.concat();
        // Each piece asked for twice in a row (a hit rate of one half keeps the cache on).
        let mut cache = None;
        let mut start = 0;
        for p in &pieces {
            let end = start + p.len();
            if v.rank(p).is_none() {
                for round in 0..2 {
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    PieceCache::merge(&mut cache, &v, &text, start, end, &mut got);
                    merge_piece(&v, p, &mut want);
                    assert_eq!(got, want, "round {round}, piece {:?}", String::from_utf8_lossy(p));
                }
            }
            start = end;
        }
        let c = cache.unwrap();
        assert!(c.inline.len > 5000 && !c.map.is_empty(), "both tables used: {} {}", c.inline.len, c.map.len());
        assert_eq!(c.bypass, 0);

        // The same pieces once each: few hits, so the cache turns itself off for a while, and
        // the answers stay the merge's. On a new thread, which has kept no table.
        std::thread::scope(|scope| scope.spawn(|| once_each(&v, &text, &pieces)).join().unwrap());
    }

    fn once_each(v: &Vocab, text: &[u8], pieces: &[Vec<u8>]) {
        let mut cache = None;
        let mut start = 0;
        let mut bypassed = false;
        for p in pieces {
            let end = start + p.len();
            if v.rank(p).is_none() {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                PieceCache::merge(&mut cache, v, text, start, end, &mut got);
                merge_piece(v, p, &mut want);
                assert_eq!(got, want, "piece {:?}", String::from_utf8_lossy(p));
                bypassed |= cache.as_ref().is_some_and(|c| c.bypass > 0);
            }
            start = end;
        }
        assert!(bypassed, "a stream of pieces that do not repeat turns the cache off");
    }

    /// A thread keeps its inline table for the next call on the same vocabulary (the second
    /// call's first lookup hits), and never serves it to another vocabulary, even one with the
    /// same tokens (whose merges could differ in general).
    #[test]
    fn the_inline_table_outlives_the_call_for_its_own_vocabulary_only() {
        let toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain(["ab", "bc"].map(|m| m.as_bytes().to_vec())).collect();
        let build = || Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), []).unwrap();
        let (a, b) = (build(), build());
        let text = b"abcabc";
        let call = |v: &Vocab| {
            let mut cache = None;
            let mut got = Vec::new();
            PieceCache::merge(&mut cache, v, text, 0, 3, &mut got);
            let mut want = Vec::new();
            merge_piece(v, b"abc", &mut want);
            assert_eq!(got, want);
            cache.as_ref().unwrap().hits
        };
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    assert_eq!(call(&a), 0, "first call: nothing kept yet");
                    assert_eq!(call(&a), 1, "second call on the same table: the kept entry");
                    assert_eq!(call(&b), 0, "another table: the kept one is not used");
                    assert_eq!(call(&b), 1);
                    assert_eq!(call(&a), 0, "a thread keeps one table: a's was replaced by b's");
                })
                .join()
                .unwrap()
        });
    }
}
