//! Sealed characters: two- and three-byte UTF-8 characters that the merge may start from whole.
//!
//! A piece of Chinese, Japanese or Cyrillic text is two or three bytes per character, and the
//! merge spends most of its rounds joining each character's own bytes (a CJK piece of m
//! characters takes about 3m - k rounds for k output tokens, each round waiting on a pair
//! lookup in a table larger than the L2). When it is *provable* that a character's bytes join
//! into its token before any of them joins anything outside it, and that starting from the
//! joined character changes no other merge, the merge starts from that character as one part:
//! m - k rounds instead.
//!
//! **The rule.** Let c be a character of two or three bytes that is a token of rank R, whose
//! own merge gives the token c (for three bytes b0 b1 b2 the first pair it merges, b0b1 or
//! b1b2, ranks below R). Call z the byte before c in the piece and y the byte after it (either
//! may be absent: c starts or ends the piece). c is *sealed* in that place when
//!
//! 1. every token that ends with z followed by a proper prefix of c (b0; or b0b1), or by c
//!    itself, ranks above R, and
//! 2. every token that starts with a proper suffix of c (b2 or b1b2; b1 for two bytes), or
//!    with c itself, followed by y, ranks above R
//!
//! (a condition on a side whose neighbour is absent holds trivially: no part lies there).
//! Then the merge of the piece from single bytes and the merge from a state in which c is
//! already one part give the same tokens:
//!
//! - Run A (from bytes). While c is not yet whole, one of its own pairs is a token of rank at
//!   most R (b0 b1 or b1 b2 below R, then the last join at exactly R), so every merge A makes
//!   in that time has rank at most R. A merge across c's edge while c is in parts joins a part
//!   ending in z with b0 or b0b1, or b2 or b1b2 with a part starting with y: a token of rule
//!   1 or 2, ranked above R, never the lowest pair then. So c's bytes join only each other,
//!   in the order they would alone, and c becomes whole.
//! - Run B (c whole from the start). Until the step where A completes c, the pairs of B are
//!   A's pairs without c's inner ones, plus the pairs (part, c) and (c, part): tokens ending
//!   with z c or starting with c y, ranked above R by rules 1-2. Every merge A makes outside c
//!   in that time ranks at most R and was the lowest pair in A (leftmost on a tie), so it is
//!   also the lowest in B; B makes the same merges in the same order, and from A's step on
//!   the two states are equal.
//!
//! Applying this to one sealed character at a time (the argument holds from any starting
//! state in which c is still bytes) starts the merge from all of them at once. Nothing here
//! assumes the table is a merge order: every condition is checked against the table.
//!
//! **Half starts.** A three-byte character that is not sealed where it stands (it is no
//! token, as 10.8% of cl100k_base's in Japanese text; or a neighbouring token ranks too low)
//! still has a first own merge: b0b1 or b1b2, whichever is the token of lower rank r1 (a
//! byte pair of a script's lead bytes, among a table's first few thousand merges). The merge
//! may start from that merge made, two parts P1 P2 (b0b1 and b2, or b0 and b1b2), when
//!
//! 1. every token that ends with z followed by b0, or by P1, ranks above r1, and
//! 2. every token that starts with b2, or with P2, followed by y, ranks above r1,
//!
//! and the character is no token or ranks above r1. The proof is the one above with r1 for
//! R and the step t at which run A makes that first merge: until t, the pair is there at
//! rank r1 (the character's other pair ranks higher or is no token), so A merges only at
//! most r1, and a merge across the character's edge would be a token of rule 1 or 2 (its
//! bytes are still single bytes); run B (from P1 P2) has A's pairs without the character's
//! inner ones, plus (part, P1), (P1, P2) and (P2, part), which rank above r1 by the rules
//! and the last condition, so B makes A's merges in A's order until t, where their states
//! meet. Conditions that do not hold leave the character in bytes, as before. Counted with
//! a Python model of the rules over the first 200,000 characters of each corpus (the CJK
//! pieces' first parts minus their tokens), the merge rounds fall by 33-43% on cl100k_base
//! Chinese and Japanese and by 11-14% on o200k_base.
//!
//! **The table.** Built on first use per vocabulary, from one pass over the tokens (each
//! token's last and first few bytes): per character (indexed by its bytes, 2,048 two-byte and
//! 65,536 three-byte slots, 270 KB) its rank and whether rules 1 and 2 hold for *every*
//! continuation byte z and *every* lead byte y except for the lone-byte cases, which depend on
//! the exact neighbour byte and are read from two 64 x 64 tables (tokens ending with z b0,
//! tokens starting with b2 y; 16 KB each) when the piece is merged. A three-byte character
//! for which rule 1 fails only through tokens ending with z b0 b1 has those read for its
//! exact z too (a 64 x 16 x 64 table, 256 KB): the rule needs only the byte that stands before
//! c, and a single low-ranked token such as cl100k_base's `し` + `e3 81` would otherwise keep
//! `て` in bytes after every character. After an ASCII byte (a space or a Latin letter
//! before a run of CJK or Cyrillic) rule 1 is read the same way: for every ASCII byte at
//! once for the character and its first two bytes, and for the exact byte for its lead byte
//! alone (a 128 x 64 table); a token such as a space and the character, ranked below it,
//! keeps it in bytes there. An ASCII byte after a character (which the pre-tokenizers rarely
//! leave inside a piece) leaves it in bytes: that is always exact, just not faster.
//!
//! Beside these, two bit tables over every token answer pair lookups of the merge that no
//! token can satisfy ([`Chars::may_cross`], [`Chars::may_be_token3`]), and the half starts
//! above read one more per three-byte pattern: about 330 KB more in all, and the build reads
//! every byte of every token (o200k_base: about 5 ms, 3 before).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::cuts::Joins;
use crate::vocab::Vocab;

/// A vocabulary with more ranks than this builds its table only after [`BUILD_AFTER`] bytes of
/// pieces have asked for it; a smaller one at once (its build is short).
const EAGER_RANKS: u32 = 1 << 14;
/// Bytes of pieces worth cutting (cuts.rs) merged uncut before the table of characters side
/// by side in tokens is built. Its build is a pass over every token (about 3 ms for
/// o200k_base); the cuts save about 3 ms per MB of such pieces (o200k, zh-fortunes), so by the
/// same rule as [`BUILD_AFTER`] it is built once about that many bytes have gone without it.
const JOINS_AFTER: usize = 1 << 20;
/// Bytes of pieces merged without the table before it is built. The build is a pass over every
/// token (about 3-6 ms for o200k_base); sealing saves about 20 ms per MB of CJK pieces. Building
/// once this many bytes have gone without it costs at most twice the better choice made in
/// hindsight (the ski-rental rule), and a short first request never pays for the build.
const BUILD_AFTER: usize = 256 << 10;

