//! Rank BPE, exactly as tiktoken defines it.
//!
//! Definition: split the piece into single bytes; while some adjacent pair's concatenation is a
//! token, merge the pair with the lowest rank (the leftmost such pair on a tie); emit the ranks
//! of the parts.
//!
//! Three paths, fastest first:
//! 1. the whole piece is a token (most pieces of real text): one hash lookup;
//! 2. short pieces: tiktoken's scan for the lowest pair each round, O(n^2) in the piece length
//!    but with everything in cache, which beats any heap for n below [`SMALL`]. Up to 16 bytes
//!    (nearly every piece that misses) parts are linked in place and never moved
//!    ([`merge_linked`]); 17-128 bytes the same links over the piece's own width, with block
//!    minimums past 32 bytes ([`merge_wide`]). A caller that has already looked the whole
//!    piece up says so ([`merge_miss`]) and the lookup is not repeated; a three-byte piece
//!    that is no token is then two pair lookups and a choice ([`merge_three`]), a four-byte
//!    one five lookups and selects ([`merge_four`]);
//! 3. long pieces: [`super::backtrack`], a longest-match walk that backtracks (linear), with
//!    [`super::bucket`] (rank buckets, near-linear) as its fallback.

use crate::models::Sink;
use super::chars::{Chars, Pairs};
use super::cuts::{merge_cut, worth_cutting};
use crate::vocab::Vocab;

/// Pieces up to this many bytes take the quadratic scan.
pub const SMALL: usize = 128;

const NONE: u32 = u32::MAX;

/// Encodes one piece into `out`.
#[inline]
pub fn encode_piece<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() == 1 {
        out.push(vocab.byte_rank(piece[0]));
    } else if let Some(rank) = (piece.len() <= vocab.max_token_len()).then(|| vocab.rank(piece)).flatten() {
        out.push(rank);
    } else {
        merge_piece(vocab, piece, out);
    }
}

/// Merges a piece of at least two bytes that is not itself a token.
#[inline]
pub fn merge_piece<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() <= SMALL {
        merge_small::<S, false, false>(vocab, piece, out);
    } else if mostly_chars(piece) {
        merge_wide_chars::<S, false>(vocab, piece, out);
    } else if mostly_chars_long(piece) {
        merge_wide_chars_long::<S, false>(vocab, piece, out);
    } else {
        super::backtrack::merge_long(vocab, piece, out);
    }
}

/// [`merge_piece`] for a piece of at least two bytes that is known not to be a token (the
/// caller looked it up whole, or it is longer than any token). Knowing that saves the lookup
/// of the whole piece: a two-byte piece is its two bytes, and a piece down to two parts is
/// done. (`merge_piece` itself stays the definition for any bytes: the backtracking walk
/// calls it on pairs of tokens that may join into a token.)
///
/// Out of line, with the short pieces in a function of their own ([`merge_short_miss`]), so
/// that it keeps the shape LLVM gave it before the three- and four-byte paths: a dispatch with
/// the long-piece walk inlined. With those paths inlined here it was inlined into the piece
/// cache, whose code grew from 1.3-1.8 KB to 10-16 KB (plain-build A/B: English 1-2% slower;
/// docs/engine-experiments.md, "Fifth pass").
#[inline(never)]
pub fn merge_miss<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    // A long piece of CJK characters is first cut where no merge can cross (cuts.rs), once
    // the sealed-character table exists (the merges below build it when it pays). The
    // segments then merge here, not through the piece cache: sending them through its inline
    // table measured no faster (docs/engine-experiments.md, "Thirteenth pass").
    if worth_cutting(piece) {
        if let Some(chars) = vocab.chars_built() {
            if merge_cut(vocab, chars, piece, out) {
                return;
            }
        }
    }
    merge_uncut(vocab, piece, out)
}

/// [`merge_miss`] without trying the cuts: the merge of each segment of a cut piece.
#[inline]
pub(crate) fn merge_uncut<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() <= SMALL {
        merge_short_miss::<S, false>(vocab, piece, out)
    } else if mostly_chars(piece) {
        merge_wide_chars::<S, true>(vocab, piece, out)
    } else if mostly_chars_long(piece) {
        merge_wide_chars_long::<S, true>(vocab, piece, out)
    } else {
        super::backtrack::merge_long(vocab, piece, out);
    }
}

/// Whether a piece of more than [`SMALL`] bytes goes to [`merge_wide_chars`]: at most
/// [`WIDE_CHARS`] bytes, and at least a quarter of them lead bytes of multi-byte characters
/// (CJK text is a third, Cyrillic a half), so that sealed characters can cut the parts to
/// well under the byte count. Other long pieces (runs of one letter, base64) keep the walk.
#[inline]
fn mostly_chars(piece: &[u8]) -> bool {
    piece.len() <= WIDE_CHARS && 4 * piece.iter().filter(|&&b| b >= 0xc0).count() >= piece.len()
}

/// The same for pieces of [`WIDE_CHARS`] + 1 ..= [`WIDE_CHARS_LONG`] bytes
/// ([`merge_wide_chars_long`]).
#[inline]
fn mostly_chars_long(piece: &[u8]) -> bool {
    piece.len() <= WIDE_CHARS_LONG && 4 * piece.iter().filter(|&&b| b >= 0xc0).count() >= piece.len()
}

