//! A memo of pieces: real text repeats its words, and a piece that is not one token costs a
//! few hundred nanoseconds to merge (a CJK piece of 100 characters, tens of microseconds) but a
//! few tens to look up.
//!
//! The cache is created on the first piece of a call that needs merging, and from then on it
//! is the first lookup of every piece ([`PieceCache::encode`]). Two tables:
//!
//! - **Inline** (nearly every entry): a piece of at most [`INLINE_PIECE`] bytes, a token or a
//!   piece that merges into at most [`INLINE_IDS`] tokens, is stored whole in one 32-byte slot
//!   of an open-addressed table: its bytes packed into two words (bytes 0-7, then bytes 8-14
//!   and the length), and its ids (a token's one id, or the merge's). A lookup is two loads
//!   and masks, two multiplies, one probe (usually one cache line) and two compares; no
//!   pointer into the text, no `memcmp`, no second array. A repeated short piece is one
//!   probe here whether it is a token or not, and its ids are written with no branch on how
//!   many (issue 14, fourteenth pass: before, tokens were looked up in the vocabulary's
//!   indexes first and only the pieces that missed there came to this table; docs/engine.md
//!   2a). A piece found past its home slot is swapped into it ([`Inline::promote`]), so the
//!   pieces asked for most sit at home, where the probe is one compare.
//! - **Mid** ([`Mid`]): a piece of 16-[`MID_PIECE`] bytes (a Cyrillic or Greek word, a short
//!   run of Chinese), a token or not, stored as its key packed from the text (four words) and
//!   its ids, side by side in one dense buffer: a lookup packs and hashes the key, probes an
//!   index, and compares and copies one stretch of memory, with no `memcmp` and no lookup in
//!   the vocabulary first (issue 14, nineteenth pass).
//! - **Long** ([`Long`]): longer pieces (up to [`MAX_PIECE`] bytes), pieces of more than four
//!   tokens the inline table met, and pieces the other two could not take (the last 31 bytes
//!   of a text, a call still without a cache), in a hash table over two buffers that hold a
//!   copy of each key and its ids. The copy (not a borrow of the caller's text) is what lets
//!   it outlive the call.
//!
//! The cache watches its own hit rate: a window of [`WINDOW`] lookups with fewer than one hit in
//! [`MIN_HIT_DIV`] turns it off for the next [`BYPASS`] pieces, which are looked up in the
//! vocabulary and merged directly (pieces longer than [`MID_PIECE`] bytes are still stored in
//! the long table: their merge costs far more than the store, see [`PieceCache::merge`]). Text
//! whose pieces never repeat (random letters, base64) otherwise pays for a lookup that misses
//! and an insert that grows the tables on every piece (perf, o200k random letters: a fifth of
//! the time, 1% after). While it is off, every piece is
//! looked up in the vocabulary first. The window counts only pieces that are no token (a hit on
//! a token's slot is not counted, nor a token's first sight), as before tokens were stored:
//! counted with them, random letters (whose short tokens repeat) stayed above the rate, kept
//! every new piece, and probed a table of several megabytes for each, a third of their speed at
//! 10^6 bytes (issue 14's linearity figure 14 instead of 11).
//!
//! The tables outlive the call: each thread keeps its last ones, with the [`Vocab::serial`]
//! they were filled from, and the next call on the same table starts from them. A batch of
//! short documents then pays for each missed word once per thread rather than once per
//! document, and a loop of `encode` calls over text it has seen merges nothing again (Chinese
//! text is mostly long pieces: without the long table kept, every warm call merged them all).
//! Threads share nothing, so more threads add no contention. A call that cannot use the kept
//! tables (another table's, or after `clear_cache`) empties them and fills them again, and
//! a new inline table starts sized for the text ([`PieceCache::new`]). The inline table holds at
//! most [`INLINE_ENTRIES`] pieces, so it never grows past [`KEPT_SLOTS`] slots (2 MB) and is
//! always kept; the mid table is bounded by [`MID_ENTRIES`] pieces and [`MID_CHUNKS`] chunks,
//! the long table by [`MAX_ENTRIES`] entries and [`LONG_BYTES`] bytes of keys and ids, and when
//! an insert would pass a bound the table is emptied and fills again (see [`Long::insert`]).
//!
//! An inline table that holds [`INLINE_ENTRIES`] pieces is emptied before it stores another
//! (and fills again with the text that follows), and pieces of more than [`MAX_PIECE`] bytes
//! are merged directly. Output is identical with or without the cache: it stores exactly what the
//! vocabulary or the merge gave.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::merge::{merge_miss, merge_miss_unpredictable, WIDE_CHARS_LONG};
use crate::models::Sink;
use crate::vocab::{pack16, pack16_words, Vocab};

pub const MAX_ENTRIES: usize = 1 << 16;
/// Longest piece cached: the longest the wide scans merge. Chinese text has pieces of 129-1023
/// bytes, and they repeat (zh-fortunes: 1,810 of them, 187 distinct, each a merge of
/// tens of microseconds). Longer pieces go to the walk, which is linear, and are merged
/// directly (hashing and copying a piece of a megabyte to look it up would buy nothing).
pub const MAX_PIECE: usize = WIDE_CHARS_LONG;
/// Longest piece the inline table holds.
pub const INLINE_PIECE: usize = 15;
/// Most ids an inline slot holds.
pub const INLINE_IDS: usize = 4;
/// Most bytes of keys and ids (4 bytes each) the long table holds. Every corpus we have fits
/// (zh-fortunes, the largest, needs about 2 MB, most of it pieces of 32 bytes or more), so
/// that a warm call finds every piece; with the table's own slots (at most [`MAX_ENTRIES`]
/// entries: 3 MB), the inline table (2 MB) and the mid table (2 MB of chunks and its index of
/// about 0.3 MB) it keeps a thread's cache under 12 MB, within issue 14's bound of 25 MB more
/// per encoding on two threads. (It was 7 MB before the mid table took the pieces of 16-31
/// bytes.)
pub const LONG_BYTES: usize = 4 << 20;

/// No id is this (ids are at most 2^31 - 1): marks the unused ids of a slot.
const NO_ID: u32 = u32::MAX;

/// How many of a slot's ids are real (1..=4): the first always is (a token's one id, or the
/// first of a merge's two to four), and the unused ones, [`NO_ID`], come last. Counted with no
/// branch: on x86-64 one compare of the four, a mask of the unused ones, and the position of
/// its lowest bit.
#[inline(always)]
fn held(ids: &[u32; INLINE_IDS]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cmpeq_epi32, _mm_castsi128_ps, _mm_loadu_si128, _mm_movemask_ps, _mm_set1_epi32};
        // Safety: SSE2 is part of every x86-64 target; the load reads the 16 bytes of `ids`.
        let unused = unsafe {
            let v = _mm_loadu_si128(ids.as_ptr().cast());
            _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, _mm_set1_epi32(NO_ID as i32)))) as u32
        };
        // The unused ids are a suffix: the lowest set bit is the count (none set: all four).
        (unused | 1 << INLINE_IDS).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1 + ids[1..].iter().filter(|&&id| id != NO_ID).count()
    }
}

