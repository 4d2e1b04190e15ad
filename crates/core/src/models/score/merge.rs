//! Score BPE, as SentencePiece's BPE model and llama2.c define it.
//!
//! Definition: cut the text into initial symbols; while some adjacent pair of unfrozen symbols
//! concatenates to a mergeable piece, merge the pair whose piece has the **highest score**,
//! the leftmost such pair on a tie; emit the ids of the symbols left.
//!
//! Engine: segments of up to [`SMALL`] symbols (nearly all) scan an array of their pairs'
//! scores ([`merge_small`]); longer ones use the merge heap shared with merge-list BPE
//! ([`crate::models::heap`]: a doubly linked list and a max-heap of (score, leftmost
//! position) with lazy deletion), with score as its rule. A segment of n symbols costs
//! O(n log n) heap operations and O(n) pair lookups.
//!
//! A candidate pair is found by its two ids in a pair table ((left id, right id) -> piece),
//! built after load on a background thread; until it is there (and for symbols with no id,
//! or pairs longer than [`PAIR_MAX`] bytes) by hashing the pair's bytes. Both give the same
//! piece, so the result never depends on when the table arrives.
//!
//! The caller usually cuts the text into independent segments first (see
//! [`crate::models::score`]), and a segment that is itself a piece whose own BPE yields that piece
//! costs one hash lookup.

use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::vocab::table::{Duplicate, TokenTable};
use crate::models::heap::{Heap, MergeRule};

pub const NONE: u32 = u32::MAX;

type Hasher = foldhash::fast::FixedState;

/// Pieces by id with their scores, the bytes -> id index of the mergeable ones, and the pair
/// table. Cloning shares both (they never change after load).
#[derive(Clone)]
pub struct ScoreVocab {
    t: Arc<Table>,
    /// (left id, right id) -> id of their concatenation, for every mergeable piece of up to
    /// [`PAIR_MAX`] bytes and every way to cut it into two mergeable pieces: a merge candidate
    /// costs one probe of a u64 key instead of hashing and comparing bytes (see [`pair`]).
    /// Built after load on a background thread (see [`ScoreVocab::new`]); until it is there,
    /// candidates are found by their bytes, with the same result.
    pairs: Arc<OnceLock<Pairs>>,
}

struct Table {
    /// Every piece by id; the mergeable ones indexed.
    tokens: TokenTable,
    scores: Vec<f32>,
    /// Whether every unfrozen symbol starts and ends on a UTF-8 character boundary (symbols
    /// are characters and merges of them), so the pair table needs only cuts between
    /// characters; false for byte-level tables, whose symbols start as single bytes.
    char_cuts: bool,
}

type Pairs = hashbrown::HashMap<u64, u32, Hasher>;

/// When [`ScoreVocab::new`] builds the pair table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairTable {
    /// Before returning.
    Now,
    /// On a thread of its own, after returning (built now for small vocabularies, where that
    /// costs less than starting a thread).
    Background,
    /// Never (tests of the by-bytes path).
    Never,
}

/// Vocabularies with fewer pieces build their pair table before [`ScoreVocab::new`] returns.
const BACKGROUND_MIN: usize = 4096;

impl std::fmt::Debug for ScoreVocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScoreVocab").field("pieces", &self.t.tokens.len()).finish()
    }
}

/// A symbol: a byte range of the segment, its id when known, and whether it may merge.
/// An unfrozen symbol's `id` is either `NONE` or the id [`ScoreVocab::lookup`] gives its bytes
/// ([`merge`] relies on it to find pairs by id).
#[derive(Debug, Clone, Copy)]
pub struct Symbol {
    pub start: u32,
    pub end: u32,
    pub id: u32,
    pub frozen: bool,
}

/// The longest piece the pair table holds.
const PAIR_MAX: usize = 64;

#[inline]
fn pair_key(a: u32, b: u32) -> u64 {
    (a as u64) << 32 | b as u64
}