/// [`merge_miss`] for pieces that do not repeat (the piece cache's bypass mode: random
/// letters, base64). Their pair lookups of up to 7 bytes read a window of the short index with
/// no branch on the outcome (`Vocab::rank_word_or_none`): on such text which pairs are tokens
/// is what the branch predictor cannot guess, and the probe loop's exit was the merge's
/// largest source of mispredicts. On real text, where it mostly can guess, the window's wait
/// for all its slots cost more than it saved (docs/engine-experiments.md, "Fifth pass").
#[inline(never)]
pub fn merge_miss_unpredictable<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() <= SMALL {
        merge_short_miss::<S, true>(vocab, piece, out)
    } else {
        // (Not reached from the piece cache, which takes longer pieces to `merge_miss`.)
        merge_miss(vocab, piece, out)
    }
}

/// [`merge_miss`] of a piece of 2..=[`SMALL`] bytes.
#[inline(never)]
fn merge_short_miss<S: Sink, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    if n == 2 {
        out.push(vocab.byte_rank(piece[0]));
        out.push(vocab.byte_rank(piece[1]));
    } else if n == 3 {
        merge_three::<S, WINDOWED>(vocab, piece, out);
    } else if n == 4 {
        merge_four::<S, WINDOWED>(vocab, piece, out);
    } else {
        merge_small::<S, true, WINDOWED>(vocab, piece, out);
    }
}

/// A three-byte piece that is no token: one merge at most, then two parts are left. The
/// lower-ranked of the two pairs merges (the left one on a tie: "aaa"), or neither is a token.
/// A third of the pieces of random letters that miss (o200k), and the linked scan's set-up
/// (arrays, padding, a round, the output loop) cost twice the two lookups
/// (docs/engine-experiments.md, "Fifth pass").
#[inline(always)]
fn merge_three<S: Sink, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let (a, b, c) = (piece[0], piece[1], piece[2]);
    let left = rank_word::<WINDOWED>(vocab, u16::from_le_bytes([a, b]) as u64, 2);
    let right = rank_word::<WINDOWED>(vocab, u16::from_le_bytes([b, c]) as u64, 2);
    let (ra, rc) = (vocab.byte_rank(a), vocab.byte_rank(c));
    if left.min(right) == NONE {
        out.push(ra);
        out.push(vocab.byte_rank(b));
        out.push(rc);
    } else {
        // Selects, not branches: which pair wins is what the predictor cannot know.
        let take_left = left <= right;
        out.push(if take_left { left } else { ra });
        out.push(if take_left { rc } else { right });
    }
}

/// A four-byte piece that is no token: at most two merges (then two parts are left), written
/// out with selects. The first merge is the lowest of the three byte pairs (leftmost on a
/// tie); the second is between the merged part and a neighbour, or the other byte pair, so
/// both three-byte strings are looked up whenever there was a first merge (one of the two
/// answers may go unused).
#[inline(always)]
fn merge_four<S: Sink, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let word = u32::from_le_bytes([piece[0], piece[1], piece[2], piece[3]]) as u64;
    let look = |w: u64, len: usize| rank_word::<WINDOWED>(vocab, w, len);
    let (ab, bc, cd) = (look(word, 2), look(word >> 8, 2), look(word >> 16, 2));
    let [ra, rb, rc, rd] = [0, 1, 2, 3].map(|i| vocab.byte_rank(piece[i]));
    if ab.min(bc).min(cd) == NONE {
        out.extend(&[ra, rb, rc, rd]);
        return;
    }
    // The first merge: at p = 0, 1 or 2.
    let p = if ab <= bc && ab <= cd { 0 } else if bc <= cd { 1 } else { 2 };
    let (abc, bcd) = (look(word, 3), look(word >> 8, 3));
    // The three parts, and the ranks of the pairs between them.
    let p0 = if p == 0 { ab } else { ra };
    let p1 = if p == 0 { rc } else if p == 1 { bc } else { rb };
    let p2 = if p == 2 { cd } else { rd };
    let left = if p == 2 { ab } else { abc };
    let right = if p == 0 { cd } else { bcd };
    if left.min(right) == NONE {
        out.extend(&[p0, p1, p2]);
    } else {
        let take_left = left <= right;
        out.push(if take_left { left } else { p0 });
        out.push(if take_left { p2 } else { right });
    }
}

/// The quadratic scan for short pieces, in stack arrays sized for the piece: most missed
/// pieces are under 16 bytes, and clearing a 128-entry array per piece would cost more than the
/// merging. `MISS`: the whole piece is known not to be a token. `WINDOWED`: pair lookups of up
/// to 7 bytes without a branch on their outcome ([`merge_miss_unpredictable`]).
#[inline]
fn merge_small<S: Sink, const MISS: bool, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    if n <= 8 {
        merge_linked::<8, S, MISS, WINDOWED>(vocab, piece, &pad_small(piece), out)
    } else if n <= LINKED {
        merge_linked::<LINKED, S, MISS, WINDOWED>(vocab, piece, &pad_small(piece), out)
    } else {
        merge_wide::<S, MISS>(vocab, piece, out)
    }
}