/// `key[1] == 0` marks an empty slot (a stored key has its length, at least 1, in the top byte).
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

    /// An empty table of 2^`bits` slots in `slots`' memory (grown if it is too small).
    fn recycled(mut slots: Vec<Slot>, bits: u32) -> Self {
        slots.clear();
        slots.resize(1 << bits, EMPTY);
        Inline { slots, len: 0, shift: 64 - bits }
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
            debug_assert!(i < self.slots.len());
            // Safety: a home slot is the hash's top `64 - shift` bits, below 2^(64 - shift), the
            // table's length (`new`, `recycled`), and the walk stays below it by the mask.
            let s = unsafe { self.slots.get_unchecked(i) };
            if s.key == key || s.key[1] == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The rest of a probe whose home slot holds another key: the slot now holding `key`,
    /// moved to its home slot (the home slot's piece takes its place, still on its own probe
    /// path, since every slot from its home to there is full), or the empty slot the probe
    /// ended at. Moving a piece home when it is found away from it leaves the pieces asked for
    /// most at their home slot, where the probe is one compare. The walk is written out
    /// rather than shared with [`Self::find`] through a helper taking the start slot: that
    /// form measured 0.72-0.77 on warm o200k English and code (`stage`, 3 rounds), whatever
    /// it changed in the encoder's loop around the inlined probe.
    #[inline(never)]
    fn promote(&mut self, home: usize, key: [u64; 2]) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = (home + 1) & mask;
        loop {
            let s = self.slots[i];
            if s.key == key {
                self.slots.swap(home, i);
                return Ok(home);
            }
            if s.key[1] == 0 {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores a key known to be absent (`empty`: the empty slot its probe ended at, if known).
    /// A table that holds [`INLINE_ENTRIES`] pieces is emptied first, keeping its memory, as the
    /// long table is ([`Long::insert`]): a thread's table is kept for as long as it encodes with
    /// this vocabulary, and a full table that refused new pieces would serve only the text it
    /// filled up on (a warm stream of English, code, German and Chinese, then Turkish: o200k
    /// Turkish warm at 31 MB/s against 280 with the table following the text).
    #[inline(always)]
    fn store(&mut self, empty: Option<usize>, key: [u64; 2], ids: [u32; INLINE_IDS]) {
        if self.len >= INLINE_ENTRIES {
            self.slots.fill(EMPTY);
            self.len = 0;
            // The probe's slot means nothing in the emptied table.
            return self.insert(key, ids);
        }
        match empty {
            Some(i) => self.insert_at(i, key, ids),
            None => self.insert(key, ids),
        }
    }

    /// Stores a key known to be absent whose probe ended at the empty slot `i`: there, unless
    /// the table must grow first (then as [`Self::insert`]).
    #[inline(always)]
    fn insert_at(&mut self, i: usize, key: [u64; 2], ids: [u32; INLINE_IDS]) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            return self.insert(key, ids);
        }
        debug_assert!(self.slots[i].key[1] == 0 && self.find(key) == i);
        self.slots[i] = Slot { key, ids };
        self.len += 1;
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

/// Pieces the inline table cannot hold: longer than [`INLINE_PIECE`] bytes (up to
/// [`MAX_PIECE`]) or merging into more than [`INLINE_IDS`] ids. Each entry points into `keys`
/// (a copy of the piece) and `ids`; the hash is stored so that growing the table never reads
/// the keys again.
struct Long {
    table: HashTable<Entry>,
    keys: Vec<u8>,
    ids: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Entry {
    hash: u64,
    key: u32,
    ids: u32,
    /// At most [`MAX_PIECE`] bytes, and so at most as many ids.
    key_len: u16,
    ids_len: u16,
}

const _: () = assert!(MAX_PIECE <= u16::MAX as usize && LONG_BYTES + 4 * MAX_PIECE <= u32::MAX as usize);

impl Long {
    fn new() -> Self {
        Long { table: HashTable::new(), keys: Vec::new(), ids: Vec::new() }
    }

    #[inline]
    fn hash(piece: &[u8]) -> u64 {
        foldhash::fast::FixedState::default().hash_one(piece)
    }

    #[inline]
    fn get(&self, hash: u64, piece: &[u8]) -> Option<&[u32]> {
        let e = self.table.find(hash, |e| {
            e.hash == hash && usize::from(e.key_len) == piece.len() && &self.keys[e.key as usize..][..piece.len()] == piece
        })?;
        Some(&self.ids[e.ids as usize..][..usize::from(e.ids_len)])
    }

    fn clear(&mut self) {
        self.table.clear();
        self.keys.clear();
        self.ids.clear();
    }

    /// Bytes of keys and ids held (what [`LONG_BYTES`] bounds).
    fn bytes(&self) -> usize {
        self.keys.len() + 4 * self.ids.len()
    }

    /// Stores `piece` (absent, at most [`MAX_PIECE`] bytes), whose ids the merge has just
    /// appended to `self.ids` from `off` on. When the table already holds [`MAX_ENTRIES`]
    /// entries or this would take it past [`LONG_BYTES`], it is emptied instead (this piece
    /// included; it is stored when it next comes), keeping its allocations. Emptying rather
    /// than refusing new pieces keeps the table following the text: a thread that encodes one
    /// kind of text for hours and then another would otherwise hold the first kind's pieces
    /// forever. (Text with more distinct long pieces than the bound, encoded again, then finds
    /// few of them: what every call found before this table was kept.)
    fn insert(&mut self, hash: u64, piece: &[u8], off: usize) {
        if self.table.len() >= MAX_ENTRIES || self.bytes() + piece.len() > LONG_BYTES {
            self.table.clear();
            self.keys.clear();
            self.ids.clear();
            return;
        }
        let e = Entry {
            hash,
            key: self.keys.len() as u32,
            ids: off as u32,
            key_len: piece.len() as u16,
            ids_len: (self.ids.len() - off) as u16,
        };
        self.keys.extend_from_slice(piece);
        self.table.insert_unique(hash, e, |e| e.hash);
    }
}

/// Longest piece the mid table holds (shorter ones, up to [`INLINE_PIECE`], are inline).
pub const MID_PIECE: usize = 31;
/// Most pieces the mid table holds. The first 1.5 MB of our corpora have at most about 21,500
/// distinct pieces of 16-31 bytes (zh-fortunes; uk 8,300-8,500), so a warm call finds them
/// all.
pub const MID_ENTRIES: usize = 1 << 15;
/// Most 16-byte chunks of keys and ids the mid table holds (2 MB: 32,768 entries of 4 ids).
pub const MID_CHUNKS: usize = 1 << 17;

/// Sixteen bytes of the mid table: half a key, or four ids.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u32; 4]);

/// Pieces of 16-31 bytes: the words of Cyrillic, Greek and the other two-byte scripts (o200k,
/// the first 1.5 MB of uk.txt: about 50,000 such pieces, 8,300 distinct), and of Chinese up to
/// ten characters. Each entry is its key (two chunks: the piece's bytes, zero past its end,
/// its length in the top byte: [`pack32_words`]) followed by its ids, four to a chunk, in one
/// dense buffer; the hash table holds each entry's first chunk and its count of ids. A lookup
/// hashes the key packed from the text, probes `hashbrown`'s control bytes and the index, and
/// compares and copies one stretch of adjacent bytes (48 of them for a piece of up to four
/// ids). The long table, where these pieces were before (issue 14, nineteenth pass), reads a
/// control byte, a 24-byte entry, the key's copy (a `memcmp` call) and the ids, four places;
/// and every such piece was looked up in the vocabulary first, since the long table held no
/// tokens (this one does, with their one id).
///
/// Why dense: a call after a pause (every call of a library among others) pays for every line
/// it touches once. Open addressing over 64-byte entries (a line per slot, half of them
/// empty) measured 1.02 on warm o200k uk after a 50 ms pause (`stage`), entries of one line
/// each in a dense array 1.09.
struct Mid {
    /// `first chunk << 5 | count of ids` of each entry.
    table: HashTable<u32>,
    chunks: Vec<Chunk>,
}

impl Mid {
    fn new() -> Self {
        Mid { table: HashTable::new(), chunks: Vec::new() }
    }

    /// A hash of the four words of a key (every byte of it reaches both the low bits, which
    /// place the probe, and the top seven, `hashbrown`'s tag): two folded multiplies of
    /// word pairs, folded together.
    #[inline(always)]
    fn hash(key: &[u64; 4]) -> u64 {
        #[inline(always)]
        fn fold(a: u64, b: u64) -> u64 {
            let m = a as u128 * b as u128;
            (m as u64) ^ (m >> 64) as u64
        }
        let a = fold(key[0] ^ 0x243f_6a88_85a3_08d3, key[1] ^ 0x1319_8a2e_0370_7344);
        let b = fold(key[2] ^ 0xa409_3822_299f_31d0, key[3] ^ 0x082e_fa98_ec4e_6c89);
        fold(a ^ 0x4528_21e6_38d0_1377, b ^ 0xbe54_66cf_34e9_0c6c)
    }

    /// The key stored from chunk `at` of `chunks`.
    #[inline(always)]
    fn key_at(chunks: &[Chunk], at: usize) -> [u64; 4] {
        let w = |c: &Chunk| [c.0[0] as u64 | (c.0[1] as u64) << 32, c.0[2] as u64 | (c.0[3] as u64) << 32];
        let ([a, b], [c, d]) = (w(&chunks[at]), w(&chunks[at + 1]));
        [a, b, c, d]
    }

    /// The entry of `key`: its ids' first chunk and their count.
    #[inline(always)]
    fn get(&self, hash: u64, key: &[u64; 4]) -> Option<(usize, usize)> {
        let v = *self.table.find(hash, |&v| Mid::key_at(&self.chunks, (v >> 5) as usize) == *key)?;
        Some(((v >> 5) as usize + 2, (v & 31) as usize))
    }

    fn clear(&mut self) {
        self.table.clear();
        self.chunks.clear();
    }

    /// Stores `key` (absent) with `ids` (1..=31 of them). When the table holds
    /// [`MID_ENTRIES`] pieces, or the entry would take it past [`MID_CHUNKS`], it is emptied
    /// first, keeping its memory, as the other two tables are, so that it follows the text.
    fn insert(&mut self, hash: u64, key: [u64; 4], ids: &[u32]) {
        debug_assert!((1..=MID_PIECE).contains(&ids.len()));
        let size = 2 + ids.len().div_ceil(4);
        if self.table.len() >= MID_ENTRIES || self.chunks.len() + size > MID_CHUNKS {
            self.clear();
        }
        let at = self.chunks.len();
        let half = |a: u64, b: u64| Chunk([a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]);
        self.chunks.push(half(key[0], key[1]));
        self.chunks.push(half(key[2], key[3]));
        for four in ids.chunks(4) {
            let mut c = [NO_ID; 4];
            c[..four.len()].copy_from_slice(four);
            self.chunks.push(Chunk(c));
        }
        let v = (at as u32) << 5 | ids.len() as u32;
        let chunks = &self.chunks;
        self.table.insert_unique(hash, v, |&v| Mid::hash(&Mid::key_at(chunks, (v >> 5) as usize)));
    }
}

/// The mid table's key for the first `n` (16..=31) of 32 readable bytes: four loads, two
/// masks from a table, the length in the top byte (bytes 24-30 leave it free). Injective on
/// such byte strings, as [`pack16_words`] is on shorter ones.
#[inline(always)]
fn pack32_words(w: &[u8; 32], n: usize) -> [u64; 4] {
    debug_assert!((INLINE_PIECE + 1..=MID_PIECE).contains(&n));
    let word = |k: usize| u64::from_le_bytes(w[8 * k..8 * k + 8].try_into().unwrap());
    // Bytes 16..n of the last two words: the masks of a 16-byte key of n - 16 bytes.
    let [m2, m3] = crate::vocab::KEEP[n & 15];
    [word(0), word(1), word(2) & m2, word(3) & m3 | (n as u64) << 56]
}

/// Asks for every line of a kept table `v` ahead of a call with `text_len` bytes of text
/// left, when the table is no larger than the text. A call that follows other work (a pause,
/// other libraries) finds its tables' lines gone from the caches, and its lookups then wait
/// on them one random line at a time; asked for in order, they stream in while the encoding
/// starts. The bound keeps a short call (a document of a batch) from streaming a large table
/// it will barely use. (Issue 14, nineteenth pass: warm o200k calls to a list from Python
/// after a 50 ms pause, medians of 9, two alternated runs: de.txt 243 / 248 -> 265 / 268
/// MB/s, uk.txt 270 / 265 -> 296 / 294; back to back and cold unchanged.)
#[inline]
fn warm_up<T>(v: &[T], text_len: usize) {
    let bytes = std::mem::size_of_val(v);
    if bytes > text_len {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        let p = v.as_ptr().cast::<i8>();
        for off in (0..bytes).step_by(64) {
            // Safety: `off < bytes`: inside the slice (a prefetch never faults anyway).
            unsafe { _mm_prefetch::<_MM_HINT_T1>(p.add(off)) };
        }
    }
}

/// Shortest piece that [`PieceCache::first_sight`] asks of the long table before the
/// vocabulary. A piece of at most [`INLINE_PIECE`] bytes is in the long table when it merges
/// into more than [`INLINE_IDS`] ids (CJK runs, and on cl100k Turkish and German words:
/// docs/engine.md section 3 has the counts), and a warm call misses the inline table
/// on every occurrence of such a piece: asked first, the long table answers it without the
/// lookup in the vocabulary's index of 8-15-byte tokens (3 MB for o200k, more than the L2). A
/// token is never in the long table, so the order changes no answer. Pieces of 7 bytes or
/// fewer rarely merge into more than four ids, and their vocabulary lookup (one word, one
/// probe of the short index) costs less than the long table's hash and probe.
const LONG_FIRST: usize = 8;

/// Bits of a new inline table for a call with `text_len` bytes of text left: a slot per 64
/// bytes, from 256 slots up to [`KEPT_SLOTS`]. Real text stores far fewer pieces than that: at
/// most its distinct pieces of up to 15 bytes (the first 1.5 MB of each corpus, o200k's
/// pattern: English 7,237, code 15,033, German 18,834, Turkish 19,052, zh-fortunes 19,856), so
/// a table of 32 k slots (a 1.5 MB text's) is at most about 61% full. A text of more than 2 MB
/// (the whole of de.txt: 4.1 MB, 33,792 distinct short pieces) starts at [`KEPT_SLOTS`], the
/// most a table has; a shorter one with more than about 24 k distinct short pieces grows its
/// table once, to that.
fn start_bits(text_len: usize) -> u32 {
    ((text_len / 64).next_power_of_two().trailing_zeros()).clamp(8, KEPT_SLOTS.trailing_zeros())
}

/// Most slots of an inline table (32 bytes each: 2 MB), all kept by the thread after a call.
/// Why 2 MB (it was 1 MB until tokens were stored too): the whole of de.txt (4.1 MB) has 33,792
/// distinct pieces of up to 15 bytes, and a table that grew past what a thread keeps was
/// dropped after each call, so a warm call of that text started empty (o200k: 130 MB/s
/// against 190 with the table kept).
pub const KEPT_SLOTS: usize = 1 << 16;
/// Most pieces an inline table holds: a table of [`KEPT_SLOTS`] slots at its load bound of 3/4,
/// so that it never grows past what its thread keeps ([`Inline::store`] empties it when full).
pub const INLINE_ENTRIES: usize = KEPT_SLOTS / 4 * 3;

/// What a thread keeps between calls: the [`Vocab::serial`] of the table it caches, and its
/// tables.
struct Kept {
    serial: u64,
    inline: Inline,
    long: Long,
    mid: Mid,
}

thread_local! {
    /// This thread's tables from its last call.
    static KEPT: std::cell::Cell<Option<Kept>> = const { std::cell::Cell::new(None) };
}

pub struct PieceCache {
    /// The [`Vocab::serial`] of the table whose merges this cache holds.
    serial: u64,
    inline: Inline,
    long: Long,
    mid: Mid,
    /// Misses and hits in the current window of [`WINDOW`] lookups (hits are counted where
    /// they happen, the window is closed at a miss: see [`Self::count_miss`]).
    misses: u64,
    hits: u64,
    /// Pieces still to merge directly, without the cache (see [`BYPASS`]); meanwhile every
    /// piece is looked up in the vocabulary first.
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

impl Drop for PieceCache {
    /// Hands the tables back to the thread for its next call.
    fn drop(&mut self) {
        let inline = std::mem::replace(&mut self.inline, Inline { slots: Vec::new(), len: 0, shift: 64 });
        let kept = Kept {
            serial: self.serial,
            inline,
            long: std::mem::replace(&mut self.long, Long::new()),
            mid: std::mem::replace(&mut self.mid, Mid::new()),
        };
        // `try_with`: during thread teardown the slot may already be gone; then the tables
        // are simply freed.
        let _ = KEPT.try_with(|k| k.set(Some(kept)));
    }
}

impl PieceCache {
    /// A cache for `vocab`, for a call with `text_len` bytes of text left: this thread's kept
    /// tables if they were filled from `vocab`, else empty ones, in the kept tables' memory
    /// when the thread has some (another table's, or this one's before `clear_cache`).
    ///
    /// A new inline table starts with [`start_bits`] slots, not 256. Why (issue 14, cold
    /// calls): a cold call on 1.5 MB of German stores about 12 k pieces inline, and from 256
    /// slots the table doubled seven times, rehashing every entry at each step and faulting in
    /// fresh pages for each new array (perf: `Inline::insert` 2.6-3.6% of the samples, page
    /// faults 1-2.5%, tr and de); recycling the kept memory also saves the final table's page
    /// faults. The answers cannot change: an emptied table holds nothing.
    fn new(vocab: &Vocab, text_len: usize) -> Self {
        let serial = vocab.serial();
        let bits = start_bits(text_len);
        let kept = KEPT.try_with(|k| k.take()).ok().flatten();
        let (inline, long, mid) = match kept {
            Some(k) if k.serial == serial => {
                warm_up(&k.inline.slots, text_len);
                warm_up(&k.mid.chunks, text_len);
                (k.inline, k.long, k.mid)
            }
            Some(mut k) => {
                k.long.clear();
                k.mid.clear();
                (Inline::recycled(k.inline.slots, bits), k.long, k.mid)
            }
            None => (Inline::new(bits), Long::new(), Mid::new()),
        };
        PieceCache {
            serial,
            inline,
            long,
            mid,
            misses: 0,
            hits: 0,
            bypass: 0,
        }
    }

    /// Encodes the piece `text[start..end]` (at least one byte) into `out`: the encoder's
    /// whole path for a piece, inlined into its loop.
    ///
    /// Once the call has a cache (from its first piece that is no token), a piece of at most
    /// [`INLINE_PIECE`] bytes with 16 bytes of text readable from its start is one probe of
    /// the inline table, which holds tokens (with their one id) and merged pieces alike; on a
    /// miss it is looked up in the vocabulary or merged, and stored ([`Self::first_sight`]).
    /// A piece of 16-31 bytes with 32 bytes of text readable from its start is one lookup of
    /// the mid table ([`Self::mid_piece`]). Any other piece (no cache yet, the cache bypassed:
    /// module docs; a longer piece, the last bytes of the text) is looked up whole in the
    /// vocabulary and, if it is no token, merged through [`Self::merge`].
    ///
    /// Why one table for both: real text is a few thousand distinct short pieces, repeated
    /// (o200k, 1.5 MB: English 7,237 distinct pieces of at most 15 bytes among 355,829, German
    /// 18,834 among 353,290). Before, a piece went to one of the vocabulary's two indexes by
    /// its length and, when it was no token, to this table after missing there: two probes
    /// for a German piece in four, and two branches (which index, token or not) the predictor
    /// could not know. Now one probe answers every repeated piece, and a slot's ids are
    /// written with no branch on how many (docs/engine.md, section 2a).
    #[inline(always)]
    pub fn encode<S: Sink>(slot: &mut Option<Self>, vocab: &Vocab, text: &[u8], start: usize, end: usize, out: &mut S) {
        if let Some(cache) = slot {
            let n = end - start;
            // `start < len - 15` is `start + 16 <= len` (see `Vocab::rank_in`).
            if n <= INLINE_PIECE && cache.bypass == 0 && start < text.len().saturating_sub(15) {
                // Safety: `start + 16 <= text.len()` (above).
                let words = unsafe { &*text.as_ptr().add(start).cast::<[u8; 16]>() };
                let key = pack16_words(words, n);
                if let Err(empty) = cache.inline_hit(key, out) {
                    cache.first_sight(vocab, text, start, end, key, empty, out);
                }
                return;
            }
            if n <= MID_PIECE && cache.bypass == 0 && start + 32 <= text.len() {
                return cache.mid_piece(vocab, text, start, end, out);
            }
        }
        // Single bytes go through the short index like any piece of up to 7 bytes (it holds
        // all 256): a separate branch for them was mispredicted about 30,000 times per MB of
        // English, more than the probe costs. `rank_in` answers None for a piece longer than
        // any token without hashing it.
        if let Some(rank) = vocab.rank_in(text, start, end) {
            out.push(rank);
        } else {
            Self::merge(slot, vocab, text, start, end, out);
        }
    }

    /// Merges `text[start..end]` (at least two bytes, known not to be a single token) into
    /// `out`, through the cache, which it makes if the call has none yet: the pieces
    /// [`Self::encode`] does not answer from the inline table.
    #[inline(never)]
    pub fn merge<S: Sink>(slot: &mut Option<Self>, vocab: &Vocab, text: &[u8], start: usize, end: usize, out: &mut S) {
        let piece = &text[start..end];
        if piece.len() > MAX_PIECE {
            return merge_miss(vocab, piece, out);
        }
        let cache = slot.get_or_insert_with(|| Self::new(vocab, text.len() - start));
        if cache.bypass > 0 {
            cache.bypass -= 1;
            // Pieces that do not repeat: which of their pairs are tokens does not either. But
            // a piece too long for the mid table is stored all the same: its merge (a Thai
            // phrase of 100-600 bytes for o200k, which joins Thai letters into one piece, takes
            // microseconds) costs far more than the store, and a text none of whose pieces
            // repeat may well be encoded again. Bypassed, o200k's warm calls on 1.5 MB of
            // Thai each stored one window's pieces more than the last: 27, 47, 57, 70, 86, 129
            // MB/s over six calls from Python, where fastokens' warm cell reads 279.
            if piece.len() <= MID_PIECE {
                return merge_miss_unpredictable(vocab, piece, out);
            }
            return cache.miss(vocab, piece, None, out);
        }
        let key = if piece.len() <= INLINE_PIECE {
            let key = match text.get(start..start + 16) {
                Some(words) => pack16_words(words, piece.len()),
                None => pack16(piece),
            };
            if cache.inline_hit(key, out).is_ok() {
                return;
            }
            Some(key)
        } else {
            None
        };
        cache.miss(vocab, piece, key, out)
    }

    /// Counts a miss, and closes the hit-rate window when it holds [`WINDOW`] lookups, turning
    /// the cache off for [`BYPASS`] pieces if it hit too rarely. Hits are counted where they
    /// happen and the window is closed only here, at a miss, so that a hit (nearly every
    /// piece of a warm call) costs one increment and no test; a window of hits alone needs no
    /// decision.
    #[inline(always)]
    fn count_miss(&mut self) {
        self.misses += 1;
        if self.misses + self.hits >= u64::from(WINDOW) {
            if self.hits < u64::from(WINDOW / MIN_HIT_DIV) {
                self.bypass = BYPASS;
            }
            self.misses = 0;
            self.hits = 0;
        }
    }

    /// Writes the ids of the piece whose inline key is `key` to `out` if the inline table
    /// holds it (a piece that is no token counted as a hit); else the empty slot the probe
    /// ended at.
    #[inline(always)]
    fn inline_hit<S: Sink>(&mut self, key: [u64; 2], out: &mut S) -> Result<(), usize> {
        let home = self.inline.home(key);
        // Safety: a home slot is inside the table (see `Inline::find`).
        let mut s = unsafe { self.inline.slots.get_unchecked(home) };
        if s.key != key {
            if s.key[1] == 0 {
                return Err(home);
            }
            let i = self.inline.promote(home, key)?;
            // Safety: as above.
            s = unsafe { self.inline.slots.get_unchecked(i) };
        }
        let k = held(&s.ids);
        // Only pieces that are no token count toward the hit rate (module docs).
        self.hits += u64::from(k > 1);
        out.push_first(s.ids, k);
        Ok(())
    }

    /// A piece of 16-31 bytes with 32 bytes of text readable from its start, once the call
    /// has a cache and it is on: from the mid table, else looked up in the vocabulary or
    /// merged, and stored there.
    #[inline(never)]
    fn mid_piece<S: Sink>(&mut self, vocab: &Vocab, text: &[u8], start: usize, end: usize, out: &mut S) {
        // Safety: the caller checked `start + 32 <= text.len()`.
        let words = unsafe { &*text.as_ptr().add(start).cast::<[u8; 32]>() };
        let key = pack32_words(words, end - start);
        let hash = Mid::hash(&key);
        if let Some((at, k)) = self.mid.get(hash, &key) {
            // Only pieces that are no token count toward the hit rate (module docs).
            self.hits += u64::from(k > 1);
            // Four ids at a time, each chunk written whole and `k` counted (`push_first`).
            for (c, chunk) in self.mid.chunks[at..at + k.div_ceil(4)].iter().enumerate() {
                out.push_first(chunk.0, (k - 4 * c).min(4));
            }
            return;
        }
        if let Some(rank) = vocab.rank_in(text, start, end) {
            out.push(rank);
            self.mid.insert(hash, key, &[rank]);
            return;
        }
        // The ids are copied into the mid table, and the long table's scratch dropped.
        let off = self.merge_counted(vocab, &text[start..end], out);
        self.mid.insert(hash, key, &self.long.ids[off..]);
        self.long.ids.truncate(off);
    }

    /// A piece of at most [`INLINE_PIECE`] bytes that the inline table does not hold (`key`:
    /// its inline key), seen by [`Self::encode`]: from the long table, or a token pushed and
    /// stored with its one id, or merged and stored ([`Self::learn`]). Pieces of
    /// [`LONG_FIRST`] bytes or more ask the long table before the vocabulary, shorter ones
    /// after it.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn first_sight<S: Sink>(&mut self, vocab: &Vocab, text: &[u8], start: usize, end: usize, key: [u64; 2], slot: usize, out: &mut S) {
        let piece = &text[start..end];
        let hash = if piece.len() >= LONG_FIRST {
            let hash = Long::hash(piece);
            if self.long_hit(hash, piece, out) {
                return;
            }
            Some(hash)
        } else {
            None
        };
        if let Some(rank) = vocab.rank_in(text, start, end) {
            out.push(rank);
            self.inline.store(Some(slot), key, [rank, NO_ID, NO_ID, NO_ID]);
            return;
        }
        match hash {
            Some(hash) => self.learn(vocab, piece, hash, Some(key), out),
            None => self.miss(vocab, piece, Some(key), out),
        }
    }

    /// A piece the inline table does not hold (`key`: its inline key, when it has one): from
    /// the long table, or merged and stored.
    #[inline(never)]
    fn miss<S: Sink>(&mut self, vocab: &Vocab, piece: &[u8], key: Option<[u64; 2]>, out: &mut S) {
        let hash = Long::hash(piece);
        if !self.long_hit(hash, piece, out) {
            self.learn(vocab, piece, hash, key, out)
        }
    }

    /// Pushes the ids the long table holds for `piece` (its hash `hash`), if it holds any.
    #[inline(always)]
    fn long_hit<S: Sink>(&mut self, hash: u64, piece: &[u8], out: &mut S) -> bool {
        match self.long.get(hash, piece) {
            Some(ids) => {
                self.hits += 1;
                out.extend(ids);
                true
            }
            None => false,
        }
    }

    /// Merges a piece that no table holds and that is no token (`hash`: its long-table hash),
    /// and stores it: inline when it has a key and two to [`INLINE_IDS`] ids, else in the long
    /// table.
    #[inline(never)]
    fn learn<S: Sink>(&mut self, vocab: &Vocab, piece: &[u8], hash: u64, key: Option<[u64; 2]>, out: &mut S) {
        // The ids stay where they were merged unless the piece goes inline.
        let off = self.merge_counted(vocab, piece, out);
        let got = &self.long.ids[off..];
        match key {
            // At least two ids (a slot of one id is read as a token's, which would not count as
            // a hit); always true here, as a piece that merges into one id is a token, but not
            // assumed.
            Some(key) if (2..=INLINE_IDS).contains(&got.len()) => {
                let mut ids = [NO_ID; INLINE_IDS];
                for (k, id) in ids.iter_mut().enumerate() {
                    // A fixed-length loop, not a copy of got.len() ids (a `memcpy` call).
                    *id = got.get(k).copied().unwrap_or(NO_ID);
                }
                self.inline.store(None, key, ids);
                self.long.ids.truncate(off);
            }
            _ => self.long.insert(hash, piece, off),
        }
    }

    /// Counts a miss, merges `piece` (no token) onto the end of the long table's ids and pushes
    /// them to `out`; returns where they start. The long table's buffer is the scratch room of
    /// every merge the cache stores: its ids stay there when the piece goes to the long table,
    /// and are copied out and dropped when it goes inline or to the mid table.
    #[inline(always)]
    fn merge_counted<S: Sink>(&mut self, vocab: &Vocab, piece: &[u8], out: &mut S) -> usize {
        self.count_miss();
        let off = self.long.ids.len();
        merge_miss(vocab, piece, &mut self.long.ids);
        out.extend(&self.long.ids[off..]);
        off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::rank::merge::merge_piece;
    use crate::test_data::byte_vocab;

    /// Every byte and thirteen merges of a-d: pieces of a-p merge into many tokens of all sizes.
    fn toy_vocab() -> Vocab {
        byte_vocab(&["ab", "bc", "abc", "cd", "ca", "bca", "dd", "ddd", "abcd", "cdab", "abcdab", "dcba", "bcda"])
    }

    /// What the encoder must answer for the piece `p`: its id if it is a token, else its merge.
    fn answer(v: &Vocab, p: &[u8]) -> Vec<u32> {
        match v.rank(p) {
            Some(r) => vec![r],
            None => {
                let mut w = Vec::new();
                merge_piece(v, p, &mut w);
                w
            }
        }
    }

    /// `n` pseudo-random pieces of a-p, of the lengths `len` draws (given the generator).
    fn pieces(n: usize, seed: u64, mut len: impl FnMut(&mut dyn FnMut(u64) -> u64) -> usize) -> Vec<Vec<u8>> {
        let mut x = seed;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        (0..n)
            .map(|_| {
                let n = len(&mut next);
                (0..n).map(|_| b"abcdefghijklmnop"[next(16) as usize]).collect()
            })
            .collect()
    }

    /// Asks `cache` for every piece of `pieces` that is no token, each `times` times in a row,
    /// from one text holding them all (so lookups read whole words around them, and the last
    /// pieces, near the end, take the byte-by-byte packing); every answer must be the merge's.
    /// `each` sees the cache after every answer.
    fn ask(v: &Vocab, cache: &mut Option<PieceCache>, pieces: &[Vec<u8>], times: usize, mut each: impl FnMut(&PieceCache)) {
        let text: Vec<u8> = pieces.concat();
        let mut start = 0;
        for p in pieces {
            let end = start + p.len();
            if v.rank(p).is_none() {
                for round in 0..times {
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    PieceCache::merge(cache, v, &text, start, end, &mut got);
                    merge_piece(v, p, &mut want);
                    assert_eq!(got, want, "round {round}, piece {:?}", String::from_utf8_lossy(p));
                    each(cache.as_ref().unwrap());
                }
            }
            start = end;
        }
    }

    /// Pieces found away from their home slot are moved there ([`Inline::promote`]): after any
    /// sequence of lookups every stored piece is still found with its own ids, and a piece
    /// just found sits at its home slot. A table of 64 slots, 44 pieces whose homes crowd into
    /// a few runs (keys drawn until their homes fall in two stretches of 8 slots), looked up
    /// 20,000 times in a random order.
    #[test]
    fn pieces_found_away_from_home_move_home() {
        let v = toy_vocab();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut c = PieceCache::new(&v, 0);
                    c.inline = Inline::new(6);
                    let mut x = 0x2545_f491_4f6c_dd1du64;
                    let mut next = move || {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x
                    };
                    let mut stored: Vec<([u64; 2], [u32; INLINE_IDS])> = Vec::new();
                    while stored.len() < 44 {
                        let key = [next(), next() & (u64::MAX >> 8) | 5 << 56];
                        let home = c.inline.home(key);
                        if !(home < 8 || (40..48).contains(&home)) || stored.iter().any(|(k, _)| *k == key) {
                            continue;
                        }
                        let ids = [stored.len() as u32, 7, NO_ID, NO_ID];
                        c.inline.insert(key, ids);
                        stored.push((key, ids));
                    }
                    assert_eq!(c.inline.slots.len(), 64, "the table did not grow");
                    let away = stored.iter().filter(|(k, _)| c.inline.find(*k) != c.inline.home(*k)).count();
                    assert!(away > 20, "only {away} pieces away from home");
                    for _ in 0..20_000 {
                        let (key, ids) = stored[(next() % stored.len() as u64) as usize];
                        let mut out = Vec::new();
                        assert!(c.inline_hit(key, &mut out).is_ok());
                        assert_eq!(out, ids[..2]);
                        assert_eq!(c.inline.find(key), c.inline.home(key), "found, so moved home");
                    }
                    for (key, ids) in &stored {
                        let s = c.inline.slots[c.inline.find(*key)];
                        assert!(s.key == *key && s.ids == *ids);
                    }
                    assert_eq!(c.inline.slots.iter().filter(|s| s.key[1] != 0).count(), stored.len());
                    // A piece never stored still ends at an empty slot.
                    let absent = [1, 9 << 56];
                    assert!(c.inline_hit(absent, &mut Vec::new()).is_err());
                })
                .join()
                .unwrap()
        });
    }

    /// `held` counts the real ids of a slot: one to four, the unused ones last.
    #[test]
    fn held_counts_the_real_ids() {
        for k in 1..=INLINE_IDS {
            let mut ids = [NO_ID; INLINE_IDS];
            for (i, id) in ids.iter_mut().take(k).enumerate() {
                *id = [0, 7, (1 << 31) - 1, 0xffff][i];
            }
            assert_eq!(held(&ids), k, "{ids:?}");
        }
    }

    /// The whole path of [`PieceCache::encode`]: tokens and pieces that are no token, in one
    /// text, twice. The first pass makes the cache at the first piece that is no token and
    /// stores every short piece it meets after that (a token with its one id); the second
    /// answers every short piece with 16 readable bytes from the inline table, storing nothing
    /// new, and every piece that is no token from a table (a hit each); every answer equals the
    /// vocabulary's or the merge's.
    #[test]
    fn tokens_and_merged_pieces_answer_from_one_table() {
        let v = toy_vocab();
        // Mostly short pieces, a quarter of them tokens (the vocabulary's own, and single
        // bytes), some longer than the inline table takes.
        let mut pieces = pieces(3000, 0x9e37_79b9, |next| match next(10) {
            0 => 16 + next(20) as usize,
            _ => 1 + next(9) as usize,
        });
        for (i, t) in ["abcd", "a", "cdab", "ddd", "x", "abcdab", "bca", " "].iter().cycle().take(1000).enumerate() {
            pieces.insert(3 * i, t.as_bytes().to_vec());
        }
        // Each piece twice in a row: pieces that are no token then hit half the time, which
        // keeps the cache on (the test below has them never repeat).
        let pieces: Vec<Vec<u8>> = pieces.into_iter().flat_map(|p| [p.clone(), p]).collect();
        let text: Vec<u8> = pieces.concat();
        let want = |p: &[u8]| answer(&v, p);
        // On a thread of its own, so that no kept table of another test is used.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut cache = None;
                    let pass = |cache: &mut Option<PieceCache>| {
                        let (mut start, mut merged) = (0, 0);
                        for p in &pieces {
                            let end = start + p.len();
                            let mut got = Vec::new();
                            PieceCache::encode(cache, &v, &text, start, end, &mut got);
                            assert_eq!(got, want(p), "piece {:?}", String::from_utf8_lossy(p));
                            // Hits are counted for pieces that are no token (module docs).
                            merged += usize::from(v.rank(p).is_none());
                            start = end;
                        }
                        merged
                    };
                    pass(&mut cache);
                    let (stored, hits) = {
                        let c = cache.as_ref().expect("a piece that is no token made the cache");
                        assert_eq!(c.bypass, 0);
                        (c.inline.len, c.hits)
                    };
                    let one_id = |c: &PieceCache, t: &[u8]| {
                        let s = c.inline.slots[c.inline.find(pack16(t))];
                        s.key[1] != 0 && s.ids == [v.rank(t).unwrap(), NO_ID, NO_ID, NO_ID]
                    };
                    assert!(one_id(cache.as_ref().unwrap(), b"cdab"), "a token is stored with its one id");
                    let merged = pass(&mut cache);
                    let c = cache.as_ref().unwrap();
                    assert_eq!(c.inline.len, stored, "the second pass stores nothing new");
                    assert_eq!(c.hits - hits, merged as u64, "every piece that is no token is a hit");
                    assert!(merged > 1500, "{merged} pieces that are no token");
                })
                .join()
                .unwrap()
        });
    }

    /// Pieces that are no token and never repeat, between tokens that always do (random
    /// letters under o200k: its short tokens repeat, its longer pieces do not): the hit rate
    /// counts only the former, so the cache turns itself off, and then every piece is looked up
    /// in the vocabulary first. Answers are the vocabulary's or the merge's throughout.
    #[test]
    fn repeated_tokens_do_not_keep_the_cache_on() {
        let v = toy_vocab();
        let fresh = pieces(4000, 0x5851_f42d, |next| 6 + next(6) as usize);
        let mut list = Vec::new();
        for p in &fresh {
            list.push(p.clone());
            list.push(b"ab".to_vec());
            list.push(b"x".to_vec());
        }
        let text: Vec<u8> = list.concat();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let (mut cache, mut start, mut off) = (None, 0, 0);
                    for p in &list {
                        let end = start + p.len();
                        let mut got = Vec::new();
                        PieceCache::encode(&mut cache, &v, &text, start, end, &mut got);
                        let want = answer(&v, p);
                        assert_eq!(got, want);
                        off += usize::from(cache.as_ref().is_some_and(|c| c.bypass > 0));
                        start = end;
                    }
                    assert!(off > list.len() / 2, "the cache was off for {off} of {} pieces", list.len());
                })
                .join()
                .unwrap()
        });
    }

    /// More distinct short pieces than the inline table holds, each asked for twice: the table
    /// never holds more than [`INLINE_ENTRIES`] nor grows past [`KEPT_SLOTS`], it is emptied
    /// when full and fills again, so the last pieces asked for are still answered from it (a
    /// full table that refused new pieces served only the text it filled up on), and every
    /// answer is the merge's.
    #[test]
    fn a_full_inline_table_empties_and_follows_the_text() {
        // "ab" and two bytes: 65,536 distinct pieces of two or three ids, all held inline.
        let v = byte_vocab(&["ab"]);
        let many: Vec<Vec<u8>> = (0..=u16::MAX).map(|i| [b"ab".as_slice(), &i.to_be_bytes()].concat()).collect();
        assert!(many.len() > INLINE_ENTRIES + 10_000);
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut cache = None;
                    let (mut most, mut emptied, mut last) = (0, 0, 0);
                    ask(&v, &mut cache, &many, 2, |c| {
                        assert!(c.inline.len <= INLINE_ENTRIES && c.inline.slots.len() <= KEPT_SLOTS);
                        emptied += usize::from(c.inline.len < last);
                        last = c.inline.len;
                        most = most.max(c.inline.len);
                    });
                    assert_eq!(most, INLINE_ENTRIES, "the table filled up");
                    assert!(emptied >= 1, "and was emptied");
                    let c = cache.as_mut().unwrap();
                    let tail = &many[many.len() - 100..];
                    let held = tail.iter().filter(|p| v.rank(p).is_none() && c.inline_hit(pack16(p), &mut Vec::new()).is_ok());
                    assert!(held.count() >= 90, "the last pieces are held");
                })
                .join()
                .unwrap()
        });
    }

    /// Many distinct pieces (so the inline table grows several times), each asked for twice:
    /// the cached answer is the merge's answer.
    #[test]
    fn cached_answers_equal_the_merge() {
        let v = toy_vocab();
        // Mostly short pieces (the inline table), some up to 31 bytes (the long table), a few
        // past 128 bytes and around and past MAX_PIECE (the long table, or merged directly).
        let pieces = pieces(20_000, 0x2545_f491_4f6c_dd1d, |next| match next(40) {
            0 => [MAX_PIECE - 1, MAX_PIECE, MAX_PIECE + 1, 65, 100, 129, 200, 300][next(8) as usize],
            1..=9 => 2 + next(30) as usize,
            _ => 2 + next(3) as usize,
        });
        // Each piece asked for twice in a row (a hit rate of one half keeps the cache on).
        let mut cache = None;
        ask(&v, &mut cache, &pieces, 2, |_| ());
        let c = cache.unwrap();
        assert!(c.inline.len > 5000 && c.long.table.len() > 1000, "both tables used: {} {}", c.inline.len, c.long.table.len());
        assert!(c.long.table.len() <= MAX_ENTRIES && c.long.bytes() <= LONG_BYTES);
        assert_eq!(c.bypass, 0);

        // The same pieces once each: few hits, so the cache turns itself off for a while, and
        // the answers stay the merge's.
        once_each_on_a_new_thread(&v, &pieces, |_| ());
    }

    /// `pieces` asked once each (answers checked against the merge) on a new thread, which
    /// has kept no table: the cache must turn itself off on the way. `then` gets the cache.
    fn once_each_on_a_new_thread(v: &Vocab, pieces: &[Vec<u8>], then: impl FnOnce(PieceCache) + Send) {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let (mut cache, mut bypassed) = (None, false);
                    ask(v, &mut cache, pieces, 1, |c| bypassed |= c.bypass > 0);
                    assert!(bypassed, "a stream of pieces that do not repeat turns the cache off");
                    then(cache.unwrap());
                })
                .join()
                .unwrap()
        });
    }

    /// Pieces too long for the mid table are stored even while the cache is bypassed: a text
    /// none of whose pieces repeat within the call (o200k's Thai, whole phrases) is then
    /// encoded again from the cache. 3,000 distinct pieces of 32-231 bytes asked once each,
    /// on a new thread: the cache turns itself off, and the long table holds every one.
    #[test]
    fn long_pieces_are_stored_while_bypassed() {
        let v = toy_vocab();
        let pieces = pieces(3000, 0x9e37_79b9_7f4a_7c15, |next| 32 + next(200) as usize);
        once_each_on_a_new_thread(&v, &pieces, |c| {
            for p in pieces.iter().filter(|p| v.rank(p).is_none()) {
                let mut want = Vec::new();
                merge_piece(&v, p, &mut want);
                assert_eq!(c.long.get(Long::hash(p), p), Some(&want[..]), "{:?}", String::from_utf8_lossy(p));
            }
        });
    }

    /// The long table's bounds: more distinct pieces than [`MAX_ENTRIES`], then more bytes of
    /// long pieces than [`LONG_BYTES`]. It never holds more than either; when full it is
    /// emptied and fills again (so it keeps serving the pieces that come after); and every
    /// answer is the merge's.
    #[test]
    fn the_long_table_stays_within_its_bounds() {
        let v = toy_vocab();
        let mut cache = None;
        // 16-24 bytes made of the table's own words (a few ids each: about 40 bytes of key
        // and ids), so the entry bound comes first.
        let words: [&[u8]; 16] = [
            b"abcd", b"cdab", b"dcba", b"bcda", b"abcdab", b"ab", b"cd", b"ddd", b"bc", b"ca", b"bca", b"abc", b"dd", b"a", b"b", b"c",
        ];
        let many: Vec<Vec<u8>> = pieces(MAX_ENTRIES + 20_000, 7, |next| 16 + next(9) as usize)
            .into_iter()
            .map(|p| {
                let mut piece = Vec::new();
                for b in p.iter().cycle().take(64) {
                    if piece.len() >= p.len() {
                        break;
                    }
                    piece.extend_from_slice(words[(b % 16) as usize]);
                }
                piece
            })
            .collect();
        let distinct: std::collections::HashSet<&Vec<u8>> = many.iter().collect();
        assert!(distinct.len() > MAX_ENTRIES, "{} distinct pieces", distinct.len());
        // 700-1023 bytes: about 3 KB each, so the byte bound comes first.
        let big = pieces(LONG_BYTES / 2048, 8, |next| 700 + next((MAX_PIECE - 699) as u64) as usize);
        for (which, pieces) in [("entries", &many), ("bytes", &big)] {
            let (mut most, mut emptied) = (0, 0);
            let mut last = None;
            ask(&v, &mut cache, pieces, 2, |c| {
                let (n, bytes) = (c.long.table.len(), c.long.bytes());
                assert!(n <= MAX_ENTRIES && bytes <= LONG_BYTES, "{which}: {n} entries, {bytes} bytes");
                assert_eq!(c.bypass, 0);
                if last.is_some_and(|m| n < m) {
                    emptied += 1;
                }
                most = most.max(n);
                last = Some(n);
            });
            assert!(emptied >= 1, "{which}: the table was emptied when full");
            let c = cache.as_ref().unwrap();
            assert!(!c.long.table.is_empty(), "{which}: and filled again");
            if which == "entries" {
                assert_eq!(most, MAX_ENTRIES);
            }
        }
    }

    /// Pieces of 16-31 bytes go to the mid table, whatever they are: tokens of that length
    /// (stored with their one id), pieces of a few ids, and pieces of up to 31 (past the
    /// inline table's four, across several chunks). The first pass stores each once, every
    /// answer equals the vocabulary's or the merge's; the second stores nothing and answers
    /// every piece that is no token as a hit; a piece within the last 31 bytes of the text
    /// (no 32 readable bytes) is answered the long table's way. Then the bounds: more distinct pieces
    /// than [`MID_ENTRIES`], and more ids than [`MID_CHUNKS`] holds, each empty the table,
    /// which then fills again and never holds more than either.
    #[test]
    fn pieces_of_16_to_31_bytes_answer_from_the_mid_table() {
        let long_tokens = ["abcdabcdabcdabcd", "dddddddddddddddddddddddddddddd"];
        let v = byte_vocab(&["ab", "bc", "abc", "cd", "ca", "bca", "dd", "ddd", "abcd", "cdab", "abcdab", "dcba", "bcda", long_tokens[0], long_tokens[1]]);
        let want = |p: &[u8]| answer(&v, p);
        // a-d merge into a few ids; a-p (most letters no part of any token) into many.
        let mut pieces = pieces(600, 0x51ed_270b, |next| 16 + next(16) as usize);
        let few = tests::pieces(600, 0x2545_f491, |next| 16 + next(16) as usize);
        pieces.extend(few.into_iter().map(|p| p.into_iter().map(|b| b"abcd"[(b % 4) as usize]).collect::<Vec<u8>>()));
        for (i, t) in long_tokens.iter().cycle().take(100).enumerate() {
            pieces.insert(7 * i, t.as_bytes().to_vec());
        }
        pieces.insert(0, b"ef".to_vec()); // no token: makes the cache
        // Each twice in a row, so that the cache stays on (pieces that never repeat turn it off).
        let pieces: Vec<Vec<u8>> = pieces.into_iter().flat_map(|p| [p.clone(), p]).collect();
        let text: Vec<u8> = pieces.concat();
        let spans: Vec<(usize, usize)> = pieces.iter().scan(0, |at, p| {
            *at += p.len();
            Some((*at - p.len(), *at))
        }).collect();
        let (mut distinct, mut chunks, mut merged) = (std::collections::HashSet::new(), 0, 0);
        for (&(start, end), p) in spans.iter().zip(&pieces) {
            if (16..=MID_PIECE).contains(&p.len()) && start + 32 <= text.len() && distinct.insert(p.clone()) {
                chunks += 2 + want(p).len().div_ceil(4);
            }
            merged += usize::from(v.rank(p).is_none());
            assert!(end <= text.len());
        }
        let most = pieces.iter().map(|p| want(p).len()).max().unwrap();
        assert!(most > 16, "pieces of many ids: {most}");
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut cache = None;
                    let pass = |cache: &mut Option<PieceCache>| {
                        for (&(start, end), p) in spans.iter().zip(&pieces) {
                            let mut got = Vec::new();
                            PieceCache::encode(cache, &v, &text, start, end, &mut got);
                            assert_eq!(got, want(p), "piece {:?}", String::from_utf8_lossy(p));
                        }
                    };
                    pass(&mut cache);
                    let c = cache.as_ref().unwrap();
                    assert_eq!((c.mid.table.len(), c.mid.chunks.len()), (distinct.len(), chunks), "each piece stored once");
                    let key = |t: &[u8]| pack32_words(&text[text.windows(t.len()).position(|w| w == t).unwrap()..][..32].try_into().unwrap(), t.len());
                    let k = key(long_tokens[0].as_bytes());
                    assert_eq!(c.mid.get(Mid::hash(&k), &k).map(|(_, n)| n), Some(1), "a token is stored with its one id");
                    let hits = c.hits;
                    pass(&mut cache);
                    let c = cache.as_ref().unwrap();
                    assert_eq!((c.mid.table.len(), c.mid.chunks.len()), (distinct.len(), chunks), "the second pass stores nothing");
                    assert_eq!(c.hits - hits, merged as u64, "every piece that is no token is a hit");
                    // The thread keeps the table for `v` only: another vocabulary with the same
                    // tokens ranked otherwise (other merges) gets its own answers.
                    drop(cache);
                    let mut reversed = ["ab", "bc", "abc", "cd", "ca", "bca", "dd", "ddd", "abcd", "cdab", "abcdab", "dcba", "bcda", long_tokens[0], long_tokens[1]];
                    reversed.reverse();
                    let w = byte_vocab(&reversed);
                    let (mut cache, mut differ) = (None, 0);
                    for (&(start, end), p) in spans.iter().zip(&pieces) {
                        let mut got = Vec::new();
                        PieceCache::encode(&mut cache, &w, &text, start, end, &mut got);
                        let theirs = answer(&w, p);
                        assert_eq!(got, theirs, "piece {:?} under the other table", String::from_utf8_lossy(p));
                        differ += usize::from(theirs != want(p));
                    }
                    assert!(differ > 100, "{differ} pieces the two tables merge differently");
                })
                .join()
                .unwrap()
        });
        // The bounds: 16-byte tokens of a table of more than MID_ENTRIES of them (three chunks
        // each, so the entry bound comes first), then 31-byte pieces of a-p (about 25 ids: nine
        // chunks, so the chunk bound comes first), the latter twice each (the cache stays on).
        let tokens = tests::pieces(MID_ENTRIES + 5_000, 11, |_| 16);
        let many = byte_vocab(&tokens.iter().map(|t| std::str::from_utf8(t).unwrap()).collect::<Vec<_>>());
        let long: Vec<Vec<u8>> = tests::pieces(MID_CHUNKS / 9 + 5_000, 12, |_| 31).into_iter().flat_map(|p| [p.clone(), p]).collect();
        for (which, v, pieces) in [("entries", &many, [vec![b"ef".to_vec()], tokens].concat()), ("chunks", &v, long)] {
            let want = |p: &[u8]| answer(v, p);
            let text: Vec<u8> = [pieces.concat(), vec![b' '; 32]].concat();
            let (mut cache, mut start, mut emptied, mut most, mut last) = (None, 0, 0, 0, 0);
            for p in &pieces {
                let mut got = Vec::new();
                PieceCache::encode(&mut cache, v, &text, start, start + p.len(), &mut got);
                assert_eq!(got, want(p));
                start += p.len();
                let Some(c) = cache.as_ref() else { continue };
                let (n, chunks) = (c.mid.table.len(), c.mid.chunks.len());
                assert!(n <= MID_ENTRIES && chunks <= MID_CHUNKS, "{which}: {n} entries, {chunks} chunks");
                assert_eq!(c.bypass, 0, "{which}: the cache stays on");
                emptied += usize::from(n < last);
                (most, last) = (most.max(n), n);
            }
            assert!(emptied >= 1 && last > 0, "{which}: emptied when full ({emptied}), and filled again");
            if which == "entries" {
                assert_eq!(most, MID_ENTRIES);
            }
        }
    }

    /// A cold call (another table's serial kept, or `clear_cache`) recycles the kept tables'
    /// memory, emptied: nothing stored for the other table is served where its merges differ
    /// (here every piece starts "abc", which is "ab" "c" in one table and "a" "bc" in the
    /// other, and `ask` checks every answer against the table's own merge), and the inline
    /// table is sized for the text rather than for the last call. On a thread of its own, so
    /// the kept tables are this test's.
    #[test]
    fn a_cold_call_recycles_the_kept_tables_emptied_and_sized_for_its_text() {
        let (a, b) = (byte_vocab(&["ab", "bc"]), byte_vocab(&["bc", "ab"]));
        // Short (inline) and 31-byte (long) pieces, enough distinct ones that the inline
        // table grows; each asked for twice, so the cache stays on.
        let mut pieces: Vec<Vec<u8>> = (0..3000u32).map(|i| [b"abc".as_slice(), &i.to_le_bytes()[..2]].concat()).collect();
        pieces.extend((0..50u8).map(|i| [b"abcabc".repeat(5), vec![i]].concat()));
        let call = |v: &Vocab, pieces: &[Vec<u8>]| {
            let mut cache = None;
            ask(v, &mut cache, pieces, 2, |_| ());
            let c = cache.as_ref().unwrap();
            assert_eq!(c.bypass, 0);
            (c.inline.slots.len(), c.inline.slots.as_ptr() as usize, c.long.table.len())
        };
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let (slots, _, long) = call(&a, &pieces);
                    assert!(slots >= 4096 && long == 50, "the first call's tables: {slots} slots, {long} long pieces");
                    let (_, mem, long) = call(&b, &pieces);
                    assert_eq!(long, 50, "b's long table holds b's pieces only");
                    // A short text: the recycled table starts small again, in the same memory.
                    let few = &pieces[..4];
                    let (slots, again, long) = call(&a, few);
                    assert_eq!((slots, long), (1 << start_bits(few.concat().len()), 0));
                    assert_eq!(again, mem, "the kept table's memory is used again");
                    a.forget_cached();
                    call(&a, &pieces);
                    call(&b, &pieces);
                })
                .join()
                .unwrap()
        });
        // A large text starts with a large table: no growth on the way (the cold call's
        // rehashing and page faults were a few percent of it).
        assert_eq!(start_bits(4_000_000), KEPT_SLOTS.trailing_zeros());
        assert_eq!(start_bits(1_500_000), 15);
        assert_eq!(start_bits(100_000), 11);
        assert_eq!(start_bits(4_000), 8);
    }

    /// A thread keeps its tables for the next call on the same vocabulary (the second call's
    /// lookups hit: an inline piece, a long one, one of more than 128 bytes), never serves
    /// them to another vocabulary, even one with the same tokens (whose merges could differ
    /// in general), and `Vocab::forget_cached` (`clear_cache`) ends their use.
    #[test]
    fn the_tables_outlive_the_call_for_their_own_vocabulary_only() {
        let build = || byte_vocab(&["ab", "bc"]);
        let (a, b) = (build(), build());
        // "abc" (inline), 30 bytes (long), 600 bytes (long, past the old 128-byte limit).
        let pieces = [b"abc".to_vec(), b"abcabc".repeat(5), b"xabcab".repeat(100)];
        let call = |v: &Vocab| {
            let mut cache = None;
            ask(v, &mut cache, &pieces, 1, |_| ());
            cache.as_ref().unwrap().hits
        };
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    assert_eq!(call(&a), 0, "first call: nothing kept yet");
                    assert_eq!(call(&a), 3, "second call on the same table: the kept entries");
                    assert_eq!(call(&b), 0, "another table: the kept ones are not used");
                    assert_eq!(call(&b), 3);
                    assert_eq!(call(&a), 0, "a thread keeps one table: a's was replaced by b's");
                    assert_eq!(call(&a), 3);
                    a.forget_cached();
                    assert_eq!(call(&a), 0, "after clear_cache nothing kept is used");
                    assert_eq!(call(&a), 3);
                })
                .join()
                .unwrap()
        });
    }
}