/// A lazily built [`Chars`] per vocabulary (see `Vocab::chars`). Merging without the table is
/// always exact (no character starts sealed), so when it is built changes speed only.
#[derive(Default)]
pub struct LazyChars {
    table: OnceLock<Option<Arc<Chars>>>,
    /// Bytes of pieces that asked for the table before it was built.
    deferred: AtomicUsize,
}

impl Clone for LazyChars {
    fn clone(&self) -> Self {
        LazyChars { table: self.table.clone(), deferred: AtomicUsize::new(self.deferred.load(Ordering::Relaxed)) }
    }
}

impl LazyChars {
    /// The table for a piece of `piece_len` bytes, or `None` while building it would not pay
    /// yet (or when the vocabulary's ranks do not fit it).
    pub fn get(&self, vocab: &Vocab, piece_len: usize) -> Option<&Chars> {
        if let Some(table) = self.table.get() {
            return table.as_deref();
        }
        if vocab.max_rank() >= EAGER_RANKS && self.deferred.fetch_add(piece_len, Ordering::Relaxed) < BUILD_AFTER {
            return None;
        }
        self.table.get_or_init(|| Chars::build(vocab).map(Arc::new)).as_deref()
    }

    /// The table if it has been built, without counting toward its build.
    #[inline]
    pub fn built(&self) -> Option<&Chars> {
        self.table.get().and_then(|t| t.as_deref())
    }
}

/// Slot bits of [`Chars::slot`]: the character may be sealed at all (a token whose own merge is
/// itself, first pair below it); rule 1's whole-table part holds for a continuation byte
/// before it; rule 2's for a lead byte after it; for a three-byte character without `LEFT`,
/// rule 1 holds for every continuation byte before it for the character itself, so only its
/// first two bytes' case is left, read for the exact byte before it from [`Chars::end3`]; rule
/// 1 holds after every ASCII byte for the character and (three bytes) its first two bytes, so
/// only the lone lead byte's case is left, read for the exact byte from
/// [`Chars::end_ascii2`]. The rank sits above them.
const VALID: u32 = 1;
const LEFT: u32 = 2;
const RIGHT: u32 = 4;
const LEFT_EXACT: u32 = 8;
const LEFT_ASCII: u32 = 16;
const RANK_SHIFT: u32 = 5;

/// Bits of [`Chars::half`]: the pattern has a first own merge (rank r1 above the bits) that
/// may be made before the piece's merge starts; that merge is b0b1 (else b1b2); after an
/// ASCII byte, no token ending with an ASCII byte and b0b1 ranks at or below r1 (set when the
/// merge is b1b2, where that case does not arise); before a lead byte, no token starting with
/// b1b2 and a lead byte does (set when the merge is b0b1).
const HALF_VALID: u32 = 1;
const HALF_FIRST2: u32 = 2;
const HALF_LEFT_ASCII: u32 = 4;
const HALF_RIGHT: u32 = 8;

const NONE: u32 = u32::MAX;
const TWO: usize = 1 << 11;

pub struct Chars {
    /// Two-byte characters at `(b0 & 0x1f) << 6 | b1 & 0x3f`, three-byte ones at 2048 plus
    /// `(b0 & 0x0f) << 12 | (b1 & 0x3f) << 6 | b2 & 0x3f`: one slot per byte pattern, so an
    /// overlong or surrogate sequence has its own slot (never a character's).
    slot: Vec<u32>,
    /// Lowest rank of a token ending with z b0, z a continuation byte and b0 a lead byte, at
    /// `(z & 0x3f) << 6 | b0 & 0x3f`.
    end2: Vec<u32>,
    /// Lowest rank of a token starting with b y, b a continuation byte and y a lead byte.
    start2: Vec<u32>,
    /// Lowest rank of a token ending with z b0 b1, z a continuation byte and b0 b1 the first
    /// two bytes of a three-byte character, at [`triple_index`]`(z, b0, b1)` (65,536 slots,
    /// 256 KB): rule 1 for the character's first two bytes, for the exact byte before it.
    /// Why exact: on cl100k_base a token such as `し` followed by `e3 81` (rank 21,105), the
    /// first two bytes of most hiragana, ranks below `て` (38,144), `が` and `う`, so rule 1
    /// taken over every continuation byte left those characters in bytes everywhere, though
    /// the token can cross only after `し`'s last byte. Of the three-byte characters of the
    /// first 300,000 characters of ja.txt (the rule recomputed in Python), cl100k then sealed
    /// 56%; read for the byte before, 82% (o200k: 86% and 92%; Chinese, where no such token
    /// ranks that low, unchanged).
    end3: Vec<u32>,
    /// Per three-byte byte pattern (token or not), at the pattern's 16 bits (b0's low four,
    /// b1's and b2's low six): the rank r1 of its first own merge (b0b1 or b1b2, whichever
    /// ranks lower) above the `HALF_*` bits, for [`Chars::half_at`]. `HALF_VALID` unset when
    /// neither pair is a token, or the character is a token ranked below r1.
    half: Vec<u32>,
    /// Lowest rank of a token ending with z b0, z an ASCII byte and b0 a lead byte, at
    /// `z << 6 | b0 & 0x3f` (8,192 slots): [`Chars::half_at`] after an ASCII byte (a space or
    /// a Latin letter before a CJK run).
    end_ascii2: Vec<u32>,
    /// One bit per byte z followed by a three-byte lead b0 and the byte b1 after it somewhere
    /// inside some token, at `z << 10 | (b0 & 0x0f) << 6 | b1 & 0x3f` (32 KB; b1's top bits
    /// are dropped, which can only set a bit that need not be): [`Chars::may_cross`].
    cross3: Vec<u64>,
    /// The same for z followed by b0, at `z << 4 | b0 & 0x0f` (512 bytes).
    cross2: Vec<u64>,
    /// One bit per three-byte token with a three-byte lead, at its 16-bit pattern (8 KB; the
    /// other bytes' top bits dropped): [`Chars::may_be_token3`].
    token3: Vec<u64>,
    /// Pairs of whole three-byte-character tokens that join into a token ([`Pairs`]), built
    /// on the first piece with two such characters side by side (so Cyrillic, Greek or
    /// Turkish text never builds it); `None` when the ranks do not fit its keys.
    pairs: OnceLock<Option<Pairs>>,
    /// Pairs of three-byte characters that stand side by side inside some token (cuts.rs),
    /// built once [`JOINS_AFTER`] bytes of pieces worth cutting have gone uncut.
    joins: OnceLock<Joins>,
    /// Bytes of pieces worth cutting that asked for `joins` before it was built.
    joins_deferred: AtomicUsize,
}