/// Orders f32 scores as u32 keys (scores are finite; -0.0 was folded into 0.0 at load).
#[inline]
fn key(score: f32) -> u32 {
    let b = score.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Reusable buffers for [`merge`], so encoding allocates once per call, not per segment.
#[derive(Default)]
pub struct Scratch {
    /// Small segments: (score key, id) of each adjacent pair's piece, key 0 for none.
    best: Vec<(u32, u32)>,
    heap: Heap,
    pub symbols: Vec<Symbol>,
}

impl ScoreVocab {
    /// `pieces[id] = (bytes, score, mergeable)`; an empty `bytes` is a hole. `char_cuts`: every
    /// unfrozen symbol the encoder makes is whole UTF-8 characters (see [`Table::char_cuts`]).
    /// The pieces, scores and index are built here (O(total bytes)); the pair table as `when`
    /// says. It is the larger part of the work (every cut of every piece of up to
    /// [`PAIR_MAX`] bytes, looked up), and encoding is exact without it, only slower: in the
    /// background, loading a SentencePiece model returns in less than half the time.
    pub fn new(pieces: &[(&[u8], f32, bool)], char_cuts: bool, when: PairTable) -> Result<Self> {
        let total: usize = pieces.iter().map(|p| p.0.len()).sum();
        if total > u32::MAX as usize || pieces.len() > crate::vocab::MAX_TOKEN_ID as usize {
            return Err(Error::Vocab("the vocabulary is too large".into()));
        }
        if let Some(id) = pieces.iter().position(|p| !p.1.is_finite()) {
            return Err(Error::Vocab(format!("piece {id} has score {}", pieces[id].1)));
        }
        let mut tokens = TokenTable::from_tokens(pieces.iter().map(|p| p.0))?;
        let mergeable = (0..pieces.len() as u32).filter(|&id| pieces[id as usize].2);
        tokens.index(mergeable).map_err(|Duplicate(a, b)| {
            let bytes = String::from_utf8_lossy(pieces[b as usize].0);
            Error::Vocab(format!("piece {bytes:?} appears twice, at ids {a} and {b}"))
        })?;
        // `+ 0.0` makes a score of -0.0 into 0.0, so equal scores compare equal bit for bit.
        let t = Table { tokens, scores: pieces.iter().map(|p| p.1 + 0.0).collect(), char_cuts };
        let v = ScoreVocab { t: Arc::new(t), pairs: Arc::new(OnceLock::new()) };
        match when {
            PairTable::Never => {}
            PairTable::Background if pieces.len() >= BACKGROUND_MIN => {
                // A thread of its own, not rayon's pool: a rayon worker waiting in a `join`
                // (a later load, a batch) would run a queued job inline and make its caller
                // wait for it. The thread holds the table strongly but the pair slot weakly: a
                // tokenizer dropped before or while it runs stops it (checked every 512 pieces).
                let (t, slot) = (Arc::clone(&v.t), Arc::downgrade(&v.pairs));
                let job = move || {
                    if let Some(built) = t.pair_table(|| slot.strong_count() > 0) {
                        if let Some(slot) = slot.upgrade() {
                            let _ = slot.set(built);
                        }
                    }
                };
                // If no thread can be started, encoding goes on without the table (exact, slower).
                let _ = std::thread::Builder::new().name("bytepair-pairs".into()).spawn(job);
            }
            _ => {
                let _ = v.pairs.set(v.t.pair_table(|| true).expect("not cancelled"));
            }
        }
        Ok(v)
    }

    /// Waits for nothing: the pair table if it has been built.
    #[inline]
    fn pairs(&self) -> Option<&Pairs> {
        self.pairs.get()
    }

    /// Whether the pair table is there yet (it is built in the background, see [`new`](Self::new)).
    pub fn has_pair_table(&self) -> bool {
        self.pairs.get().is_some()
    }

    /// The mergeable piece that symbols `a` and `b` (adjacent in `text`) concatenate to.
    /// An unfrozen symbol's id is `NONE` or the index id of its bytes (see [`Symbol`]), so two
    /// known ids give the answer from the pair table; a symbol with no id (a character that is
    /// no piece) falls back to looking up the bytes.
    /// Pieces longer than [`PAIR_MAX`] bytes are not in the table (a hostile 100 KB piece would
    /// cost quadratic time to cut every way at load); a pair that long is looked up by bytes.
    /// `pairs` is [`pairs`](Self::pairs), fetched once per segment by the caller.
    #[inline]
    fn pair(&self, pairs: Option<&Pairs>, text: &[u8], a: &Symbol, b: &Symbol) -> Option<u32> {
        match pairs {
            Some(p) if a.id != NONE && b.id != NONE && (b.end - a.start) as usize <= PAIR_MAX => p.get(&pair_key(a.id, b.id)).copied(),
            _ => self.lookup(&text[a.start as usize..b.end as usize]),
        }
    }

    #[inline]
    pub fn lookup(&self, bytes: &[u8]) -> Option<u32> {
        self.t.lookup(bytes)
    }

    /// The hash [`lookup`](Self::lookup) uses, for callers that key other tables by it too.
    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        self.t.tokens.hash(bytes)
    }

    #[inline]
    pub fn lookup_hashed(&self, bytes: &[u8], hash: u64) -> Option<u32> {
        self.t.lookup_hashed(bytes, hash)
    }

    #[inline]
    pub fn score(&self, id: u32) -> f32 {
        self.t.scores[id as usize]
    }

    pub fn token(&self, id: u32) -> Option<&[u8]> {
        self.t.token(id)
    }

    pub fn len(&self) -> usize {
        self.t.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t.tokens.is_empty()
    }
}

