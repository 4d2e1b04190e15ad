//! Exact cuts inside pieces of three-byte characters (CJK, kana): places no merge can cross.
//!
//! A Chinese or Japanese piece is a run of 5 to 300 characters that is nearly always distinct
//! within a text, so the piece cache rarely helps and every piece is merged round by round.
//! But most places between two characters are never crossed by any merge: no token holds
//! those two characters side by side. Where that is provable the piece is cut there, and the
//! segments are merged one by one: most are one character (a sealed character is its token)
//! or two (a lookup in the pair table of chars.rs), so most of such a piece needs no merge at
//! all, and the rest goes to the usual engines in shorter pieces.
//!
//! **The rule.** Let c1 and c2 be three-byte characters standing side by side in a piece, both
//! *sealed* where they stand (chars.rs: the merge from bytes makes each of them whole before
//! any merge crosses its edge), and let no token contain the bytes of c1 followed by the bytes
//! of c2, at any offset. Then no merge of the piece joins a part ending at c1's end with a part
//! starting at c2's start:
//!
//! - before c1 is whole no merge crosses its right edge, and before c2 is whole none crosses
//!   its left edge (the sealing rule, chars.rs, run A);
//! - after both are whole, a part ending at c1's end ends with all of c1's bytes and one
//!   starting at c2's start begins with all of c2's, so their join would be a token
//!   containing c1's bytes followed by c2's: there is none.
//!
//! **Why the segments merge independently.** The merge takes the lowest-ranked pair of the
//! whole piece each round (the leftmost on a tie). No pair spans a cut, so a merge inside one
//! segment changes no pair of another, and a segment's lowest pair, once it is the lowest of
//! the piece, stays what it was until it is merged. So the merges inside a segment are made
//! in the order the segment alone would make them (a tie inside the segment is still decided
//! leftmost), and the piece's tokens are the segments' tokens in order. Each segment is then
//! merged by the usual engines, which are exact for any bytes.
//!
//! **The table** ([`Joins`]): one bit per hashed pair of three-byte byte patterns, set for
//! every pair that stands side by side inside some token (found at every offset of every
//! token, so also where a token starts or ends inside a character). A collision only sets a
//! bit that did not need to be: a place is then not cut, which is always exact. o200k_base
//! holds 11,890 such pairs (cl100k_base 407), so 2^20 bits (128 KB) leave about one place in
//! ninety uncut by collision. Built with the sealed-character table's first use after 1 MB of
//! pieces worth cutting (chars.rs, `JOINS_AFTER`): about 3 ms for o200k_base.

use super::chars::Chars;
use super::merge::{merge_piece, merge_uncut};
use crate::models::Sink;
use crate::vocab::Vocab;

/// Pieces shorter than this are not cut: up to five characters, the piece cache's inline
/// table holds them, and a short merge costs about what the cutting would (cutting from 7 or
/// 10 bytes measured no faster: docs/engine-experiments.md, "Thirteenth pass").
pub const CUT_FROM: usize = 17;
const _: () = assert!(CUT_FROM >= 3, "worth_cutting reads the third byte from the end");

/// log2 of the bits of [`Joins`].
const JOIN_BITS: u32 = 20;

/// Pairs of three-byte character patterns that stand side by side inside a token, hashed to
/// one bit each (module docs).
pub struct Joins {
    bits: Vec<u64>,
}

impl Joins {
    pub(super) fn build(vocab: &Vocab) -> Joins {
        let mut bits = vec![0u64; 1 << (JOIN_BITS - 6)];
        for (t, _) in vocab.mergeable() {
            for w in t.windows(6) {
                // Two lead bytes three apart first: most windows of most tokens fail there.
                if w[0] & 0xf0 != 0xe0 || w[3] & 0xf0 != 0xe0 {
                    continue;
                }
                if let (Some(a), Some(b)) = (pattern3(&w[..3]), pattern3(&w[3..])) {
                    let h = Self::bit(a, b);
                    bits[h >> 6] |= 1 << (h & 63);
                }
            }
        }
        Joins { bits }
    }