/// Pieces of 17..=[`SMALL`] bytes: the linked parts of [`merge_linked`], with the minimum taken
/// over the piece's own width (rounded up to 8) in four independent chains, and past 32 bytes
/// over the minimums of blocks of 8 keys. It replaced tiktoken's shifting arrays (three
/// `memmove` calls and a scan of every pair per round): on the distinct missed pieces of
/// 17-32 bytes of German text, 1.3x (docs/engine-experiments.md, "Fourth pass"). Out of line: these
/// pieces are rare, and the encoder's loop stays smaller.
#[inline(never)]
fn merge_wide<S: Sink, const MISS: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    merge_wide_in::<u8, S, MISS, { SMALL + 1 }, { SMALL + 16 }, { SMALL / 8 }>(vocab, piece, out)
}

/// Pieces of 129..=[`WIDE_CHARS`] bytes that hold multi-byte characters: [`merge_wide`] in
/// arrays twice the size. Sealed characters (models/rank/chars.rs) leave a CJK piece of 255
/// bytes about 85 parts, and the scan over block minimums stays cheaper than the backtracking
/// walk, whose table (built on first use) is not needed for such text at all.
#[inline(never)]
pub(crate) fn merge_wide_chars<S: Sink, const MISS: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    merge_wide_in::<u8, S, MISS, { WIDE_CHARS + 1 }, { WIDE_CHARS + 1 + 16 }, { (WIDE_CHARS + 1) / 8 }>(vocab, piece, out)
}

/// Longest piece [`merge_wide_chars`] takes: the links are bytes.
pub const WIDE_CHARS: usize = 255;

/// Pieces of 256..=[`WIDE_CHARS_LONG`] bytes that hold multi-byte characters: the same scan
/// with 16-bit links, so that such a piece does not build the backtracking walk's table (a
/// quarter to half a second on first use for o200k_base; zh-fortunes has nine pieces of 259
/// bytes, and its first encode paid the whole build for them). The rounds read up to 128
/// block minimums, which for pieces this rare costs less than the build; longer pieces keep
/// the walk, which is linear.
#[inline(never)]
pub(crate) fn merge_wide_chars_long<S: Sink, const MISS: bool>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    merge_wide_in::<u16, S, MISS, { WIDE_CHARS_LONG + 1 }, { WIDE_CHARS_LONG + 1 + 16 }, { (WIDE_CHARS_LONG + 1) / 8 }>(vocab, piece, out)
}

/// Longest piece [`merge_wide_chars_long`] takes.
pub const WIDE_CHARS_LONG: usize = 1023;