/// The tokens made only of whole three-byte characters (CJK, kana, Hangul, CJK punctuation:
/// lead byte `0xe0`-`0xef`, two continuation bytes, repeated), as the pairs of tokens they
/// split into: `(rank(A), rank(B)) -> rank(A B)` for every token `A B` of two or more such
/// characters and every cut between two of its characters where both sides are tokens.
///
/// Why: after sealing, a CJK piece merges mostly pairs of parts that are both whole
/// characters or words of them, and each such round waited on a lookup of 6-15 bytes in the
/// short or medium index (2-4 MB, far beyond L2), which the last round's merge decides. o200k
/// has 12,721 such tokens and 15,695 such pairs, so this table is 32,768 slots of 8 bytes
/// (256 KB, within L2); cl100k has 345 pairs (1,024 slots, 8 KB).
///
/// Exact: if the parts A and B are tokens made of whole three-byte characters, so is A B,
/// and if A B is a token it is one of the tokens above, cut at A's length (a multiple of
/// three) into two tokens, so its pair is in the table under `(rank(A), rank(B))`. Ranks name
/// tokens one to one (`Vocab::new` refuses an id given twice, and the keys are made with
/// `Vocab::rank`, the lookup that gave the merge its parts' ranks), so a key names one pair
/// of byte strings (the build gives up on a table with one byte string at two ranks). The
/// merge asks only about parts it knows are such tokens (`merge.rs`, `whole3`), and any other
/// pair goes to the vocabulary as before. Built on first use: about 1 ms for o200k_base.
pub struct Pairs {
    /// `key << 20 | rank`, key = `rank(A) << 20 | rank(B)`; [`EMPTY`] for a free slot.
    slots: Vec<u64>,
    /// 64 minus the log2 of the slot count: the top bits of the hashed key are the home slot.
    shift: u32,
}

const EMPTY: u64 = u64::MAX;
/// Ranks must fit 20 bits for [`Pairs`]' keys (o200k_base's largest is 199,997).
const PAIR_RANK_BITS: u32 = 20;

impl Pairs {
    fn build(vocab: &Vocab) -> Option<Pairs> {
        if vocab.max_rank() >= 1 << PAIR_RANK_BITS {
            return None;
        }
        // The tokens of whole three-byte characters, in a map of their own: the halves are
        // looked up there (about 30,000 lookups for o200k_base, which in the vocabulary's
        // indexes were as many cache misses).
        let mut words: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
        for (t, r) in vocab.mergeable() {
            if t.len() >= 3 && t[0] & 0xf0 == 0xe0 && whole3(t) {
                // One byte string at two ranks: the ranks would not name the parts one to
                // one. (Not a real table; the merge then does without this one.)
                if words.insert(t, r).is_some() {
                    return None;
                }
            }
        }
        let mut entries: Vec<(u64, u32)> = Vec::new();
        for (&t, &r) in &words {
            for cut in (3..t.len()).step_by(3) {
                if let (Some(&a), Some(&b)) = (words.get(&t[..cut]), words.get(&t[cut..])) {
                    entries.push(((a as u64) << PAIR_RANK_BITS | b as u64, r));
                }
            }
        }
        // At most half full, at least 64 slots.
        let bits = (2 * entries.len()).max(64).next_power_of_two().trailing_zeros();
        let mut slots = vec![EMPTY; 1 << bits];
        let shift = 64 - bits;
        let mask = slots.len() - 1;
        for (key, r) in entries {
            let mut h = Self::home(key, shift);
            // Each key once: a token has one rank, and (A, B) determines the token A B.
            while slots[h] != EMPTY {
                h = (h + 1) & mask;
            }
            slots[h] = key << PAIR_RANK_BITS | r as u64;
        }
        Some(Pairs { slots, shift })
    }

    #[inline(always)]
    fn home(key: u64, shift: u32) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    /// The rank of the token that the tokens of ranks `a` and `b` (both made of whole
    /// three-byte characters) join into, or `u32::MAX`.
    #[inline(always)]
    pub fn get(&self, a: u32, b: u32) -> u32 {
        let key = (a as u64) << PAIR_RANK_BITS | b as u64;
        let mask = self.slots.len() - 1;
        let mut h = Self::home(key, self.shift);
        loop {
            // In bounds: `h` is masked (the shift leaves exactly log2(len) bits).
            let s = self.slots[h & mask];
            if s >> PAIR_RANK_BITS == key {
                return (s & ((1 << PAIR_RANK_BITS) - 1)) as u32;
            }
            if s == EMPTY {
                return NONE;
            }
            h = (h + 1) & mask;
        }
    }

    /// Bytes of the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 8
    }
}

/// Whether `t` is one or more whole three-byte characters' bytes (lead `0xe0`-`0xef`, two
/// continuation bytes; overlong and surrogate patterns count, as byte patterns).
#[inline(always)]
pub fn whole3(t: &[u8]) -> bool {
    t.len().is_multiple_of(3) && t.chunks_exact(3).all(|c| c[0] & 0xf0 == 0xe0 && is_cont(c[1]) && is_cont(c[2]))
}

#[inline(always)]
fn is_cont(b: u8) -> bool {
    b & 0xc0 == 0x80
}
#[inline(always)]
fn is_lead(b: u8) -> bool {
    b >= 0xc0
}
#[inline(always)]
fn pair_index(a: u8, b: u8) -> usize {
    ((a as usize & 0x3f) << 6) | (b as usize & 0x3f)
}
/// [`Chars::end3`]'s slot of a continuation byte `z` followed by a three-byte character's
/// first two bytes `b0 b1` (lead `0xe0`-`0xef`, so 16 leads).
#[inline(always)]
fn triple_index(z: u8, b0: u8, b1: u8) -> usize {
    ((z as usize & 0x3f) << 10) | ((b0 as usize & 0x0f) << 6) | (b1 as usize & 0x3f)
}

/// The 16 bits of a three-byte pattern (b0's low four, b1's and b2's low six): its index in
/// [`Chars::half`] and [`Chars::token3`], and past [`TWO`] in [`Chars::slot`].
#[inline(always)]
fn pattern_index(b0: u8, b1: u8, b2: u8) -> usize {
    ((b0 as usize & 0x0f) << 12) | ((b1 as usize & 0x3f) << 6) | (b2 as usize & 0x3f)
}

/// The 10 bits of a three-byte character's first two bytes (b0's low four, b1's low six): the
/// index of `end_pre` and of the tables of b0b1 in [`Chars::build`], and the top 10 bits of
/// [`pattern_index`].
#[inline(always)]
fn pre_index(b0: u8, b1: u8) -> usize {
    ((b0 as usize & 0x0f) << 6) | (b1 as usize & 0x3f)
}