impl Table {
    #[inline]
    fn lookup(&self, bytes: &[u8]) -> Option<u32> {
        self.tokens.id(bytes)
    }

    #[inline]
    fn lookup_hashed(&self, bytes: &[u8], hash: u64) -> Option<u32> {
        self.tokens.id_hashed(bytes, hash)
    }

    #[inline]
    fn token(&self, id: u32) -> Option<&[u8]> {
        self.tokens.token(id)
    }

    /// The pair table: for every mergeable piece of up to [`PAIR_MAX`] bytes, every cut (between
    /// characters when [`char_cuts`](Table::char_cuts)) whose left part is a mergeable piece and
    /// whose right part is one too. O(total bytes of those pieces) lookups; the right part is
    /// looked up only when the left one is a piece (about 220 K lookups for a 32 K-piece
    /// SentencePiece model, 59 K pairs). `None` as soon as `alive()` says nobody wants it.
    fn pair_table(&self, alive: impl Fn() -> bool) -> Option<Pairs> {
        let mut pairs = Pairs::with_capacity_and_hasher(self.tokens.indexed().len() * 2, Hasher::default());
        for (n, id) in self.tokens.indexed().enumerate() {
            if n % 512 == 0 && !alive() {
                return None;
            }
            let p = self.tokens.token_unchecked(id);
            if p.len() > PAIR_MAX {
                continue; // found by its bytes instead (see `pair`): keeps this linear
            }
            for k in 1..p.len() {
                // A symbol of whole characters never ends before a continuation byte.
                if self.char_cuts && p[k] & 0xc0 == 0x80 {
                    continue;
                }
                if let Some(a) = self.lookup(&p[..k]) {
                    if let Some(b) = self.lookup(&p[k..]) {
                        pairs.insert(pair_key(a, b), id);
                    }
                }
            }
        }
        Some(pairs)
    }
}

/// Merges the symbols of one segment (`symbols` cover `text` left to right) and calls `emit`
/// with each final symbol in order. A merged symbol's `id` is its piece's id; an unmerged
/// one keeps the id it came with.
pub fn merge(
    vocab: &ScoreVocab,
    text: &[u8],
    symbols: &mut [Symbol],
    scratch: &mut Scratch,
    mut emit: impl FnMut(&Symbol),
) {
    let n = symbols.len();
    if n == 0 {
        return;
    }
    if n == 1 {
        emit(&symbols[0]);
        return;
    }
    if n <= SMALL {
        merge_small(vocab, text, symbols, &mut scratch.best, emit)
    } else {
        merge_heap(vocab, text, symbols, scratch, emit)
    }
}