/// A part link: `u8` for pieces of at most 255 bytes, `u16` for [`merge_wide_chars_long`].
trait Link: Copy {
    /// The sentinel "no part" (the previous part of the first one).
    const NIL: Self;
    fn of(i: usize) -> Self;
    fn get(self) -> usize;
}
impl Link for u8 {
    const NIL: u8 = u8::MAX;
    #[inline(always)]
    fn of(i: usize) -> u8 {
        i as u8
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}
impl Link for u16 {
    const NIL: u16 = u16::MAX;
    #[inline(always)]
    fn of(i: usize) -> u16 {
        i as u16
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// The wide scan in arrays of `CAP` parts (at least the piece's length plus one), a copy of
/// the piece in `BUF` = `CAP + 15` or more bytes, and `BLOCKS` = `CAP / 8` block minimums.
#[inline(always)]
fn merge_wide_in<L: Link, S: Sink, const MISS: bool, const CAP: usize, const BUF: usize, const BLOCKS: usize>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    debug_assert!(n >= 2 && n < CAP && BUF >= n + 16 && BLOCKS * 8 >= n);
    // The piece followed by 16 readable bytes: every pair of up to 15 bytes is keyed from one
    // or two loads (`Vocab::rank_in`).
    let mut buf = [0u8; BUF];
    buf[..n].copy_from_slice(piece);
    let mut tok = [0u32; CAP];
    let mut next = [L::NIL; CAP];
    let mut prev = [L::NIL; CAP];
    let mut key = [u64::MAX; CAP];
    let w = (n + 7) & !7;
    // The first parts: single bytes, except two- and three-byte characters that are sealed
    // where they stand (models/rank/chars.rs: the merge from them gives the same tokens), which
    // start whole. On CJK text that is about a third of the rounds.
    let chars = if 4 * piece.iter().filter(|&&b| b >= 0xc0).count() >= n { vocab.chars(n) } else { None };
    let mut whole3 = [0u8; CAP];
    let (mut parts, side_by_side, cross) = first_parts(vocab, chars, piece, &mut tok, &mut next, &mut prev, &mut whole3);
    // Pairs of parts that are both whole three-byte characters (or words of them) are asked
    // of the small pair table, the rest of the vocabulary (chars.rs, `Pairs`); only pieces
    // that start with two such characters side by side ask for the table.
    let pairs: Option<&Pairs> = if side_by_side { chars.and_then(|c| c.pairs(vocab)) } else { None };
    let mut p = 0;
    while p < n {
        let q = next[p].get();
        if q < n {
            key[p] = at(pair_rank(vocab, cross, pairs, &buf, &tok, &whole3, p, q, next[q].get()), p);
        }
        p = q;
    }
    // Over 32 bytes, the minimum of each block of 8 keys is kept too, so a round reads the
    // block minimums and recomputes the (at most three) blocks it changed, instead of
    // reading every key: runs such as a line of 70 `*` take about 70 rounds.
    let blocked = w > 32;
    let mut block = [u64::MAX; BLOCKS];
    if blocked {
        for (b, m) in block[..w / 8].iter_mut().enumerate() {
            *m = lowest(&key[8 * b..8 * b + 8]);
        }
    }
    loop {
        let best = if blocked { lowest(&block[..(w / 8 + 3) & !3]) } else { lowest(&key[..w]) };
        let r = (best >> 32) as u32;
        if r == NONE {
            break;
        }
        let p = (best & 0xffff) as usize;
        let q = next[p].get();
        let nr = next[q].get();
        tok[p] = r;
        key[q] = u64::MAX;
        next[p] = L::of(nr);
        parts -= 1;
        if parts == 1 || (MISS && parts == 2) {
            break;
        }
        if pairs.is_some() {
            whole3[p] = joined_whole3(&buf, p, nr, whole3[p] & whole3[q] != 0);
        }
        if nr < n {
            prev[nr] = L::of(p);
            let e = next[nr].get();
            key[p] = at(pair_rank(vocab, cross, pairs, &buf, &tok, &whole3, p, nr, e), p);
        } else {
            key[p] = u64::MAX;
        }
        let l = prev[p].get();
        if p > 0 {
            key[l] = at(pair_rank(vocab, cross, pairs, &buf, &tok, &whole3, l, p, nr), l);
        }
        if blocked {
            for b in [q / 8, p / 8, l.min(p) / 8] {
                block[b] = lowest(&key[8 * b..8 * b + 8]);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(tok[i]);
        i = next[i].get();
    }
}

/// Links the first parts of `piece` (2..=[`WIDE_CHARS_LONG`] bytes) in `tok`/`next`/`prev` and returns how
/// many there are: single bytes, and with `chars` the two- and three-byte characters sealed
/// where they stand (models/rank/chars.rs), whole, and three-byte characters that start from
/// their first own merge in two parts. A sealed three-byte character is marked in `whole3`
/// (the part is a token of whole three-byte characters: its pairs with other such parts are
/// asked of [`Pairs`]). Returns how many parts, whether two such characters are side by side,
/// and the crossing filter's table ([`no_join`]) when a part starts with a lead byte of three
/// or four bytes, else `None`: its test on every pair cost Cyrillic pieces a few percent for
/// nothing.
#[inline(always)]
fn first_parts<'a, L: Link>(vocab: &Vocab, chars: Option<&'a Chars>, piece: &[u8], tok: &mut [u32], next: &mut [L], prev: &mut [L], whole3: &mut [u8]) -> (usize, bool, Option<&'a Chars>) {
    let n = piece.len();
    let mut parts = 0;
    let mut i = 0;
    let mut last = L::NIL;
    let (mut last3, mut side_by_side, mut has3) = (false, false, false);
    while i < n {
        let (len, r, len2, r2) = match chars {
            // Three-byte characters may also start half merged; two-byte ones only sealed.
            Some(c) if piece[i] >= 0xe0 => {
                has3 = true;
                c.start_at(vocab, piece, i)
            }
            Some(c) if piece[i] >= 0xc0 => match c.sealed_at(piece, i) {
                Some((len, r)) => (len, r, 0, 0),
                None => (1, vocab.byte_rank(piece[i]), 0, 0),
            },
            _ => (1, vocab.byte_rank(piece[i]), 0, 0),
        };
        tok[i] = r;
        prev[i] = last;
        next[i] = L::of(i + len);
        // A sealed character of three bytes is one (its lead is 0xe0-0xef).
        whole3[i] = (len == 3) as u8;
        side_by_side |= last3 & (len == 3);
        last3 = len == 3;
        last = L::of(i);
        parts += 1;
        i += len;
        if len2 > 0 {
            // The rest of a character started from its first own merge: no part of it is a
            // whole character.
            tok[i] = r2;
            prev[i] = last;
            next[i] = L::of(i + len2);
            whole3[i] = 0;
            last3 = false;
            last = L::of(i);
            parts += 1;
            i += len2;
        }
    }
    (parts, side_by_side, if has3 { chars } else { None })
}

/// The rank of the pair of parts `p..q` and `q..e` of the wide scan's copy `buf`, or
/// [`NONE`]: from the pair table when both parts are whole three-byte characters (`whole3`),
/// else, unless `chars` (the crossing filter, [`no_join`]) rules the join out, from the
/// vocabulary. A function, not a closure: LLVM left the closures out of line.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pair_rank<const BUF: usize, const CAP: usize>(vocab: &Vocab, chars: Option<&Chars>, pairs: Option<&Pairs>, buf: &[u8; BUF], tok: &[u32; CAP], whole3: &[u8; CAP], p: usize, q: usize, e: usize) -> u32 {
    if let Some(t) = pairs {
        if whole3[p] & whole3[q] != 0 {
            return t.get(tok[p], tok[q]);
        }
    }
    if let Some(c) = chars {
        if no_join(c, buf, p, q, e) {
            return NONE;
        }
    }
    if e - p > vocab.max_token_len() {
        NONE
    } else {
        vocab.rank_in(buf, p, e).unwrap_or(NONE)
    }
}

/// Whether the parts `buf[p..q]` and `buf[q..e]` of a piece with sealed characters surely do
/// not join into a token, from the small tables of chars.rs: the right part starts with a
/// three-byte lead and no token holds the bytes around the join (`may_cross`), or the two are
/// one three-byte pattern that is no token (`may_be_token3`: a half-started character's two
/// parts). Either saves a lookup in the vocabulary's indexes, which the rounds wait on.
#[inline(always)]
fn no_join(chars: &Chars, buf: &[u8], p: usize, q: usize, e: usize) -> bool {
    if buf[q] & 0xf0 == 0xe0 {
        !chars.may_cross(buf[q - 1], &buf[q..e.min(q + 2)])
    } else {
        e - p == 3 && buf[p] & 0xf0 == 0xe0 && !chars.may_be_token3(&buf[p..e])
    }
}

/// [`pair_rank`] for the linked scan (pieces of at most [`LINKED`] bytes).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pair_linked<const WINDOWED: bool>(vocab: &Vocab, chars: Option<&Chars>, pairs: Option<&Pairs>, piece: &[u8], buf: &[u8; LINKED + 8], tok: &[u32; LINKED + 1], whole3: &[u8; LINKED + 1], p: usize, q: usize, e: usize) -> u32 {
    if let Some(t) = pairs {
        if whole3[p] & whole3[q] != 0 {
            return t.get(tok[p], tok[q]);
        }
    }
    if let Some(c) = chars {
        if no_join(c, buf, p, q, e) {
            return NONE;
        }
    }
    rank_of::<_, WINDOWED>(vocab, piece, buf, p, e)
}

/// Whether the part `buf[p..e]` just made by a merge is a token of whole three-byte
/// characters, given whether its two halves were (`both`): two such halves, or exactly one
/// three-byte character (the bytes of an unsealed character joined). Anything else is marked
/// no, which only sends its pairs to the vocabulary: always exact.
#[inline(always)]
fn joined_whole3(buf: &[u8], p: usize, e: usize, both: bool) -> u8 {
    let one = e - p == 3 && buf[p] & 0xf0 == 0xe0 && buf[p + 1] & 0xc0 == 0x80 && buf[p + 2] & 0xc0 == 0x80;
    (both | one) as u8
}

/// Whether at least a quarter of the padded piece's `n` bytes are 0xc0 or more (lead bytes of
/// multi-byte characters): three word operations and a popcount, no loop. Below that (a Latin
/// word with an accent or two) few characters have a multi-byte neighbour, which sealing
/// needs, and the plain start costs less.
#[inline(always)]
fn mostly_leads(buf: &[u8; LINKED + 8], n: usize) -> bool {
    let w = |k: usize| u64::from_le_bytes(buf[8 * k..8 * k + 8].try_into().unwrap());
    // A byte is 0xc0 or more when its top two bits are set: bit 7 and (bit 6 shifted up).
    let leads = |x: u64| (x & (x << 1) & 0x8080_8080_8080_8080).count_ones() as usize;
    4 * (leads(w(0)) + leads(w(1)) + leads(w(2))) >= n
}

/// The rank of the first `n` (1..=7) bytes of `word`, or [`NONE`]; `WINDOWED`: with no branch
/// on the outcome (`Vocab::rank_word_or_none`). A function, not a closure in its callers:
/// LLVM left such closures out of line, a call per lookup.
#[inline(always)]
fn rank_word<const WINDOWED: bool>(vocab: &Vocab, word: u64, n: usize) -> u32 {
    if WINDOWED {
        vocab.rank_word_or_none(word, n)
    } else {
        vocab.rank_word(word, n).unwrap_or(NONE)
    }
}

/// The rank of `piece[s..e]`, with `buf` the piece followed by readable bytes.
#[inline(always)]
fn rank_of<const L: usize, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], buf: &[u8; L], s: usize, e: usize) -> u32 {
    if e - s <= 7 {
        rank_word::<WINDOWED>(vocab, u64::from_le_bytes(buf[s..s + 8].try_into().unwrap()), e - s)
    } else {
        vocab.rank(&piece[s..e]).unwrap_or(NONE)
    }
}