/// [`Chars::end_ascii2`]'s slot of an ASCII byte `z` followed by the lead byte `b0`.
#[inline(always)]
fn ascii_index(z: u8, b0: u8) -> usize {
    (z as usize) << 6 | (b0 as usize & 0x3f)
}

/// Bit `i` of a bit table.
#[inline(always)]
fn bit(bits: &[u64], i: usize) -> bool {
    bits[i >> 6] >> (i & 63) & 1 != 0
}

/// [`Chars::cross3`]'s bit for byte `z`, three-byte lead `b0` and byte `b1`.
#[inline(always)]
fn cross3_index(z: u8, b0: u8, b1: u8) -> usize {
    (z as usize) << 10 | (b0 as usize & 0x0f) << 6 | (b1 as usize & 0x3f)
}
/// [`Chars::cross2`]'s bit for byte `z` and three-byte lead `b0`.
#[inline(always)]
fn cross2_index(z: u8, b0: u8) -> usize {
    (z as usize) << 4 | (b0 as usize & 0x0f)
}

/// The slot of the character whose bytes start `s` (two or three bytes, lead byte checked by
/// the caller), or `None` when `s` is not such a character's bytes.
#[inline(always)]
fn char_slot(s: &[u8]) -> Option<(usize, usize)> {
    let b0 = *s.first()?;
    if b0 & 0xe0 == 0xc0 {
        let b1 = *s.get(1)?;
        is_cont(b1).then_some((((b0 as usize & 0x1f) << 6) | (b1 as usize & 0x3f), 2))
    } else if b0 & 0xf0 == 0xe0 {
        let (b1, b2) = (*s.get(1)?, *s.get(2)?);
        (is_cont(b1) && is_cont(b2)).then(|| (TWO + pattern_index(b0, b1, b2), 3))
    } else {
        None
    }
}

impl Chars {
    /// `None` when the table's ranks do not fit the slots (never for the built-in tables).
    fn build(vocab: &Vocab) -> Option<Chars> {
        if vocab.max_rank() >= 1 << (32 - RANK_SHIFT) {
            return None;
        }
        let n = TWO + (1 << 16);
        // Lowest rank of a token ending with a continuation byte followed by the character
        // (or, for three-byte characters, its first two bytes, at the slot with b2 = 0x80's
        // bits cleared: keyed separately below), and of one starting with the character (or
        // its last two bytes) followed by a lead byte.
        let mut end_char = vec![NONE; n];
        let mut start_char = vec![NONE; n];
        let mut end_pre = vec![NONE; 16 << 6]; // b0 b1 of a three-byte character
        let mut start_suf = vec![NONE; 1 << 12]; // b1 b2
        let mut end2 = vec![NONE; 1 << 12];
        let mut start2 = vec![NONE; 1 << 12];
        let mut end3 = vec![NONE; 1 << 16];
        // For the first own merge of three-byte patterns: two-byte tokens b0b1 (b0 a
        // three-byte lead) and b1b2 (two continuation bytes); tokens ending with an ASCII byte
        // and a lead byte, or an ASCII byte and a three-byte character's first two bytes (the
        // lowest over every ASCII byte).
        let mut pre2 = vec![NONE; 16 << 6];
        let mut suf2 = vec![NONE; 1 << 12];
        let mut end_ascii2 = vec![NONE; 128 << 6];
        let mut end_ascii_pre = vec![NONE; 16 << 6];
        let mut end_ascii_char = vec![NONE; n];
        let mut cross3 = vec![0u64; 1 << 12];
        let mut cross2 = vec![0u64; 1 << 6];
        let mut token3_bits = vec![0u64; 1 << 10];
        let set = |bits: &mut [u64], i: usize| bits[i >> 6] |= 1 << (i & 63);
        let low = |v: &mut u32, r: u32| *v = (*v).min(r);
        // The characters that are tokens, with their ranks (one pass over the table; looking
        // up each of the 67,584 byte patterns instead cost about 10 ms of random probes).
        let mut is_char = Vec::new();
        for (t, r) in vocab.mergeable() {
            let len = t.len();
            if let Some((k, l)) = char_slot(t) {
                if l == len {
                    is_char.push((k, r));
                }
            }
            for i in 0..len - 1 {
                if t[i + 1] & 0xf0 == 0xe0 {
                    set(&mut cross2, cross2_index(t[i], t[i + 1]));
                    if i + 2 < len {
                        set(&mut cross3, cross3_index(t[i], t[i + 1], t[i + 2]));
                    }
                }
            }
            if len == 3 && t[0] & 0xf0 == 0xe0 {
                set(&mut token3_bits, pattern_index(t[0], t[1], t[2]));
            }
            if len == 2 {
                if t[0] & 0xf0 == 0xe0 && is_cont(t[1]) {
                    low(&mut pre2[pre_index(t[0], t[1])], r);
                } else if is_cont(t[0]) && is_cont(t[1]) {
                    low(&mut suf2[pair_index(t[0], t[1])], r);
                }
            }
            // Tokens ending with z P, z a continuation byte, P of one to three bytes.
            for p in 1..=3.min(len - 1) {
                let (z, tail) = (t[len - p - 1], &t[len - p..]);
                if z < 0x80 && is_lead(tail[0]) {
                    match p {
                        1 => low(&mut end_ascii2[ascii_index(z, tail[0])], r),
                        2 if tail[0] & 0xf0 == 0xe0 && is_cont(tail[1]) => {
                            low(&mut end_ascii_pre[pre_index(tail[0], tail[1])], r)
                        }
                        _ => {}
                    }
                    if let Some((k, l)) = char_slot(tail) {
                        if l == p {
                            low(&mut end_ascii_char[k], r);
                        }
                    }
                }
                if !is_cont(z) || !is_lead(tail[0]) {
                    continue;
                }
                match p {
                    1 => low(&mut end2[pair_index(z, tail[0])], r),
                    2 if tail[0] & 0xf0 == 0xe0 && is_cont(tail[1]) => {
                        low(&mut end_pre[pre_index(tail[0], tail[1])], r);
                        low(&mut end3[triple_index(z, tail[0], tail[1])], r);
                    }
                    _ => {}
                }
                if let Some((k, l)) = char_slot(tail) {
                    if l == p {
                        low(&mut end_char[k], r);
                    }
                }
            }
            // Tokens starting with S y, y a lead byte, S of one to three bytes.
            for s in 1..=3.min(len - 1) {
                let (head, y) = (&t[..s], t[s]);
                if !is_lead(y) {
                    continue;
                }
                match s {
                    1 if is_cont(head[0]) => low(&mut start2[pair_index(head[0], y)], r),
                    2 if is_cont(head[0]) && is_cont(head[1]) => low(&mut start_suf[pair_index(head[0], head[1])], r),
                    _ => {}
                }
                if let Some((k, l)) = char_slot(head) {
                    if l == s {
                        low(&mut start_char[k], r);
                    }
                }
            }
        }
        let mut slot = vec![0u32; n];
        // Half starts: every three-byte pattern with a first own merge, unless it is a token
        // ranked below that merge (the two parts would then join, as that token, before the
        // merge from bytes had made them; no real table has one).
        let mut token3 = vec![NONE; 1 << 16];
        for &(k, r) in &is_char {
            if k >= TWO {
                token3[k - TWO] = r;
            }
        }
        let mut half = vec![0u32; 1 << 16];
        for (k, h) in half.iter_mut().enumerate() {
            // k is a pattern_index: its top 10 bits are b0b1's pre_index, its low 12 b1b2's
            // pair_index.
            let (r01, r12) = (pre2[k >> 6], suf2[k & 0xfff]);
            let r1 = r01.min(r12);
            if r1 == NONE || token3[k] < r1 {
                continue;
            }
            let first2 = r01 < r12;
            let left_ascii = !first2 || end_ascii_pre[k >> 6] > r1;
            let right = first2 || start_suf[k & 0xfff] > r1;
            *h = r1 << RANK_SHIFT
                | HALF_VALID
                | if first2 { HALF_FIRST2 } else { 0 }
                | if left_ascii { HALF_LEFT_ASCII } else { 0 }
                | if right { HALF_RIGHT } else { 0 };
        }
        for (k, r) in is_char {
            // `left_exact`: rule 1 holds for the whole character after any continuation byte,
            // and its first two bytes' case is read for the exact byte before it (`end3`).
            let (left, left_exact, right, left_ascii) = if k < TWO {
                (end_char[k] > r, false, start_char[k] > r, end_ascii_char[k] > r)
            } else {
                let c = [0xe0 | ((k - TWO) >> 12) as u8, 0x80 | (((k - TWO) >> 6) & 0x3f) as u8, 0x80 | ((k - TWO) & 0x3f) as u8];
                // Its own merge gives c when one of its two pairs is a token: that pair
                // merges first, and the two parts left join into c. It must rank below c.
                let first = [vocab.rank(&c[..2]), vocab.rank(&c[1..])].into_iter().flatten().min();
                if !matches!(first, Some(f) if f < r) {
                    continue;
                }
                let pre = pre_index(c[0], c[1]);
                let whole = end_char[k] > r;
                (
                    whole && end_pre[pre] > r,
                    whole,
                    start_char[k] > r && start_suf[pair_index(c[1], c[2])] > r,
                    end_ascii_char[k] > r && end_ascii_pre[pre] > r,
                )
            };
            slot[k] = r << RANK_SHIFT
                | VALID
                | if left { LEFT } else if left_exact { LEFT_EXACT } else { 0 }
                | if right { RIGHT } else { 0 }
                | if left_ascii { LEFT_ASCII } else { 0 };
        }
        Some(Chars { slot, end2, start2, end3, half, end_ascii2, cross3, cross2, token3: token3_bits, pairs: OnceLock::new(), joins: OnceLock::new(), joins_deferred: AtomicUsize::new(0) })
    }