/// Score BPE as a [`MergeRule`]: a pair's priority is its piece's score (as an ordered
/// [`key`]), and the merged symbol spans both and takes the piece's id.
struct ByScore<'a> {
    vocab: &'a ScoreVocab,
    pairs: Option<&'a Pairs>,
    text: &'a [u8],
    symbols: &'a mut [Symbol],
}

impl MergeRule for ByScore<'_> {
    #[inline]
    fn pair(&self, l: u32, r: u32) -> Option<(u32, u32)> {
        let (a, b) = (&self.symbols[l as usize], &self.symbols[r as usize]);
        if a.frozen || b.frozen {
            return None;
        }
        let id = self.vocab.pair(self.pairs, self.text, a, b)?;
        Some((key(self.vocab.score(id)), id))
    }

    #[inline]
    fn merge(&mut self, l: u32, r: u32, id: u32) {
        self.symbols[l as usize].end = self.symbols[r as usize].end;
        self.symbols[l as usize].id = id;
    }
}

/// [`merge`] with the candidate pairs in the shared heap ([`crate::models::heap`]; segments of
/// more than [`SMALL`] symbols).
fn merge_heap(vocab: &ScoreVocab, text: &[u8], symbols: &mut [Symbol], scratch: &mut Scratch, mut emit: impl FnMut(&Symbol)) {
    let heap = &mut scratch.heap;
    heap.run(symbols.len(), &mut ByScore { vocab, pairs: vocab.pairs(), text, symbols });
    for i in heap.symbols() {
        emit(&symbols[i as usize]);
    }
}

/// Segments of up to this many symbols (nearly all: most are a word) merge by scanning.
const SMALL: usize = 32;