    #[inline(always)]
    fn bit(a: u32, b: u32) -> usize {
        ((((a << 16) | b) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - JOIN_BITS)) as usize
    }

    /// Whether some token may hold the characters of patterns `a` and `b` side by side (false:
    /// none does).
    #[inline(always)]
    pub fn may_join(&self, a: u32, b: u32) -> bool {
        let h = Self::bit(a, b);
        // In bounds: `h` has JOIN_BITS bits.
        self.bits[h >> 6] >> (h & 63) & 1 != 0
    }
}

/// The 16-bit pattern of a three-byte character's bytes (lead `0xe0`-`0xef`, two continuation
/// bytes), or `None`.
#[inline(always)]
pub(super) fn pattern3(s: &[u8]) -> Option<u32> {
    let (b0, b1, b2) = (s[0], s[1], s[2]);
    (b0 & 0xf0 == 0xe0 && b1 & 0xc0 == 0x80 && b2 & 0xc0 == 0x80)
        .then_some((b0 as u32 & 0x0f) << 12 | (b1 as u32 & 0x3f) << 6 | (b2 as u32 & 0x3f))
}

/// Whether a missed piece is worth trying to cut: long enough, ending with a three-byte
/// character, and at least three quarters of its bytes in three-byte characters (a third of
/// them lead bytes `0xe0`-`0xef`).
#[inline]
pub(super) fn worth_cutting(piece: &[u8]) -> bool {
    let n = piece.len();
    // First the last character: a Cyrillic or Latin piece fails here without the count.
    n >= CUT_FROM && piece[n - 3] & 0xf0 == 0xe0 && 4 * piece.iter().filter(|&&b| b & 0xf0 == 0xe0).count() >= n
}

/// Merges `piece` (no token, at least [`CUT_FROM`] bytes) segment by segment if it has a place
/// no merge can cross (module docs), and says whether it did; when it did not, nothing was
/// written.
pub(super) fn merge_cut<S: Sink>(vocab: &Vocab, chars: &Chars, piece: &[u8], out: &mut S) -> bool {
    for_each_segment(vocab, chars, piece, |seg, known| segment(vocab, chars, seg, known, out))
}

/// What the cutting already knows of a segment.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Known {
    /// One sealed character, a token of this rank.
    One(u32),
    /// Two sealed characters, tokens of these ranks.
    Two(u32, u32),
    /// Anything else.
    More,
}

/// Calls `each` on the segments of `piece` in order, with what is known of each, if the piece
/// has a place no merge can cross, and says whether it did; when it did not, `each` was not
/// called.
#[inline(always)]
fn for_each_segment<'a>(vocab: &Vocab, chars: &Chars, piece: &'a [u8], mut each: impl FnMut(&'a [u8], Known)) -> bool {
    let Some(joins) = chars.joins(vocab, piece.len()) else { return false };
    let n = piece.len();
    // The segment being gathered starts at `start`; `last` is the pattern of the sealed
    // three-byte character that ends at `i`, if one does.
    let (mut start, mut i, mut last) = (0, 0, None::<u32>);
    let mut cut = false;
    let mut known = Known::More;
    while i < n {
        if piece[i] & 0xf0 == 0xe0 {
            // Sealed, and so (sealed_at checked them) the bytes of a three-byte character.
            if let Some((3, rank)) = chars.sealed_at(piece, i) {
                let Some(here) = pattern3(&piece[i..i + 3]) else {
                    // Not reached; if it were, no cut at this character is the exact answer.
                    last = None;
                    known = Known::More;
                    i += 1;
                    continue;
                };
                if let Some(before) = last {
                    if !joins.may_join(before, here) {
                        each(&piece[start..i], known);
                        start = i;
                        cut = true;
                    }
                }
                known = match known {
                    _ if start == i => Known::One(rank),
                    Known::One(first) if i == start + 3 => Known::Two(first, rank),
                    _ => Known::More,
                };
                last = Some(here);
                i += 3;
                continue;
            }
        }
        last = None;
        known = Known::More;
        i += 1;
    }
    if cut {
        each(&piece[start..], known);
    }
    cut
}