    /// The pair table of whole three-byte-character tokens of `vocab` (the vocabulary this
    /// table was built for), built on first use; `None` if the ranks do not fit it.
    #[inline]
    pub fn pairs(&self, vocab: &Vocab) -> Option<&Pairs> {
        self.pairs.get_or_init(|| Pairs::build(vocab)).as_ref()
    }

    /// The table of characters that stand side by side in tokens (cuts.rs) for `vocab` (the
    /// vocabulary this table was built for), for a piece of `piece_len` bytes worth cutting;
    /// `None` while building it would not pay yet. A large vocabulary builds it once
    /// [`JOINS_AFTER`] bytes of such pieces have gone uncut, a small one at once.
    #[inline]
    pub fn joins(&self, vocab: &Vocab, piece_len: usize) -> Option<&Joins> {
        if let Some(joins) = self.joins.get() {
            return Some(joins);
        }
        if vocab.max_rank() >= EAGER_RANKS && self.joins_deferred.fetch_add(piece_len, Ordering::Relaxed) < JOINS_AFTER {
            return None;
        }
        Some(self.joins.get_or_init(|| Joins::build(vocab)))
    }

    /// If the character at `piece[i..]` is sealed there, its length and rank.
    #[inline(always)]
    pub fn sealed_at(&self, piece: &[u8], i: usize) -> Option<(usize, u32)> {
        let (k, len) = char_slot(&piece[i..])?;
        let s = self.slot[k];
        if s & VALID == 0 {
            return None;
        }
        let r = s >> RANK_SHIFT;
        if i > 0 {
            let z = piece[i - 1];
            let sealed = if is_cont(z) {
                (s & LEFT != 0 || self.left_exact(s, z, &piece[i..], r)) && self.end2[pair_index(z, piece[i])] > r
            } else {
                // After an ASCII byte (a space or a Latin letter before the run).
                z < 0x80 && s & LEFT_ASCII != 0 && self.end_ascii2[ascii_index(z, piece[i])] > r
            };
            if !sealed {
                return None;
            }
        }
        let e = i + len;
        if e < piece.len() {
            let y = piece[e];
            if !is_lead(y) || s & RIGHT == 0 || self.start2[pair_index(piece[e - 1], y)] <= r {
                return None;
            }
        }
        Some((len, r))
    }

    /// Whether two parts of a piece, the left ending with byte `z` and the right starting with
    /// `right` (one or more bytes, the first a three-byte lead), may join into a token: false
    /// when no token holds z followed by the right part's first two bytes (or its one byte).
    /// A join of the two would be a token holding those bytes side by side, so false answers
    /// the pair's lookup (no token) from a 32 KB table instead of the vocabulary's indexes,
    /// which a piece's rounds wait on. On cl100k_base, which has few tokens of several CJK
    /// characters, it answers 37% of the pair lookups of Chinese and Japanese pieces that go to
    /// the vocabulary (a Python model of the merge over 200,000 characters of each corpus;
    /// o200k_base 16%).
    #[inline(always)]
    pub fn may_cross(&self, z: u8, right: &[u8]) -> bool {
        match right {
            [b0, b1, ..] => bit(&self.cross3, cross3_index(z, *b0, *b1)),
            [b0] => bit(&self.cross2, cross2_index(z, *b0)),
            [] => true,
        }
    }