/// A pair's key: its rank, then where its left part starts (the leftmost wins a tie).
#[inline(always)]
fn at(rank: u32, p: usize) -> u64 {
    (rank as u64) << 32 | p as u64
}

/// The lowest of `key` (a multiple of 4 long), in four independent chains of minimums.
#[inline(always)]
fn lowest(key: &[u64]) -> u64 {
    let mut m = [u64::MAX; 4];
    for c in key.chunks_exact(4) {
        for j in 0..4 {
            m[j] = m[j].min(c[j]);
        }
    }
    m[0].min(m[1]).min(m[2].min(m[3]))
}

/// Pieces of at most [`LINKED`] bytes: [`merge_linked`].
const LINKED: usize = 16;

/// The piece (2..=[`LINKED`] bytes) followed by zero bytes, so that every part or pair of up to
/// 7 bytes is keyed from one load with no branch on its length. Two overlapping fixed-size
/// copies instead of a `memcpy` call of a variable length.
#[inline(always)]
fn pad_small(piece: &[u8]) -> [u8; LINKED + 8] {
    let n = piece.len();
    debug_assert!((2..=LINKED).contains(&n));
    let mut b = [0u8; LINKED + 8];
    if n >= 8 {
        b[..8].copy_from_slice(&piece[..8]);
        b[n - 8..n].copy_from_slice(&piece[n - 8..]);
    } else if n >= 4 {
        b[..4].copy_from_slice(&piece[..4]);
        b[n - 4..n].copy_from_slice(&piece[n - 4..]);
    } else {
        b[..2].copy_from_slice(&piece[..2]);
        b[n - 2..n].copy_from_slice(&piece[n - 2..]);
    }
    b
}