/// One segment into `out`: what its bytes merge into. One sealed character is its own token
/// (its own merge gives it, chars.rs). Two sealed characters (sealed in the piece, so in the
/// segment, whose neighbour bytes are the piece's or absent) start as two parts, which join
/// only if they make a token: the pair table says (chars.rs, `Pairs`). Anything else is
/// looked up whole: a token is merged from its bytes (a segment is only part of a piece, so it
/// is what its bytes merge into, not tiktoken's "a piece that is a token is that token"; for
/// cl100k and o200k the two agree), anything else is merged as a missed piece.
#[inline(always)]
fn segment<S: Sink>(vocab: &Vocab, chars: &Chars, seg: &[u8], known: Known, out: &mut S) {
    match known {
        Known::One(rank) => return out.push(rank),
        Known::Two(a, b) => {
            if let Some(pairs) = chars.pairs(vocab) {
                match pairs.get(a, b) {
                    u32::MAX => {
                        out.push(a);
                        out.push(b);
                    }
                    joined => out.push(joined),
                }
                return;
            }
        }
        Known::More => {}
    }
    if seg.len() <= vocab.max_token_len() && vocab.rank(seg).is_some() {
        merge_piece(vocab, seg, out)
    } else {
        merge_uncut(vocab, seg, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::rank::merge::{merge_miss, merge_reference};
    use crate::test_data::{cjk_piece, cjk_text, cjk_tokens, Rng};

    /// The segments of `s` if it is cut (checked to tile it), else `None`.
    fn segments<'a>(v: &Vocab, chars: &Chars, s: &'a [u8]) -> Option<Vec<&'a [u8]>> {
        let mut segs = Vec::new();
        let mut at = 0;
        let cut = for_each_segment(v, chars, s, |seg, known| {
            // Segments tile the piece in order (a slice of it at the running offset).
            assert_eq!(seg.as_ptr(), s[at..].as_ptr());
            at += seg.len();
            match known {
                Known::One(r) => assert!(seg.len() == 3 && v.rank(seg) == Some(r), "one sealed character, its token"),
                Known::Two(a, b) => assert!(seg.len() == 6 && v.rank(&seg[..3]) == Some(a) && v.rank(&seg[3..]) == Some(b), "two"),
                Known::More => {}
            }
            segs.push(seg);
        });
        if cut {
            assert_eq!(at, s.len());
            Some(segs)
        } else {
            assert!(segs.is_empty(), "nothing is reported when nothing is cut");
            None
        }
    }

    /// Random tables over 4-19 of 28 three-byte characters (with a few other characters), whose
    /// tokens are most characters' first or last two bytes, then `cjk_tokens`' words, slices
    /// cutting characters anywhere and characters next to another script, at random ranks (a
    /// third sorted by length). For every piece that is
    /// cut: the definition's merge of the whole piece is the definition's merges of its
    /// segments in order (the rule itself, module docs), and `merge_miss`, which cuts, gives it.
    #[test]
    fn cut_pieces_merge_as_their_segments_on_random_tables() {
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        // Ideographs from two leads (so that tokens cutting characters meet several lead and
        // continuation bytes), kana, Hangul, CJK punctuation.
        let cjk: Vec<Vec<u8>> = (0..24u32)
            .map(|k| char::from_u32(0x4e00 + 0x1000 * (k % 2) + 37 * k).unwrap())
            .chain("あ한。語".chars())
            .map(|c| c.to_string().into_bytes())
            .collect();
        let other: Vec<Vec<u8>> = ["a", " ", "д", "1"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let (mut cut, mut segs_total) = (0, 0);
        for round in 0..300 {
            let chars: Vec<Vec<u8>> = (0..4 + rng.below(16)).map(|_| cjk[rng.below(cjk.len())].clone()).collect();
            // Most characters get their first or last two bytes as a token ranked below them
            // (then the character's own merge gives it, and it may be sealed).
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            for c in &chars {
                let t = if rng.below(2) == 0 { c[..2].to_vec() } else { c[1..].to_vec() };
                if rng.below(4) != 0 && !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            cjk_tokens(&mut rng, &chars, &other, round, &mut tokens);
            let v = crate::test_data::byte_vocab(&tokens);
            let table = v.chars(1).unwrap();
            for _ in 0..30 {
                let n = [17, 24, 33, 64, 128, 129, 200, 255, 300][rng.below(9)];
                let s = cjk_piece(&mut rng, &chars, &other, n, 15);
                let want = merge_reference(&v, &s);
                if let Some(segs) = segments(&v, table, &s) {
                    cut += 1;
                    segs_total += segs.len();
                    let joined: Vec<u32> = segs.iter().flat_map(|g| merge_reference(&v, g)).collect();
                    assert_eq!(joined, want, "segments {segs:?} of {s:?}, tokens {tokens:?}");
                }
                if v.rank(&s).is_none() {
                    let mut got = Vec::new();
                    merge_miss(&v, &s, &mut got);
                    assert_eq!(got, want, "{s:?}, tokens {tokens:?}");
                }
            }
        }
        // Most pieces of these small tables have a place to cut (not asserted exactly: it
        // depends on the random tables), and the test is meaningless if none had.
        eprintln!("{cut} pieces cut into {segs_total} segments");
        assert!(cut > 2000 && segs_total > 4 * cut, "{cut} pieces cut into {segs_total} segments");
    }

    /// The real tables (when `BYTEPAIR_VOCAB_DIR` has them): pieces of 17-1,023 bytes of text
    /// made of the tables' own CJK words, random CJK code points, kana, Hangul and punctuation,
    /// cut by the rule and merged, against the bucket engine, which cuts nothing.
    #[test]
    fn real_tables_cut_pieces_against_the_bucket_engine() {
        for name in ["cl100k_base", "o200k_base"] {
            let Some(path) = crate::test_data::require("BYTEPAIR_VOCAB_DIR", &format!("{name}.tiktoken")) else { return };
            let data = std::fs::read(&path).unwrap();
            let ranks = crate::formats::tiktoken::parse(&data).unwrap();
            let v = Vocab::new(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), []).unwrap();
            let words: Vec<&[u8]> = ranks.iter().map(|(b, _)| b.as_slice()).filter(|b| super::super::chars::whole3(b)).collect();
            // The first request only counts toward the build (`LazyChars`); this one builds.
            let _ = v.chars(1 << 30);
            let table = v.chars(1).unwrap();
            // Likewise for the table of characters side by side in tokens.
            assert!(table.joins(&v, 1 << 30).is_none(), "{name}: deferred");
            assert!(table.joins(&v, 1).is_some(), "{name}: built");
            let mut rng = Rng(0xbb67_ae85_84ca_a73b);
            let text = cjk_text(&mut rng, &words, 600_000);
            let (mut i, mut cut, mut pieces) = (0, 0, 0);
            while i + CUT_FROM < text.len() {
                let n = if rng.below(8) == 0 { 256 + rng.below(768) } else { CUT_FROM + rng.below(239) };
                let s = &text[i..i + n.min(text.len() - i)];
                i += s.len();
                if v.rank(s).is_some() {
                    continue;
                }
                let mut want = Vec::new();
                crate::models::rank::bucket::merge_buckets(&v, s, &mut want);
                let mut got = Vec::new();
                if merge_cut(&v, table, s, &mut got) {
                    cut += 1;
                    assert_eq!(got, want, "{name}: {:?}", String::from_utf8_lossy(s));
                }
                let mut miss = Vec::new();
                merge_miss(&v, s, &mut miss);
                assert_eq!(miss, want, "{name} miss: {:?}", String::from_utf8_lossy(s));
                pieces += 1;
            }
            eprintln!("{name}: {cut} of {pieces} CJK pieces cut, all agree");
            assert!(cut * 2 > pieces, "{name}: the rule cuts most of these pieces ({cut} of {pieces})");
        }
    }
}