    /// Whether the three bytes `b`, the first a three-byte lead, may be a token: false when
    /// none is. Answers the pair of a half-started character's two parts, which for a
    /// character that is no token would otherwise be looked up in the vocabulary.
    #[inline(always)]
    pub fn may_be_token3(&self, b: &[u8]) -> bool {
        bit(&self.token3, pattern_index(b[0], b[1], b[2]))
    }

    /// How the merge of `piece` starts at `piece[i]`, a lead byte: `(len, rank, len2, rank2)`,
    /// one part of `len` bytes (a sealed character, or the lone byte), or with `len2 > 0` two
    /// parts, the character's first own merge made ([`Chars::half_at`]).
    #[inline(always)]
    pub fn start_at(&self, vocab: &Vocab, piece: &[u8], i: usize) -> (usize, u32, usize, u32) {
        if let Some((len, r)) = self.sealed_at(piece, i) {
            return (len, r, 0, 0);
        }
        match self.half_at(piece, i) {
            Some((2, r1)) => (2, r1, 1, vocab.byte_rank(piece[i + 2])),
            Some((_, r1)) => (1, vocab.byte_rank(piece[i]), 2, r1),
            None => (1, vocab.byte_rank(piece[i]), 0, 0),
        }
    }

    /// If the three-byte pattern at `piece[i..]` may start as two parts, its first own merge
    /// made: the length of the first part (2 when that merge is b0b1, 1 when it is b1b2) and
    /// the merge's rank r1. The rule is rule 1-2's with r1 for R (module docs, "Half
    /// starts"): no token ending with the byte before and b0 (or b0b1, when that is the
    /// first part) ranks at or below r1, and none starting with b2 (or b1b2) and the byte
    /// after. Read exactly for a continuation byte before (`end2`, `end3`) and for a lead
    /// byte after (`start2`); for an ASCII byte before, `end_ascii2` exactly and b0b1 over
    /// every ASCII byte; b1b2 over every lead byte after.
    #[inline(always)]
    pub fn half_at(&self, piece: &[u8], i: usize) -> Option<(usize, u32)> {
        let c = piece.get(i..i + 3)?;
        if c[0] & 0xf0 != 0xe0 || !is_cont(c[1]) || !is_cont(c[2]) {
            return None;
        }
        let h = self.half[pattern_index(c[0], c[1], c[2])];
        if h & HALF_VALID == 0 {
            return None;
        }
        let r1 = h >> RANK_SHIFT;
        let first2 = h & HALF_FIRST2 != 0;
        if i > 0 {
            let z = piece[i - 1];
            let blocked = if is_cont(z) {
                self.end2[pair_index(z, c[0])] <= r1 || (first2 && self.end3[triple_index(z, c[0], c[1])] <= r1)
            } else if z < 0x80 {
                h & HALF_LEFT_ASCII == 0 || self.end_ascii2[ascii_index(z, c[0])] <= r1
            } else {
                true // a lead byte before a lead byte: not text, and no table covers it
            };
            if blocked {
                return None;
            }
        }
        if let Some(&y) = piece.get(i + 3) {
            if !is_lead(y) || h & HALF_RIGHT == 0 || self.start2[pair_index(c[2], y)] <= r1 {
                return None;
            }
        }
        Some((if first2 { 2 } else { 1 }, r1))
    }

    /// Rule 1 for a three-byte character `c` (slot bits `s`, rank `r`) whose slot has
    /// `LEFT_EXACT`, after the continuation byte `z`: no token ending with z and c's first two
    /// bytes ranks at or below `r`.
    #[inline(always)]
    fn left_exact(&self, s: u32, z: u8, c: &[u8], r: u32) -> bool {
        s & LEFT_EXACT != 0 && self.end3[triple_index(z, c[0], c[1])] > r
    }
}

#[cfg(test)]
mod tests {
    use crate::models::rank::merge::{merge_miss, merge_piece, merge_reference};
    use crate::vocab::Vocab;

    use crate::test_data::{cjk_piece, cjk_text, cjk_tokens, Rng};

    /// `s` merges as the definition says (`merge_reference`), through the engine's entry for
    /// any piece and, when `s` is no token, through its entry for misses. `tokens` names the
    /// table in a failure.
    fn merges_as_defined(v: &Vocab, s: &[u8], tokens: &impl std::fmt::Debug) {
        let want = merge_reference(v, s);
        let mut got = Vec::new();
        merge_piece(v, s, &mut got);
        assert_eq!(got, want, "{tokens:?} {s:?}");
        if v.rank(s).is_none() {
            let mut miss = Vec::new();
            merge_miss(v, s, &mut miss);
            assert_eq!(miss, want, "miss: {tokens:?} {s:?}");
        }
    }

    /// Random tables over a few two- and three-byte characters (and ASCII), whose tokens are
    /// whole characters, runs of them, and byte strings that cut characters anywhere (a lone
    /// lead byte after a character, a character's tail before the next one's head), at random
    /// ranks: so some characters are sealed, some are not, and some tables are no merge order.
    /// Pieces of 5 to 255 bytes of those characters (the linked and wide scans, which start
    /// from the sealed characters, and past 128 bytes `merge_wide_chars` or the walk) against
    /// the definition.
    #[test]
    fn sealed_characters_on_random_tables() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let alphabet: Vec<Vec<u8>> = ["中", "国", "人", "д", "я", "ğ", "ı", "ệ", "a", " ", "\u{301}", "あ"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let (mut sealed_seen, mut half_seen) = (0, 0);
        for round in 0..300 {
            let chars: Vec<Vec<u8>> = (0..2 + rng.below(5)).map(|_| alphabet[rng.below(alphabet.len())].clone()).collect();
            let text = |rng: &mut Rng, n: usize| -> Vec<u8> {
                let mut t = Vec::new();
                while t.len() < n {
                    t.extend_from_slice(&chars[rng.below(chars.len())]);
                }
                t
            };
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            for _ in 0..10 + rng.below(60) {
                let t = match rng.below(4) {
                    // A whole character, or a few.
                    0 | 1 => {
                        let k = 1 + rng.below(7);
                        text(&mut rng, k)
                    }
                    // Any slice of a run of characters: cuts characters at either end.
                    _ => {
                        let t = text(&mut rng, 12);
                        let (s, k) = (rng.below(6), 2 + rng.below(5));
                        t[s..s + k].to_vec()
                    }
                };
                if !tokens.contains(&t) && t.len() >= 2 {
                    tokens.push(t);
                }
            }
            if round % 3 == 0 {
                // A merge order of sorts.
                tokens.sort_by_key(|t| t.len());
            }
            let v = crate::test_data::byte_vocab(&tokens);
            let table = v.chars(1).unwrap();
            for _ in 0..30 {
                let n = [5, 9, 16, 17, 40, 128, 129, 200, 255][rng.below(9)];
                let mut s = text(&mut rng, n);
                // Cut at a byte (a piece may end or start inside a character when it is raw
                // bytes, not text).
                s.truncate(n);
                if rng.below(4) == 0 {
                    s.remove(0);
                }
                sealed_seen += (0..s.len()).filter(|&i| table.sealed_at(&s, i).is_some()).count();
                half_seen += (0..s.len()).filter(|&i| table.sealed_at(&s, i).is_none() && table.half_at(&s, i).is_some()).count();
                merges_as_defined(&v, &s, &tokens);
            }
        }
        assert!(sealed_seen > 1000, "the tables seal characters: {sealed_seen}");
        assert!(half_seen > 100, "the tables start characters half merged: {half_seen}");
    }