/// tiktoken's scan for pieces of at most `W` (8 or 16) bytes, without moving anything: parts
/// are named by the byte where they start and linked through `next`/`prev`, and `key[p]` holds
/// the pair starting at part p as `rank << 32 | p` (`u64::MAX` for no pair), so the lowest
/// key over the fixed width `W` is the lowest rank, leftmost on a tie, found with `W - 1`
/// branch-free minimums. A merge updates a handful of entries and at most two pair ranks.
/// (The previous version shifted three arrays of 16 entries with selects every round; with it,
/// counting 1 MB of random letters on o200k took 305 M instructions, with this one and
/// [`merge_miss`] 184 M, cachegrind; docs/engine-experiments.md, "Third pass".)
#[inline(always)]
fn merge_linked<const W: usize, S: Sink, const MISS: bool, const WINDOWED: bool>(vocab: &Vocab, piece: &[u8], buf: &[u8; LINKED + 8], out: &mut S) {
    let n = piece.len();
    debug_assert!((2..=W).contains(&n) && W <= LINKED);
    // Indexed by a part's first byte; one spare entry so that `next` of the last part (n)
    // indexes without a bounds check failing.
    let mut tok = [0u32; LINKED + 1];
    let mut next = [0u8; LINKED + 1];
    let mut prev = [0u8; LINKED + 1];
    let mut key = [u64::MAX; W];
    for i in 0..W {
        // Bytes past the piece are zero padding: their ranks are never read.
        tok[i] = vocab.byte_rank(buf[i]);
        next[i] = i as u8 + 1;
        prev[i] = (i as u8).wrapping_sub(1);
    }
    let mut parts = n;
    // Sealed characters start whole (models/rank/chars.rs); pieces with no lead byte skip it.
    let chars = if n > 4 && mostly_leads(buf, n) { vocab.chars(n) } else { None };
    // Pairs of whole three-byte-character parts go to the small pair table (chars.rs,
    // `Pairs`); `whole3` marks those parts.
    let mut pairs: Option<&Pairs> = None;
    let mut cross: Option<&Chars> = None;
    let mut whole3 = [0u8; LINKED + 1];
    if chars.is_some() {
        let side_by_side;
        (parts, side_by_side, cross) = first_parts(vocab, chars, piece, &mut tok, &mut next, &mut prev, &mut whole3);
        if side_by_side {
            pairs = chars.and_then(|c| c.pairs(vocab));
        }
        let mut p = 0;
        while p < n {
            let q = next[p] as usize;
            if q < n {
                key[p] = at(pair_linked::<WINDOWED>(vocab, cross, pairs, piece, buf, &tok, &whole3, p, q, next[q] as usize), p);
            }
            p = q;
        }
    } else if !(MISS && n == 2) {
        for (i, k) in key[..n - 1].iter_mut().enumerate() {
            *k = at(rank_of::<_, WINDOWED>(vocab, piece, buf, i, i + 2), i);
        }
    }
    loop {
        let best = lowest(&key);
        let rank = (best >> 32) as u32;
        if rank == NONE {
            break;
        }
        let p = (best & 0xff) as usize;
        let q = next[p] as usize;
        let r = next[q] as usize;
        tok[p] = rank;
        key[q] = u64::MAX;
        next[p] = r as u8;
        parts -= 1;
        // Two parts left of a piece that is no token: their join is the piece.
        if parts == 1 || (MISS && parts == 2) {
            break;
        }
        if pairs.is_some() {
            whole3[p] = joined_whole3(buf, p, r, whole3[p] & whole3[q] != 0);
        }
        if r < n {
            prev[r] = p as u8;
            let e = next[r] as usize;
            key[p] = at(pair_linked::<WINDOWED>(vocab, cross, pairs, piece, buf, &tok, &whole3, p, r, e), p);
        } else {
            key[p] = u64::MAX;
        }
        if p > 0 {
            let l = prev[p] as usize;
            key[l] = at(pair_linked::<WINDOWED>(vocab, cross, pairs, piece, buf, &tok, &whole3, l, p, r), l);
        }
    }
    let mut i = 0;
    while i < n {
        out.push(tok[i]);
        i = next[i] as usize;
    }
}