/// [`merge`] for a few symbols: the pairs' pieces in an array, and each step a scan for the
/// highest score, the leftmost on a tie. That is the pair the heap would pop (its valid entries
/// are exactly the current adjacent pairs), without the heap: O(n^2) steps, each trivial, which
/// beats O(n log n) heap operations for short segments.
fn merge_small(vocab: &ScoreVocab, text: &[u8], symbols: &mut [Symbol], best: &mut Vec<(u32, u32)>, mut emit: impl FnMut(&Symbol)) {
    let pairs = vocab.pairs();
    let candidate = |a: &Symbol, b: &Symbol| -> (u32, u32) {
        if a.frozen || b.frozen {
            return (0, NONE);
        }
        match vocab.pair(pairs, text, a, b) {
            // `key` is never 0 for a finite score, so 0 can mean "no piece".
            Some(id) => (key(vocab.score(id)), id),
            None => (0, NONE),
        }
    };
    let mut n = symbols.len();
    best.clear();
    best.extend(symbols.windows(2).map(|w| candidate(&w[0], &w[1])));
    loop {
        let mut top = 0;
        let mut at = 0;
        for (i, &(k, _)) in best.iter().enumerate() {
            if k > top {
                top = k;
                at = i;
            }
        }
        if top == 0 {
            break;
        }
        // Merge symbols `at` and `at + 1`; pair `at` disappears, its neighbours change.
        symbols[at].end = symbols[at + 1].end;
        symbols[at].id = best[at].1;
        symbols.copy_within(at + 2..n, at + 1);
        n -= 1;
        best.remove(at);
        if at > 0 {
            best[at - 1] = candidate(&symbols[at - 1], &symbols[at]);
        }
        if at + 1 < n {
            best[at] = candidate(&symbols[at], &symbols[at + 1]);
        }
    }
    for s in &symbols[..n] {
        emit(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &[u8], v: &ScoreVocab) -> Vec<Symbol> {
        (0..text.len() as u32)
            .map(|i| Symbol { start: i, end: i + 1, id: v.lookup(&text[i as usize..i as usize + 1]).unwrap_or(NONE), frozen: false })
            .collect()
    }

    fn run(v: &ScoreVocab, text: &[u8]) -> Vec<u32> {
        let mut syms = chars(text, v);
        let mut out = vec![];
        merge(v, text, &mut syms, &mut Scratch::default(), |s| out.push(s.id));
        out
    }

    #[test]
    fn highest_score_then_leftmost() {
        // ids: a b c ab bc abc
        let pieces: Vec<(&[u8], f32, bool)> = vec![
            (b"a", 0.0, true), (b"b", 0.0, true), (b"c", 0.0, true),
            (b"ab", -2.0, true), (b"bc", -1.0, true), (b"abc", -3.0, true),
        ];
        let v = ScoreVocab::new(&pieces, false, PairTable::Now).unwrap();
        // bc scores higher than ab; then a+bc = abc.
        assert_eq!(run(&v, b"abc"), vec![5]);
        assert_eq!(run(&v, b"ab"), vec![3]);
        // Tie: "aa" pieces equal score, leftmost first.
        let pieces: Vec<(&[u8], f32, bool)> = vec![(b"a", 0.0, true), (b"aa", -1.0, true)];
        let v = ScoreVocab::new(&pieces, false, PairTable::Now).unwrap();
        assert_eq!(run(&v, b"aaa"), vec![1, 0]);
        assert_eq!(run(&v, b"aaaa"), vec![1, 1]);
    }

    /// Both merge paths against the definition run naively (rescan every pair's bytes each
    /// step), on every string over a small alphabet with overlapping pieces and tied scores.
    #[test]
    fn small_and_heap_paths_follow_the_definition() {
        let pieces: Vec<(&[u8], f32, bool)> = vec![
            (b"a", 0.0, true), (b"b", 0.0, true), (b"c", 0.0, true),
            (b"ab", -1.0, true), (b"bc", -1.0, true), (b"ca", -2.0, true), (b"aa", -2.0, true),
            (b"abc", -1.5, true), (b"aab", -3.0, true), (b"bca", -0.5, true), (b"cab", -1.0, false),
        ];
        let with = ScoreVocab::new(&pieces, false, PairTable::Now).unwrap();
        let without = ScoreVocab::new(&pieces, false, PairTable::Never).unwrap();
        assert!(with.has_pair_table() && !without.has_pair_table());
        let v = &with;
        let naive = |text: &[u8]| -> Vec<u32> {
            let mut spans: Vec<(usize, usize)> = (0..text.len()).map(|i| (i, i + 1)).collect();
            loop {
                let mut top: Option<(f32, usize, u32)> = None;
                for i in 0..spans.len().saturating_sub(1) {
                    if let Some(id) = v.lookup(&text[spans[i].0..spans[i + 1].1]) {
                        if top.is_none_or(|t| v.score(id) > t.0) {
                            top = Some((v.score(id), i, id));
                        }
                    }
                }
                let Some((_, i, _)) = top else { break };
                spans[i].1 = spans[i + 1].1;
                spans.remove(i + 1);
            }
            spans.iter().map(|&(s, e)| v.lookup(&text[s..e]).unwrap()).collect()
        };
        let mut scratch = Scratch::default();
        for len in 1..=40usize {
            for seed in 0..60u64 {
                let text: Vec<u8> = (0..len as u64)
                    .map(|i| b"abc"[((seed.wrapping_mul(2654435761) ^ (i * 40503)) >> 3) as usize % 3])
                    .collect();
                let want = naive(&text);
                for (heap, v) in [(false, &with), (true, &with), (false, &without), (true, &without)] {
                    let mut syms = chars(&text, v);
                    let mut got = vec![];
                    if heap && syms.len() > 1 {
                        merge_heap(v, &text, &mut syms, &mut scratch, |s| got.push(s.id));
                    } else if syms.len() > 1 {
                        merge_small(v, &text, &mut syms, &mut scratch.best, |s| got.push(s.id));
                    } else {
                        merge(v, &text, &mut syms, &mut scratch, |s| got.push(s.id));
                    }
                    assert_eq!(got, want, "{} heap={heap}", String::from_utf8_lossy(&text));
                }
            }
        }
    }

    #[test]
    fn pieces_longer_than_the_pair_table_still_merge() {
        // Runs of 1, 2, 4, ... 2 * PAIR_MAX bytes, shorter ones scoring higher: BPE builds the
        // longest, whose last merge (two halves of PAIR_MAX) is past the pair table.
        let runs: Vec<Vec<u8>> = (0..).map(|k| vec![b'a'; 1 << k]).take_while(|r| r.len() <= 2 * PAIR_MAX).collect();
        let pieces: Vec<(&[u8], f32, bool)> = runs.iter().enumerate().map(|(k, r)| (&r[..], -(k as f32), true)).collect();
        let v = ScoreVocab::new(&pieces, false, PairTable::Now).unwrap();
        let text = vec![b'a'; 2 * PAIR_MAX];
        let mut syms = chars(&text, &v);
        let mut got = vec![];
        merge(&v, &text, &mut syms, &mut Scratch::default(), |s| got.push(s.id));
        assert_eq!(got, vec![runs.len() as u32 - 1]);
    }

    /// A vocabulary large enough to build its pair table in the background encodes the same
    /// before and after the table arrives, and the same as one with no table; with character
    /// cuts the table holds no pair that ends inside a character.
    #[test]
    fn background_pair_table_changes_nothing() {
        // Every 1-, 2- and 3-letter string over a 17-letter alphabet (5219 pieces), and "é"
        // and "éa", shorter pieces scoring higher.
        let letters = b"abcdefghijklmnopq";
        let mut owned: Vec<Vec<u8>> = vec!["\u{e9}".into(), "\u{e9}a".into()];
        for n in 1..=3u32 {
            for k in 0..letters.len().pow(n) {
                owned.push((0..n).map(|i| letters[k / letters.len().pow(i) % letters.len()]).collect());
            }
        }
        let pieces: Vec<(&[u8], f32, bool)> = owned.iter().enumerate().map(|(i, p)| (&p[..], -(i as f32), true)).collect();
        assert!(pieces.len() >= BACKGROUND_MIN);
        let reference = ScoreVocab::new(&pieces, true, PairTable::Never).unwrap();
        let v = ScoreVocab::new(&pieces, true, PairTable::Background).unwrap();
        let texts: Vec<Vec<u8>> = (0..200u64)
            .map(|seed| (0..(seed % 37) as usize).map(|i| letters[((seed * 2654435761) >> (i % 13)) as usize % 17]).collect())
            .collect();
        let run_all = |v: &ScoreVocab| texts.iter().map(|t| run(v, t)).collect::<Vec<_>>();
        let want = run_all(&reference);
        assert_eq!(run_all(&v), want); // whether or not the table is there yet
        let t0 = std::time::Instant::now();
        while !v.has_pair_table() {
            assert!(t0.elapsed().as_secs() < 60, "the pair table never arrived");
            std::thread::yield_now();
        }
        assert_eq!(run_all(&v), want);
        let pairs = v.pairs().unwrap();
        assert!(!pairs.is_empty());
        // "é" + "a" would cut inside no character, but a cut inside "é" must be absent.
        let (e, ea) = (v.lookup("\u{e9}".as_bytes()).unwrap(), v.lookup("\u{e9}a".as_bytes()).unwrap());
        assert_eq!(pairs.get(&pair_key(e, v.lookup(b"a").unwrap())), Some(&ea));
        assert_eq!(pairs.len(), 17 * 17 + 2 * 17 * 17 * 17 + 1);
    }

    #[test]
    fn refuses_nan_and_duplicates() {
        let p: Vec<(&[u8], f32, bool)> = vec![(b"a", f32::NAN, true)];
        assert!(ScoreVocab::new(&p, false, PairTable::Now).is_err());
        let p: Vec<(&[u8], f32, bool)> = vec![(b"a", 0.0, true), (b"a", 0.0, true)];
        assert!(ScoreVocab::new(&p, false, PairTable::Now).unwrap_err().to_string().contains("twice"));
    }
}