    /// Rule 1 after an ASCII byte: a token of a space and `て`'s lead byte ranks below `て`, so
    /// after a space the merge from bytes joins those first and `て` never forms; after a
    /// letter nothing crosses, and `て` is sealed there. A token of a space and the whole
    /// character ranked below it unseals it after every ASCII byte.
    #[test]
    fn after_an_ascii_byte_rule_one_is_read_too() {
        let tokens: Vec<&[u8]> = vec![b" \xe3", b"\xe3\x81", "て".as_bytes()];
        let v = crate::test_data::byte_vocab(&tokens);
        let te = v.rank("て".as_bytes()).unwrap();
        let table = v.chars(1).unwrap();
        assert_eq!(table.sealed_at("aて".as_bytes(), 1), Some((3, te)));
        assert_eq!(table.sealed_at(" て".as_bytes(), 1), None);
        assert_eq!(merge_reference(&v, " て".as_bytes()), vec![v.rank(b" \xe3").unwrap(), v.byte_rank(0x81), v.byte_rank(0xa6)]);
        for s in ["aてて", " てて", "abてててa", " てaて"] {
            merges_as_defined(&v, s.as_bytes(), &tokens);
        }
        let tokens: Vec<&[u8]> = vec![b"\xe3\x81", " て".as_bytes(), "て".as_bytes()];
        let v = crate::test_data::byte_vocab(&tokens);
        let table = v.chars(1).unwrap();
        assert_eq!(table.sealed_at(" て".as_bytes(), 1), None);
        assert_eq!(table.sealed_at("aて".as_bytes(), 1), None, "read for every ASCII byte at once");
        for s in ["aてて", " てて", " てaて"] {
            merges_as_defined(&v, s.as_bytes(), &tokens);
        }
    }

    /// Half starts: `中` and `丁` are no tokens, and their first own merge is `e4 b8` (rank
    /// r1). A token ending with `丁`'s last byte and a lead byte, and one of a space and a
    /// lead byte, rank below r1: after `丁` or a space the merge from bytes joins across the
    /// edge first (so `e4 b8` never forms there), and the character stays in bytes; after `中`
    /// or a letter it starts as `e4 b8` and its last byte.
    #[test]
    fn a_character_that_is_no_token_starts_from_its_first_merge() {
        let tokens: Vec<&[u8]> = vec![b" \xe4", b"\x81\xe4", b"\xe4\xb8"];
        let v = crate::test_data::byte_vocab(&tokens);
        let r1 = v.rank(b"\xe4\xb8").unwrap();
        let table = v.chars(1).unwrap();
        assert_eq!(table.sealed_at("中中".as_bytes(), 3), None);
        assert_eq!(table.half_at("中中".as_bytes(), 3), Some((2, r1)));
        assert_eq!(table.half_at("a中中".as_bytes(), 1), Some((2, r1)));
        assert_eq!(table.half_at("丁中".as_bytes(), 3), None);
        assert_eq!(table.half_at("丁中".as_bytes(), 0), None, "the token crossing into 中 starts with 丁's last byte");
        assert_eq!(table.half_at(" 中中".as_bytes(), 1), None);
        let crossing = v.rank(b"\x81\xe4").unwrap();
        assert_eq!(merge_reference(&v, "丁中".as_bytes()), vec![r1, crossing, v.byte_rank(0xb8), v.byte_rank(0xad)]);
        for s in ["中中", "丁中", "中丁中", "丁丁中中", "a中中", " 中中", " 中丁中", "中中 中中"] {
            merges_as_defined(&v, s.as_bytes(), &tokens);
        }
    }

    /// Rule 1 for a character's first two bytes is read for the byte before it. A table like
    /// cl100k_base's around hiragana: `e3 81`, `し`, `の`, then `し` followed by `e3 81`, then
    /// `て`. The fourth token ends with `し`'s last byte and `て`'s first two bytes and ranks
    /// below `て`, so `て` stays in bytes after `し` (there the merge makes that token first
    /// and `て` never forms: ids 259 and `a6`'s byte) and is sealed after `の`, where no
    /// token crosses.
    #[test]
    fn a_token_across_one_neighbour_unseals_only_there() {
        let tokens: Vec<&[u8]> = vec![b"\xe3\x81", "し".as_bytes(), "の".as_bytes(), b"\xe3\x81\x97\xe3\x81", "て".as_bytes()];
        let v = crate::test_data::byte_vocab(&tokens);
        let te = v.rank("て".as_bytes()).unwrap();
        let table = v.chars(1).unwrap();
        assert_eq!(table.sealed_at("のて".as_bytes(), 3), Some((3, te)));
        assert_eq!(table.sealed_at("して".as_bytes(), 3), None);
        let crossing = v.rank(b"\xe3\x81\x97\xe3\x81").unwrap();
        assert_eq!(merge_reference(&v, "して".as_bytes()), vec![crossing, v.byte_rank(0xa6)]);
        for s in ["して", "のて", "のしてのて", "てのてして", "ののてて"] {
            merges_as_defined(&v, s.as_bytes(), &tokens);
        }
    }