/// Reference implementation of the definition above, for tests: slow and obviously right.
#[cfg(test)]
pub(crate) fn merge_reference(vocab: &Vocab, piece: &[u8]) -> Vec<u32> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|i| vocab.rank(&[parts[i].clone(), parts[i + 1].clone()].concat()).map(|r| (r, i)))
            .min();
        match best {
            Some((_, i)) => {
                let right = parts.remove(i + 1);
                parts[i].extend(right);
            }
            None => break,
        }
    }
    parts.iter().map(|p| vocab.rank(p).unwrap()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: all bytes, then the given merges in rank order.
    fn vocab(merges: &[&str]) -> Vocab {
        crate::test_data::byte_vocab(merges)
    }

    /// Every engine on `piece`: `encode_piece`, the scan, the bucket engine, and (for a piece
    /// that is not a token, its precondition) `merge_miss`.
    fn all_engines(v: &Vocab, piece: &[u8]) -> [Vec<u32>; 4] {
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        encode_piece(v, piece, &mut a);
        if piece.len() >= 2 && piece.len() <= SMALL {
            merge_small::<_, false, false>(v, piece, &mut b);
        } else {
            b = a.clone();
        }
        if piece.len() >= 2 {
            crate::models::rank::bucket::merge_buckets(v, piece, &mut c);
        } else {
            c = a.clone();
        }
        if piece.len() >= 2 && v.rank(piece).is_none() {
            merge_miss(v, piece, &mut d);
        } else {
            d = c.clone();
        }
        [a, b, c, d]
    }

    #[test]
    fn engines_agree_with_the_definition() {
        let v = vocab(&["aa", "ab", "aaa", "bc", "abc", "aaaa", "ca", "cab", "bca"]);
        let inputs = ["aaaaaaa", "abcabcab", "aabcaab", "cabca", "a", "zz", "aaab", "bcaaaab"];
        for s in inputs {
            let want = merge_reference(&v, s.as_bytes());
            for got in all_engines(&v, s.as_bytes()) {
                assert_eq!(got, want, "{s}");
            }
        }
    }

    #[test]
    fn engines_agree_on_pseudorandom_pieces() {
        let v = vocab(&["ab", "ba", "aa", "bb", "aba", "bab", "abab", "aab", "bba", "ababa", "bbb"]);
        let mut rnd = xorshift(0x9e3779b97f4a7c15);
        for len in 2..300 {
            let s: Vec<u8> = (0..len).map(|_| b"abc"[rnd(3) as usize]).collect();
            let want = merge_reference(&v, &s);
            for got in all_engines(&v, &s) {
                assert_eq!(got, want, "len {len}");
            }
        }
    }

    /// A small deterministic generator for the random tests: `rnd(m)` is in `0..m`.
    fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    /// Tables that are not a BPE merge order (a token may rank below its own parts), so a merge
    /// can create a pair ranked below the one just merged: the bucket engine's urgent path.
    #[test]
    fn engines_agree_on_random_tables() {
        let mut rnd = xorshift(0x2545f4914f6cdd1d);
        for _ in 0..60 {
            let mut merges: Vec<String> = Vec::new();
            while merges.len() < 25 {
                let len = 2 + rnd(4) as usize;
                let t: String = (0..len).map(|_| b"abc"[rnd(3) as usize] as char).collect();
                if !merges.contains(&t) {
                    merges.push(t);
                }
            }
            let refs: Vec<&str> = merges.iter().map(|s| s.as_str()).collect();
            let v = vocab(&refs);
            for len in [2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 40, 150, 400] {
                let s: Vec<u8> = (0..len).map(|_| b"abc"[rnd(3) as usize]).collect();
                let want = merge_reference(&v, &s);
                // Like tiktoken, encode_piece returns a piece that is itself a token as that
                // token, which in such a table can differ from merging it; compare the engines.
                for got in &all_engines(&v, &s)[1..] {
                    assert_eq!(got, &want, "{merges:?} {:?}", String::from_utf8_lossy(&s));
                }
            }
        }
    }

    /// The short-piece paths (2-8 and 9-16 bytes on the linked scan, 17+ on the wide one,
    /// with and without knowing the piece is no token) on many random tables, including ones
    /// that are not a merge order, against the definition.
    #[test]
    fn short_pieces_on_random_tables() {
        let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let alphabet = &b"abcd"[..2 + rnd(3) as usize];
            let mut merges: Vec<String> = Vec::new();
            let want_merges = 5 + rnd(40) as usize;
            for _ in 0..10 * want_merges {
                if merges.len() == want_merges {
                    break;
                }
                let len = 2 + rnd(7) as usize;
                let t: String = (0..len).map(|_| alphabet[rnd(alphabet.len() as u64) as usize] as char).collect();
                if !merges.contains(&t) {
                    merges.push(t);
                }
            }
            let refs: Vec<&str> = merges.iter().map(|s| s.as_str()).collect();
            let v = vocab(&refs);
            for _ in 0..40 {
                let len = 2 + rnd(23) as usize;
                let s: Vec<u8> = (0..len).map(|_| alphabet[rnd(alphabet.len() as u64) as usize]).collect();
                let want = merge_reference(&v, &s);
                let mut got = Vec::new();
                merge_small::<_, false, false>(&v, &s, &mut got);
                assert_eq!(got, want, "{merges:?} {:?}", String::from_utf8_lossy(&s));
                if v.rank(&s).is_none() {
                    let mut got = Vec::new();
                    merge_miss(&v, &s, &mut got);
                    assert_eq!(got, want, "miss: {merges:?} {:?}", String::from_utf8_lossy(&s));
                    let mut got = Vec::new();
                    merge_miss_unpredictable(&v, &s, &mut got);
                    assert_eq!(got, want, "windowed: {merges:?} {:?}", String::from_utf8_lossy(&s));
                }
            }
        }
    }

    /// Three- and four-byte pieces ([`merge_three`], [`merge_four`]): every piece over a
    /// three-letter alphabet, on random tables of two- to four-byte tokens (ties between equal
    /// pairs, "aaa"; tables that are not a merge order; pairs that are not tokens), against
    /// the definition.
    #[test]
    fn three_and_four_byte_pieces_on_random_tables() {
        let mut rnd = xorshift(0x0123_4567_89ab_cdef);
        let alphabet = b"abc";
        for _ in 0..300 {
            let mut merges: Vec<String> = Vec::new();
            for _ in 0..rnd(24) {
                let len = 2 + rnd(3) as usize;
                let t: String = (0..len).map(|_| alphabet[rnd(3) as usize] as char).collect();
                if !merges.contains(&t) {
                    merges.push(t);
                }
            }
            let refs: Vec<&str> = merges.iter().map(|s| s.as_str()).collect();
            let v = vocab(&refs);
            for k in 0..27 + 81 {
                let s: Vec<u8> = if k < 27 {
                    vec![alphabet[k / 9], alphabet[k / 3 % 3], alphabet[k % 3]]
                } else {
                    let k = k - 27;
                    vec![alphabet[k / 27], alphabet[k / 9 % 3], alphabet[k / 3 % 3], alphabet[k % 3]]
                };
                if v.rank(&s).is_some() {
                    continue;
                }
                let want = merge_reference(&v, &s);
                let (mut got, mut windowed) = (Vec::new(), Vec::new());
                merge_miss(&v, &s, &mut got);
                merge_miss_unpredictable(&v, &s, &mut windowed);
                assert_eq!(got, want, "{merges:?} {:?}", String::from_utf8_lossy(&s));
                assert_eq!(windowed, want, "windowed: {merges:?} {:?}", String::from_utf8_lossy(&s));
            }
        }
    }

    /// Pieces of 17-128 bytes ([`merge_wide`], with block minimums past 32 bytes) on random
    /// tables whose tokens run to 24 bytes (so pairs are looked up in all three indexes, and
    /// some are longer than any token), including tables that are not a merge order, and on
    /// runs of one byte after a short prefix (the lines of `*` or `-` of real text): against
    /// the definition.
    #[test]
    fn wide_pieces_on_random_tables() {
        let mut rnd = xorshift(0x5851_f42d_4c95_7f2d);
        for round in 0..120 {
            let alphabet = &b"abcd"[..2 + rnd(3) as usize];
            let mut merges: Vec<Vec<u8>> = Vec::new();
            let want_merges = 10 + rnd(60) as usize;
            for _ in 0..10 * want_merges {
                if merges.len() == want_merges {
                    break;
                }
                // Mostly short tokens, some of 8-24 bytes, some runs of one letter.
                let len = if rnd(4) == 0 { 8 + rnd(17) as usize } else { 2 + rnd(6) as usize };
                let t: Vec<u8> = if rnd(5) == 0 {
                    vec![alphabet[0]; len]
                } else {
                    (0..len).map(|_| alphabet[rnd(alphabet.len() as u64) as usize]).collect()
                };
                if !merges.contains(&t) {
                    merges.push(t);
                }
            }
            if round % 2 == 0 {
                // A merge order of sorts: shorter tokens first.
                merges.sort_by_key(|t| t.len());
            }
            let v = crate::test_data::byte_vocab(&merges);
            for _ in 0..12 {
                let len = 17 + rnd(112) as usize;
                let s: Vec<u8> = match rnd(3) {
                    0 => {
                        let mut s = vec![alphabet[1]; 1 + rnd(3) as usize];
                        s.resize(len, alphabet[0]);
                        s
                    }
                    _ => (0..len).map(|_| alphabet[rnd(alphabet.len() as u64) as usize]).collect(),
                };
                let want = merge_reference(&v, &s);
                let mut got = Vec::new();
                merge_small::<_, false, false>(&v, &s, &mut got);
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&s));
                if v.rank(&s).is_none() {
                    let mut got = Vec::new();
                    merge_miss(&v, &s, &mut got);
                    assert_eq!(got, want, "miss: {:?}", String::from_utf8_lossy(&s));
                }
            }
        }
    }
}