    /// [`Chars::may_cross`] never says no where a token holds the bytes (every token, at every
    /// three-byte lead inside it), nor [`Chars::may_be_token3`] for a three-byte token, and
    /// `may_cross` says no often on text of tables with few such tokens:
    /// the random tables of `sealed_characters_on_random_tables`' kind and, when
    /// `BYTEPAIR_VOCAB_DIR` has them, the real ones.
    #[test]
    fn the_crossing_filter_never_hides_a_token() {
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        let cjk: Vec<Vec<u8>> = ["中", "国", "人", "大", "学", "的", "。", "あ", "한"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let other: Vec<Vec<u8>> = ["a", " ", "д"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let (mut said_no, mut asked) = (0, 0);
        let check = |v: &Vocab, tokens: &[Vec<u8>]| {
            let table = v.chars(1).unwrap();
            for t in tokens {
                if t.len() == 3 && t[0] & 0xf0 == 0xe0 {
                    assert!(table.may_be_token3(t), "{t:?}");
                }
                for i in 0..t.len().saturating_sub(1) {
                    if t[i + 1] & 0xf0 == 0xe0 {
                        for k in 1..=2.min(t.len() - i - 1) {
                            assert!(table.may_cross(t[i], &t[i + 1..i + 1 + k]), "{t:?} at {i}, {k} bytes");
                        }
                    }
                }
            }
        };
        for round in 0..100 {
            let chars: Vec<Vec<u8>> = (0..3 + rng.below(6)).map(|_| cjk[rng.below(cjk.len())].clone()).collect();
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            cjk_tokens(&mut rng, &chars, &other, round, &mut tokens);
            let v = crate::test_data::byte_vocab(&tokens);
            check(&v, &tokens);
            let table = v.chars(1).unwrap();
            let s = cjk_piece(&mut rng, &chars, &other, 255, 12);
            for i in 1..s.len() {
                if s[i] & 0xf0 == 0xe0 {
                    asked += 1;
                    said_no += !table.may_cross(s[i - 1], &s[i..(i + 2).min(s.len())]) as usize;
                }
            }
        }
        assert!(said_no > asked / 20, "the filter answers: {said_no} of {asked}");
        for name in ["cl100k_base", "o200k_base"] {
            let Some(path) = crate::test_data::require("BYTEPAIR_VOCAB_DIR", &format!("{name}.tiktoken")) else { return };
            let ranks = crate::formats::tiktoken::parse(&std::fs::read(&path).unwrap()).unwrap();
            let v = Vocab::new(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), []).unwrap();
            let _ = v.chars(1 << 30);
            let tokens: Vec<Vec<u8>> = ranks.iter().map(|(b, _)| b.clone()).collect();
            check(&v, &tokens);
        }
    }

    /// [`Pairs`]: tables whose tokens are mostly whole three-byte characters and words of two
    /// to six of them (plus byte strings that cut characters, two-byte characters and ASCII),
    /// at random ranks (a third sorted by length). The pair table answers every pair of such
    /// tokens as the vocabulary does, and pieces of 5-255 bytes of those characters, words
    /// and a little ASCII merge as the definition says (to 1,024 bytes: `merge_wide_chars_long`
    /// and past it the walk).
    #[test]
    fn pairs_of_whole_characters_on_random_tables() {
        use super::whole3;
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let cjk: Vec<Vec<u8>> = ["中", "国", "人", "大", "学", "生", "的", "是", "。", "，", "あ", "한"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let other: Vec<Vec<u8>> = ["a", " ", "д", "1"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let mut pairs_hit = 0;
        for round in 0..200 {
            let chars: Vec<Vec<u8>> = (0..3 + rng.below(8)).map(|_| cjk[rng.below(cjk.len())].clone()).collect();
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            cjk_tokens(&mut rng, &chars, &other, round, &mut tokens);
            let v = crate::test_data::byte_vocab(&tokens);
            let table = v.chars(1).unwrap();
            let pairs = table.pairs(&v).unwrap();
            // Every pair of tokens of whole three-byte characters, against the vocabulary.
            let w3: Vec<&Vec<u8>> = tokens.iter().filter(|t| whole3(t)).collect();
            for a in &w3 {
                for b in &w3 {
                    let want = v.rank(&[a.as_slice(), b.as_slice()].concat()).unwrap_or(u32::MAX);
                    let got = pairs.get(v.rank(a).unwrap(), v.rank(b).unwrap());
                    assert_eq!(got, want, "{a:?} {b:?}");
                    pairs_hit += (got != u32::MAX) as usize;
                }
            }
            for k in 0..42 {
                // Past 255 bytes `merge_wide_chars_long` (two pieces a table: the definition
                // is quadratic).
                let n = if k >= 40 { [256, 300, 700, 1023, 1024][rng.below(5)] } else { [5, 9, 16, 17, 33, 64, 128, 129, 200, 255][rng.below(10)] };
                let s = cjk_piece(&mut rng, &chars, &other, n, 12);
                merges_as_defined(&v, &s, &tokens);
            }
        }
        assert!(pairs_hit > 1000, "the tables have pairs: {pairs_hit}");
    }

    /// The real tables (when `BYTEPAIR_VOCAB_DIR` has them): CJK text built from the tables' own
    /// words of whole three-byte characters, random CJK code points, CJK and ASCII punctuation,
    /// spaces and Latin letters, cut into pieces of 2-1100 bytes (also inside a character):
    /// the merge, which asks [`Pairs`], against the bucket engine, which does not.
    #[test]
    fn real_tables_cjk_pieces_against_the_bucket_engine() {
        use super::whole3;
        for name in ["cl100k_base", "o200k_base"] {
            let Some(path) = crate::test_data::require("BYTEPAIR_VOCAB_DIR", &format!("{name}.tiktoken")) else { return };
            let data = std::fs::read(&path).unwrap();
            let ranks = crate::formats::tiktoken::parse(&data).unwrap();
            let v = Vocab::new(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), []).unwrap();
            let words: Vec<&[u8]> = ranks.iter().map(|(b, _)| b.as_slice()).filter(|b| whole3(b)).collect();
            // The first request only counts toward the build (`LazyChars`); this one builds.
            let _ = v.chars(1 << 30);
            assert!(v.chars(1).and_then(|c| c.pairs(&v)).is_some(), "{name}: built");
            let mut rng = Rng(0x853c_49e6_748f_ea9b);
            let text = cjk_text(&mut rng, &words, 400_000);
            let mut i = 0;
            let mut pieces = 0;
            while i + 2 < text.len() {
                // Mostly up to 255 bytes, one piece in eight 256-1100 (`merge_wide_chars_long`
                // to 1023 bytes, then the walk).
                let n = if rng.below(8) == 0 { 256 + rng.below(845) } else { 2 + rng.below(254) };
                let n = n.min(text.len() - i);
                let s = &text[i..i + n];
                i += n;
                let (mut got, mut want) = (Vec::new(), Vec::new());
                crate::models::rank::merge::encode_piece(&v, s, &mut got);
                crate::models::rank::bucket::merge_buckets(&v, s, &mut want);
                if v.rank(s).is_none() {
                    assert_eq!(got, want, "{name}: {:?}", String::from_utf8_lossy(s));
                    let mut miss = Vec::new();
                    merge_miss(&v, s, &mut miss);
                    assert_eq!(miss, want, "{name} miss: {:?}", String::from_utf8_lossy(s));
                }
                pieces += 1;
            }
            eprintln!("{name}: {pieces} CJK pieces agree");
        }
    }
}
