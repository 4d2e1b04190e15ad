//! The merge engine for long pieces: a longest-match token walk that backtracks, exact for any
//! rank table.
//!
//! The idea is the one GitHub's `bpe` crate describes ("so many tokens, so little time"): do
//! not merge at all. Walk the piece left to right, each time taking the longest token that
//! starts there, and keep it only if it is *compatible* with the token before it (the BPE of the
//! two tokens' bytes is the two tokens themselves); otherwise try the next shorter token, and
//! when none fits, step back one token. The argument that this gives tiktoken's ids, and the
//! compatibility test, are our own (docs/engine.md states them in full); in short, for
//! tiktoken's rule (merge the adjacent pair whose concatenation has the lowest rank, leftmost on
//! a tie, *any* pair whose concatenation is a token):
//!
//! 1. If BPE(s) = u1..um, then BPE of any run of consecutive ui is those same tokens: no merge
//!    ever crossed their boundaries, so each region's merges happen in the same order alone.
//! 2. If BPE(x) ends in u and BPE(u t) = [u, t], then BPE(x t) = BPE(x) followed by t. The merges
//!    inside the u region and inside t interleave in an order fixed by their ranks alone, the
//!    same in both runs; a merge across the boundary in the run on x t would happen at a state
//!    that the run on u t also passes through, where it would be chosen too.
//! 3. So the stack of tokens kept by the walk is always the BPE of the text walked, the BPE of a
//!    prefix is unique, and a position from which no continuation was found never needs another
//!    try (a bit per position). Tokens whose own bytes do not encode to themselves can never
//!    appear in any output (by 1) and are never tried.
//!
//! Compatibility. In the run on u t, only three things matter: the last part of the u region
//! (its "right spine": the suffix tokens of u, by the rank at which each is built), the first
//! part of the t region (t's "left spine"), and when they change. When a token's own run merges
//! in non-decreasing rank order (checked for every token when the engine is built; "monotone"),
//! the rule is: walk both spines in rank order (u's first on equal rank); before u's spine
//! advances to a part of rank e, the pair across the boundary must not have rank < e; before t's
//! advances to rank f, not rank <= f; at the end u t must not be a token. Pairs of tokens that are
//! not both monotone are checked by running the definition on their bytes (at most 2 x 255).
//!
//! The spines come from each token's *canonical split* (the two parts its own run merges last),
//! found shortest tokens first: a split into two monotone tokens that passes the test (without
//! its final clause) is the canonical one; a token with no such split is checked against the
//! definition directly.
//!
//! Cost: every position is the end of at most one kept prefix, and each (position, candidate)
//! pair is tried at most once, so O(n * c) candidate tries for c = the most tokens that start at
//! one position (a property of the table), each an O(spine) test; with the per-call memo of
//! recent pairs, the reuse of the last walk inside a run of one byte (a walk is a function of
//! the bytes it read) and the batches of a repeating token deeper in the run, the runs of one
//! character cost a scan and a store per token. Per token, the walk reads a trie node or two,
//! and the test, nearly always the quick one, the two tokens' info words (kept in the trie and
//! on the stack) and a pair lookup or two; the rest read a per-token record (prefix link and
//! both spines together). Built lazily, on the first piece that needs it, so start-up pays
//! nothing. Tables outside the packed layout (ids of 2^20 - 1 or more, tokens over 255 bytes,
//! a 4 MiB blob) or over the build's work budget (many long tokens that are not monotone) keep
//! the bucket engine ([`super::bucket`]).

use std::sync::{Arc, OnceLock};

use crate::models::Sink;
use crate::vocab::Vocab;

const NONE: u32 = u32::MAX;

/// Token kinds, per id.
const NOT_CANDIDATE: u8 = 0; // not mergeable, or its bytes do not encode to itself
const MONOTONE: u8 = 1; // encodes to itself, its run merges in rank order, spines known
const IRREGULAR: u8 = 2; // encodes to itself, compatibility checked by running the definition

/// Spine entries pack a token id (24 bits) and its length (8 bits); each spine ends with
/// [`END`], whose id field compares above every real id.
const ID_BITS: u32 = 24;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
const END: u32 = u32::MAX;

/// The lazily built engine, kept in the [`Vocab`] it belongs to. `None` inside when the table
/// is outside the engine's limits (ids of 2^20 - 1 or more, tokens longer than 255 bytes).
#[derive(Default, Clone)]
pub struct LazyBacktrack(OnceLock<Option<Arc<Backtrack>>>);

impl LazyBacktrack {
    pub fn get(&self, vocab: &Vocab) -> Option<&Backtrack> {
        self.0.get_or_init(|| Backtrack::build(vocab).map(Arc::new)).as_deref()
    }
}

pub struct Backtrack {
    /// A trie of the mergeable tokens, breadth first, so each node's children are contiguous
    /// (sorted by byte). Node 0 is the root; nodes 1..=256 are the single bytes. Per node, one
    /// cache line: [first child (22 bits) | child count (9 bits) | is a token (1 bit), the
    /// candidate token that ends here or NONE]; after the build, the candidate's *info* word
    /// (id, length and two flags, see [`INFO_ID`]) rather than its id.
    node: Vec<[u32; 2]>,
    /// The byte leading to each node (children's bytes are contiguous, so one line to scan).
    byte: Vec<u8>,
    /// The children of nodes with more than eight, as bitmaps.
    wide: Vec<Wide>,
    /// Two-byte prefix -> a copy of its node (an empty node when no token starts with it): the
    /// fan-out near the root is wide, and a copy saves the walk one dependent load per token.
    d2: Vec<[u32; 2]>,
    /// Two-byte string -> its rank (or NONE): the pair lookup the walk makes most.
    rank2: Vec<u32>,
    /// Per candidate token, everything the general test reads about it in one place, so that
    /// it touches two short runs of memory (usually a cache line each) instead of a per-id
    /// record and two spines elsewhere. The walk, the trie and the stack hold info words, which
    /// answer most tests alone (`quick`); `rec_of` leads from an id to its record for the rest
    /// and for the next shorter candidate. A record: `[id | len << 24, kind | left spine's
    /// offset << 8, next shorter candidate prefix (a record, or NONE), info word, right
    /// spine..., END, left spine..., END]` (spines as below; empty for single bytes and
    /// IRREGULAR tokens).
    rec: Vec<u32>,
    /// Token id -> its record, or NONE when the token is not a candidate.
    rec_of: Vec<u32>,
    max_len: usize,
    // Build-time only (emptied when `rec` is made): per token id, its kind and spines, and the
    // longest proper prefix that is a candidate (by id).
    info: Vec<Info>,
    next_prefix: Vec<u32>,
    spines: Vec<u32>,
    d2_node: Vec<u32>,
}

/// The result of the longest-token walk at one position. The walk is a function of the bytes
/// it read, `text[pos..pos + seen]`, as long as it did not stop at the end of the text (then
/// `seen` is NOT_AGAIN): any position followed by the same `seen` bytes walks the same way,
/// so a run of one character (or any repeat) need not walk the trie again.
#[derive(Clone, Copy)]
struct Walk {
    cand: u32,
    len: usize,
    reach: usize,
    seen: usize,
}

const NOT_AGAIN: usize = usize::MAX / 2;

/// Record layout (see `Backtrack::rec`).
const REC_HEAD: u32 = 0;
const REC_KIND: usize = 1;
const REC_NEXT: usize = 2;
const REC_INFO: usize = 3;
const REC_SPINES: usize = 4;

/// A candidate's *info* word: what the trie holds for the token that ends at a node and what
/// the walk keeps on its stack, so that the quick test reads nothing else about either token.
/// Bits 0-19 the id, 20-27 the length, QR (bit 28): the token can be the left one of a quick
/// test (a single byte, or a MONOTONE token whose right spine is itself alone, i.e. whose own
/// run ends by joining something to its last byte), QL (bit 29): the right one (its left spine
/// at most itself). On the stack, bits 30-31 say how much longer than the token the longest
/// token that starts where it does is: 0, 1, 2, or 3 for "3 or more" (then treated as
/// unknown: lookups it would have skipped are made).
const INFO_ID: u32 = (1 << 20) - 1;
const INFO_LEN_SHIFT: u32 = 20;
const QR: u32 = 1 << 28;
const QL: u32 = 1 << 29;
const REACH_SHIFT: u32 = 30;
/// `reach` when the stack's two bits say "3 or more".
const FAR: usize = 1 << 20;

#[inline(always)]
fn info_len(w: u32) -> usize {
    (w >> INFO_LEN_SHIFT & 0xff) as usize
}

/// A stack entry: the token's info word `cand` (of `len` bytes) with how much longer than it
/// the longest token starting where it does (`here` bytes) is, in the top two bits.
#[inline(always)]
fn stacked(cand: u32, len: usize, here: usize) -> u32 {
    cand | ((here - len).min(3) as u32) << REACH_SHIFT
}

/// The `here` of a stack entry ([`stacked`]), [`FAR`] for "3 or more" longer.
#[inline(always)]
fn reach_of(w: u32) -> usize {
    match (w >> REACH_SHIFT) as usize {
        3 => FAR,
        d => info_len(w) + d,
    }
}

/// What the walk needs to know of a token, in one place.
#[derive(Clone, Copy, Default)]
struct Info {
    /// Offsets into `spines` of the right and left spines (MONOTONE tokens).
    right: u32,
    left: u32,
    rcnt: u8,
    lcnt: u8,
    len: u8,
    kind: u8,
}

/// The children of a node with many: which bytes lead to one, the first child's node, and
/// how many children the bitmap's earlier words hold.
#[derive(Clone, Copy)]
struct Wide {
    bits: [u64; 4],
    first: u32,
    below: [u8; 4],
}

/// The child count that marks a node whose `first` field indexes `wide` (real counts are at
/// most 256).
const WIDE: u32 = 511;

const FIRST_BITS: u32 = 22;
const FIRST_MASK: u32 = (1 << FIRST_BITS) - 1;
const IS_TOKEN: u32 = 1 << 31;

#[inline(always)]
fn spine_id(e: u32) -> u32 {
    e & ID_MASK
}
#[inline(always)]
fn spine_len(e: u32) -> usize {
    (e >> ID_BITS) as usize
}

impl Backtrack {
    /// Builds the trie, the canonical splits and the spines. `None` when the table does not fit
    /// the packed layout; the bucket engine then handles long pieces.
    pub fn build(vocab: &Vocab) -> Option<Backtrack> {
        let table = vocab.table_len();
        // Trie nodes are at most the blob's bytes + 1.
        if table >= INFO_ID as usize || vocab.max_token_len() > 255 || vocab.blob().len() >= (1 << FIRST_BITS) - 1 {
            return None;
        }
        let toks: Vec<(&[u8], u32)> = vocab.mergeable().collect();
        let mut info = vec![Info::default(); table];
        for &(b, id) in &toks {
            info[id as usize].len = b.len() as u8;
        }
        let mut e = Backtrack {
            node: Vec::new(),
            byte: Vec::new(),
            d2: Vec::new(),
            d2_node: vec![NONE; 1 << 16],
            rank2: vec![NONE; 1 << 16],
            info,
            next_prefix: vec![NONE; table],
            spines: vec![END], // offset 0: the empty spine of a single byte
            wide: Vec::new(),
            rec: Vec::new(),
            rec_of: vec![NONE; table],
            max_len: vocab.max_token_len().max(2),
        };
        for &(b, id) in &toks {
            if b.len() == 2 {
                e.rank2[(b[0] as usize) << 8 | b[1] as usize] = id;
            }
        }
        // The trie; `cand` holds every token for now.
        e.build_trie(&toks);
        // Kinds, spines and next-shorter prefixes, shortest tokens first (a token's parts are
        // shorter than it). The trie path of a token lists its prefix tokens, so only splits
        // whose left part is a token are looked at.
        let mut by_len = vec![0u32; e.max_len + 2];
        for &(b, _) in &toks {
            by_len[b.len() + 1] += 1;
        }
        for l in 1..by_len.len() {
            by_len[l] += by_len[l - 1];
        }
        let mut order = vec![0u32; toks.len()];
        for (k, &(b, _)) in toks.iter().enumerate() {
            order[by_len[b.len()] as usize] = k as u32;
            by_len[b.len()] += 1;
        }
        let mut scratch = Vec::new();
        let mut prefixes = Vec::new();
        // Work done classifying, in byte steps, and the most allowed: real tables use about
        // two steps per byte of their blob.
        let (mut work, budget) = (0usize, 64 * vocab.blob().len() + (1 << 20));
        for &k in &order {
            let (bytes, id) = toks[k as usize];
            prefixes.clear();
            let mut node = 0usize;
            for (d, &b) in bytes.iter().enumerate() {
                node = e.child(node, b).expect("every prefix of a token is in the trie") as usize;
                if d + 1 < bytes.len() && e.node[node][1] != NONE {
                    prefixes.push(e.node[node][1]);
                }
            }
            e.next_prefix[id as usize] = prefixes.last().copied().unwrap_or(NONE);
            work += e.classify(vocab, bytes, id, &prefixes, &mut scratch);
            if work > budget {
                // A table built to be slow here (many long tokens that are not monotone):
                // leave its long pieces to the bucket engine rather than stall.
                return None;
            }
            if e.info[id as usize].kind == NOT_CANDIDATE {
                e.node[node][1] = NONE;
            }
        }
        e.make_records()?;
        Some(e)
    }

    /// The memory the engine holds (its tables' lengths; capacity slack aside).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.node[..]) + size_of_val(&self.byte[..]) + size_of_val(&self.wide[..]) + size_of_val(&self.d2[..])
            + size_of_val(&self.rank2[..]) + size_of_val(&self.rec[..]) + size_of_val(&self.rec_of[..])
    }

    /// Lays out the records (see `rec`), points the trie and the prefix links at them, and
    /// frees the per-id tables. `None` if the records do not fit 24-bit offsets (the walk's
    /// stack packs one with an 8-bit length); real tables use a few percent of that.
    fn make_records(&mut self) -> Option<()> {
        let mut rec = Vec::new();
        for (id, i) in self.info.iter().enumerate() {
            if i.len == 0 || i.kind == NOT_CANDIDATE {
                continue;
            }
            self.rec_of[id] = rec.len() as u32;
            // The kind word also says where the left spine starts (after the right one's END).
            let (rcnt, lcnt) = if i.kind == MONOTONE { (i.rcnt as u32, i.lcnt as u32) } else { (0, 0) };
            let left = REC_SPINES as u32 + rcnt + 1;
            let quick = |one: bool, flag: u32| if i.len == 1 || (i.kind == MONOTONE && one) { flag } else { 0 };
            let info = id as u32 | (i.len as u32) << INFO_LEN_SHIFT | quick(rcnt == 1, QR) | quick(lcnt == 1, QL);
            rec.extend_from_slice(&[id as u32 | (i.len as u32) << ID_BITS, i.kind as u32 | left << 8, NONE, info]);
            if i.kind == MONOTONE {
                rec.extend_from_slice(&self.spines[i.right as usize..=(i.right + i.rcnt as u32) as usize]);
                rec.extend_from_slice(&self.spines[i.left as usize..=(i.left + i.lcnt as u32) as usize]);
            } else {
                rec.extend_from_slice(&[END, END]);
            }
        }
        if rec.len() >= ID_MASK as usize {
            return None;
        }
        for (id, &r) in self.rec_of.iter().enumerate() {
            if r != NONE {
                let p = self.next_prefix[id];
                rec[r as usize + REC_NEXT] = if p == NONE { NONE } else { self.rec_of[p as usize] };
            }
        }
        for n in &mut self.node {
            if n[1] != NONE {
                n[1] = rec[self.rec_of[n[1] as usize] as usize + REC_INFO];
            }
        }
        self.rec = rec;
        self.d2 = self.d2_node.iter().map(|&n| if n == NONE { [0, NONE] } else { self.node[n as usize] }).collect();
        (self.info, self.next_prefix, self.spines, self.d2_node) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        Some(())
    }

    /// `prefixes`: the candidate tokens that are proper prefixes of this one, shortest first.
    /// Returns a bound on the work done, in byte steps.
    fn classify(&mut self, vocab: &Vocab, bytes: &[u8], id: u32, prefixes: &[u32], scratch: &mut Vec<u32>) -> usize {
        let i = id as usize;
        if bytes.len() == 1 {
            self.info[i].kind = MONOTONE;
            return 1;
        }
        let mut work = bytes.len();
        // Only a split into two monotone parts that both rank below the token (single bytes
        // aside) can make it monotone: its run is the parts' runs interleaved, then their merge,
        // which must come last in rank. If one passes the test, it is the canonical split (the
        // run is unique). Otherwise the token is not monotone and the definition decides below.
        let below = |t: u32| self.info[t as usize].len == 1 || t < id;
        for &a in prefixes {
            if !below(a) || self.info[a as usize].kind != MONOTONE {
                continue;
            }
            let k = self.info[a as usize].len as usize;
            let Some(b) = vocab.rank(&bytes[k..]) else { continue };
            if !below(b) || self.info[b as usize].kind != MONOTONE {
                continue;
            }
            work += bytes.len();
            let right = &self.spines[self.info[a as usize].right as usize..];
            let left = &self.spines[self.info[b as usize].left as usize..];
            if self.crosses(vocab, bytes, k, right, left, usize::MAX) {
                continue;
            }
            let entry = id | (bytes.len() as u32) << ID_BITS;
            let (ia, ib) = (self.info[a as usize], self.info[b as usize]);
            if ib.rcnt == u8::MAX || ia.lcnt == u8::MAX {
                break; // a spine longer than the layout holds: leave it to the definition
            }
            let start = self.spines.len() as u32;
            self.spines.extend_from_within(ib.right as usize..ib.right as usize + ib.rcnt as usize);
            self.spines.extend_from_slice(&[entry, END]);
            self.info[i].right = start;
            self.info[i].rcnt = ib.rcnt + 1;
            let start = self.spines.len() as u32;
            self.spines.extend_from_within(ia.left as usize..ia.left as usize + ia.lcnt as usize);
            self.spines.extend_from_slice(&[entry, END]);
            self.info[i].left = start;
            self.info[i].lcnt = ia.lcnt + 1;
            self.info[i].kind = MONOTONE;
            return work;
        }
        // No monotone split passes: ask the definition whether the token encodes to itself.
        scratch.clear();
        exact(vocab, bytes, scratch);
        if scratch.len() == 1 && scratch[0] == id {
            self.info[i].kind = IRREGULAR;
        }
        work + bytes.len() * bytes.len()
    }

    fn build_trie(&mut self, toks: &[(&[u8], u32)]) {
        // Level by level (a most-significant-byte radix sort): `active` holds (token, node of
        // its prefix one byte shorter), grouped by that node in node order; a stable counting
        // sort by the next byte, then a stable sort back into the groups, puts every node's
        // children contiguous and in byte order.
        let (mut first, mut nchild, mut cand): (Vec<u32>, Vec<u32>, Vec<u32>) = (vec![0], vec![0], vec![NONE]);
        self.byte.push(0);
        let mut active: Vec<(u32, u32)> = (0..toks.len() as u32).map(|k| (k, 0u32)).collect();
        let mut scratch: Vec<(u32, u32)> = Vec::new();
        let mut depth = 0;
        while !active.is_empty() {
            // By byte, stably...
            let mut count = [0usize; 257];
            for &(k, _) in &active {
                count[toks[k as usize].0[depth] as usize + 1] += 1;
            }
            for b in 1..257 {
                count[b] += count[b - 1];
            }
            scratch.clear();
            scratch.resize(active.len(), (0, 0));
            for &(k, p) in &active {
                let b = toks[k as usize].0[depth] as usize;
                scratch[count[b]] = (k, p);
                count[b] += 1;
            }
            // ...then by parent, stably: parents are numbered in order, so bucket by the offset
            // of the parent within this level.
            let lo = active[0].1;
            let hi = active[active.len() - 1].1;
            let mut pcount = vec![0usize; (hi - lo) as usize + 2];
            for &(_, p) in &scratch {
                pcount[(p - lo) as usize + 1] += 1;
            }
            for q in 1..pcount.len() {
                pcount[q] += pcount[q - 1];
            }
            for &(k, p) in &scratch {
                let q = (p - lo) as usize;
                active[pcount[q]] = (k, p);
                pcount[q] += 1;
            }
            let mut next_active = Vec::with_capacity(active.len());
            let mut last: Option<(u32, u8, u32)> = None; // (parent, byte, node)
            for &(k, parent) in &active {
                let (bytes, id) = toks[k as usize];
                let b = bytes[depth];
                let node = match last {
                    Some((p, lb, n)) if p == parent && lb == b => n,
                    _ => {
                        let n = first.len() as u32;
                        first.push(0);
                        nchild.push(0);
                        cand.push(NONE);
                        self.byte.push(b);
                        let p = parent as usize;
                        if nchild[p] == 0 {
                            first[p] = n;
                        }
                        nchild[p] += 1;
                        if depth == 1 {
                            self.d2_node[(bytes[0] as usize) << 8 | b as usize] = n;
                        }
                        last = Some((parent, b, n));
                        n
                    }
                };
                if bytes.len() == depth + 1 {
                    cand[node as usize] = id;
                } else {
                    next_active.push((k, node));
                }
            }
            active = next_active;
            depth += 1;
        }
        // Padding for `child`, which reads the children's bytes eight at a time.
        self.byte.extend_from_slice(&[0; 8]);
        // A node of more than eight children gets a bitmap of its children's bytes instead
        // (its word holds the bitmap's index and the count WIDE), so every child is found
        // with one load and a popcount, never a loop.
        self.node = (0..first.len())
            .map(|n| {
                let tok = if cand[n] != NONE { IS_TOKEN } else { 0 };
                let (f, c) = (first[n], nchild[n]);
                if c <= 8 {
                    return [f | c << FIRST_BITS | tok, cand[n]];
                }
                let mut w = Wide { bits: [0; 4], first: f, below: [0; 4] };
                for &b in &self.byte[f as usize..(f + c) as usize] {
                    w.bits[b as usize / 64] |= 1 << (b % 64);
                }
                for k in 1..4 {
                    w.below[k] = w.below[k - 1] + w.bits[k - 1].count_ones() as u8;
                }
                self.wide.push(w);
                [(self.wide.len() - 1) as u32 | WIDE << FIRST_BITS | tok, cand[n]]
            })
            .collect();
    }

    #[inline(always)]
    fn child(&self, node: usize, b: u8) -> Option<u32> {
        self.child_of(self.node[node][0], b)
    }

    /// The child by byte `b` of the node whose first word is `w`.
    #[inline(always)]
    fn child_of(&self, w: u32, b: u8) -> Option<u32> {
        let first = (w & FIRST_MASK) as usize;
        let count = (w & !IS_TOKEN) >> FIRST_BITS;
        if count == WIDE {
            // SAFETY: a WIDE node's `first` indexes `wide` (build_trie).
            let wide = unsafe { self.wide.get_unchecked(first) };
            let (word, bit) = (wide.bits[b as usize / 64], b % 64);
            if word >> bit & 1 == 0 {
                return None;
            }
            let below = wide.below[b as usize / 64] as u32 + (word & ((1 << bit) - 1)).count_ones();
            return Some(wide.first + below);
        }
        // The (at most eight) children's bytes in one word (`byte` is padded by 8): a byte equal
        // to `b` becomes zero after the XOR, and the lowest high bit of the zero-byte test marks
        // the first one exactly (the test can misfire only above a true zero byte). No loop
        // over the bytes, so no branch whose outcome depends on where the child is.
        debug_assert!(first + 8 <= self.byte.len());
        // SAFETY: `first` is a node's first child (at most the last node), and `byte` has eight
        // bytes of padding after the last node.
        let chunk = unsafe { self.byte.as_ptr().add(first).cast::<u64>().read_unaligned() }.to_le();
        let x = chunk ^ u64::from_le_bytes([b; 8]);
        let zero = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
        let at = (zero.trailing_zeros() / 8) as usize;
        if at < count as usize {
            Some((first + at) as u32)
        } else {
            None
        }
    }

    /// The longest candidate token that starts at `text[pos]` (there is always one: every
    /// single byte is a candidate), its length (the depth of its node, so the walk needs no
    /// per-token record to know where it ends), the length of the longest token of any kind
    /// there, and how many bytes the walk read (see [`Walk`]).
    #[inline(always)] // called once per token: the call's register saves were a fifth of it
    fn longest(&self, text: &[u8], pos: usize) -> Walk {
        let n = text.len();
        debug_assert!(pos < n && self.d2.len() == 1 << 16);
        // SAFETY (all the unchecked reads below): `pos < n` and `i < n` are checked before each
        // text read; node 1 + b is the single byte b (every byte is a token); `d2` has an
        // entry for every two bytes; a child's index is a node.
        let b0 = unsafe { *text.get_unchecked(pos) };
        let mut w = Walk { cand: unsafe { self.node.get_unchecked(1 + b0 as usize)[1] }, len: 1, reach: 1, seen: NOT_AGAIN };
        if pos + 1 == n {
            return w;
        }
        // Depth 2 from the copy in `d2` (an absent prefix is a node with no token and no child).
        let [mut word, mut c] = unsafe { *self.d2.get_unchecked((b0 as usize) << 8 | *text.get_unchecked(pos + 1) as usize) };
        let mut i = pos + 2;
        loop {
            if c != NONE {
                (w.cand, w.len) = (c, i - pos);
            }
            if word & IS_TOKEN != 0 {
                w.reach = i - pos;
            }
            // No bound on the depth: the deepest nodes (at the longest token's length) have no
            // children, so the child search below fails there, in the same branch as any other
            // miss (a separate test for a leaf was a branch the predictor missed on CJK's
            // alternating lead and continuation bytes).
            if i == n {
                // Stopped by the end of the text: no other walk is the same.
                return w;
            }
            match self.child_of(word, unsafe { *text.get_unchecked(i) }) {
                Some(c2) => [word, c] = unsafe { *self.node.get_unchecked(c2 as usize) },
                None => {
                    // The walk read text[pos..=i]; at the longest token's length the node is a
                    // leaf and the byte at i did not matter (so a run of the longest token's
                    // byte compares exactly max_len bytes per token, not one more).
                    w.seen = (i - pos + 1).min(self.max_len);
                    return w;
                }
            }
            i += 1;
        }
    }

    /// The rank of `text[a..b]`, or NONE.
    #[inline(always)]
    fn rank_of(&self, vocab: &Vocab, text: &[u8], a: usize, b: usize) -> u32 {
        match b - a {
            2 => self.rank2[(text[a] as usize) << 8 | text[a + 1] as usize],
            _ => self.rank_in(vocab, text, a, b),
        }
    }

    /// The info word of the next shorter candidate than `info` that starts at `text[pos]` (where
    /// `info`'s token starts), or NONE. For a two-byte token that is the single byte, from the
    /// trie's first level, which stays in cache: on random letters most steps back and retries
    /// are of two-byte tokens, and the prefix link is three dependent loads (`rec_of`, the
    /// record, the shorter one's record) into tables of megabytes.
    #[inline(always)]
    fn shorter(&self, text: &[u8], pos: usize, info: u32) -> u32 {
        match info_len(info) {
            1 => NONE,
            2 => self.node[1 + text[pos] as usize][1],
            _ => self.shorter_linked(info),
        }
    }

    /// [`shorter`](Self::shorter) for tokens of three bytes or more: the record's prefix link.
    /// (Out of line, like [`general`](Self::general): the walk's loop keeps its registers.)
    #[inline(never)]
    fn shorter_linked(&self, info: u32) -> u32 {
        match self.rec[self.rec_of[(info & INFO_ID) as usize] as usize + REC_NEXT] {
            NONE => NONE,
            next => self.rec[next as usize + REC_INFO],
        }
    }

    /// The compatibility test for what [`quick`](Self::quick) leaves: from the records, `u` as
    /// on the stack and `t` an info word. Out of line: rare on most text, and inlined, its
    /// state cost the walk's loop registers (runs of one character, which take this path at
    /// every token but answer from the memo before getting here, measured it).
    #[inline(never)]
    fn general(&self, vocab: &Vocab, text: &[u8], s: usize, u: u32, t: u32, scratch: &mut Vec<u32>) -> bool {
        let reach = reach_of(u);
        let (ru, rt) = (self.rec_of[(u & INFO_ID) as usize], self.rec_of[(t & INFO_ID) as usize]);
        self.compatible(vocab, text, s, ru, rt, reach, scratch)
    }

    /// The rank of `text[a..b]` (at least two bytes), or NONE, keyed from one or two loads of
    /// the text where it has them (`Vocab::rank_in`), not `rank`'s call and length branches.
    #[inline(always)]
    fn rank_in(&self, vocab: &Vocab, text: &[u8], a: usize, b: usize) -> u32 {
        if b - a > self.max_len {
            NONE
        } else {
            vocab.rank_in(text, a, b).unwrap_or(NONE)
        }
    }

    /// Whether, in the run of the definition on the bytes of two MONOTONE tokens `u t` (u ends
    /// and t starts at `text[s]`), some merge crosses their boundary before both are built.
    /// `right`: u's right spine, `left`: t's left spine, each ending in END.
    /// `reach`: no token that starts where u does is longer than this.
    #[inline]
    fn crosses(&self, vocab: &Vocab, text: &[u8], s: usize, right: &[u32], left: &[u32], reach: usize) -> bool {
        let (mut r, mut l) = (0, 0);
        let (mut plen, mut qlen) = (1, 1);
        loop {
            let (eu, et) = (right[r], left[l]);
            let (nu, nt) = (spine_id(eu), spine_id(et));
            if eu == END && et == END {
                return false;
            }
            // Once u's spine is done, the pair starts where u does.
            let rho = if eu == END && plen + qlen > reach { NONE } else { self.rank_of(vocab, text, s - plen, s + qlen) };
            if nu <= nt {
                if rho < nu {
                    return true;
                }
                plen = spine_len(eu);
                r += 1;
            } else {
                if rho <= nt {
                    return true;
                }
                qlen = spine_len(et);
                l += 1;
            }
        }
    }

    /// [`compatible`](Self::compatible) for the shapes nearly every test has, from the two
    /// tokens' info words alone (`u` as on the stack, `t` as in the trie): both spines at most
    /// the token itself (QR of u, QL of t; cl100k: 93% of the tests on random letters, 99% on
    /// CJK, most of them a two-byte token and a single byte, or two two-byte tokens). Then the
    /// spine walk of `crosses` has at most two steps, written out here: the pair of the two
    /// bytes at the boundary (with selects), and when both tokens have two bytes or more, one
    /// pair of u and t's first byte or of u's last byte and t. Returns 1 (compatible), 0 (not),
    /// or 2 (another shape: run the general test). Nothing is read from the records, and the
    /// branches on the shape depend only on the two words, which arrive early (a mispredicted
    /// branch on data that arrives late, e.g. from a record, costs the whole wait; the general
    /// loop's branches on spine ranks did, about once a test on random letters).
    #[inline(always)]
    fn quick(&self, vocab: &Vocab, text: &[u8], s: usize, u: u32, t: u32) -> u32 {
        debug_assert!(0 < s && s < text.len());
        if u & QR == 0 || t & QL == 0 {
            return 2;
        }
        let (lu, lt) = (info_len(u), info_len(t));
        let (iu, it) = (u & INFO_ID, t & INFO_ID);
        let d = (u >> REACH_SHIFT) as usize;
        // u's right spine is [u] (two bytes or more) or empty (a single byte), t's left spine
        // [t] or empty; an empty one ranks "after everything" (1 << 20, above every id).
        let (eu, et) = (if lu > 1 { iu } else { 1 << 20 }, if lt > 1 { it } else { 1 << 20 });
        // Step 1, the two bytes at the boundary. Before u's spine advances (rank eu) the pair
        // must not rank below eu, before t's (et) not at or below et: one threshold, and none
        // when both spines are empty. When u is a single byte the pair starts where u does, and
        // is no token if no token there is longer than u (then the load goes to entry 0, which
        // stays in cache, rather than to a random line of the 256 KB table).
        let skip = lu == 1 && d == 0;
        // SAFETY: s - 1 and s are the last byte of u and the first of t; `rank2` has 2^16 entries.
        let b2 = unsafe { (*text.get_unchecked(s - 1) as usize) << 8 | *text.get_unchecked(s) as usize };
        let rho = unsafe { *self.rank2.get_unchecked(if skip { 0 } else { b2 }) };
        let rho = if skip { NONE } else { rho };
        let thr = if lu + lt == 2 { 0 } else { eu.min(et + 1) };
        let mut cross = rho < thr;
        // Step 2, when both spines had an entry: the lower-ranked went first (u's on a tie).
        // After u: the pair is u and t's first byte, starting where u does (so no token when
        // nothing longer than u starts there), and must not rank at or below t. After t: u's
        // last byte and t, which must not rank below u.
        if lu > 1 && lt > 1 {
            let u_first = iu <= it;
            let (a, b) = if u_first { (s - lu, s + 1) } else { (s - 1, s + lt) };
            let thr = if u_first { it + 1 } else { iu };
            let rho = if u_first && d == 0 { NONE } else { self.rank_in(vocab, text, a, b) };
            cross |= rho < thr;
        }
        // Last, u t must not be a token: it is none when longer than any token where u starts.
        let ok = !cross && ((d < 3 && lt > d) || self.rank_in(vocab, text, s - lu, s + lt) == NONE);
        ok as u32
    }

    /// Whether BPE(u t) = [u, t], where u ends and t starts at `text[s]`; `u` and `t` are
    /// records. `reach` is the length of the longest token that starts where u does (so u t,
    /// if longer, is no token).
    #[inline]
    #[allow(clippy::too_many_arguments)] // the hot path's state, passed in registers
    fn compatible(&self, vocab: &Vocab, text: &[u8], s: usize, u: u32, t: u32, reach: usize, scratch: &mut Vec<u32>) -> bool {
        let (u, t) = (u as usize, t as usize);
        let (hu, ht) = (self.rec[u + REC_HEAD as usize], self.rec[t + REC_HEAD as usize]);
        let (lu, lt) = (spine_len(hu), spine_len(ht));
        let (ku, kt) = (self.rec[u + REC_KIND], self.rec[t + REC_KIND]);
        if ku & 0xff == MONOTONE as u32 && kt & 0xff == MONOTONE as u32 {
            // u's right spine starts the record's spines; t's left spine follows its right one.
            let right = &self.rec[u + REC_SPINES..];
            let left = &self.rec[t + (kt >> 8) as usize..];
            if self.crosses(vocab, text, s, right, left, reach) {
                return false;
            }
            return lu + lt > reach || self.rank_of(vocab, text, s - lu, s + lt) == NONE;
        }
        scratch.clear();
        exact(vocab, &text[s - lu..s + lt], scratch);
        scratch[..] == [spine_id(hu), spine_id(ht)]
    }

    /// Encodes `text` (at least two bytes) into `out`. Returns false, having written nothing,
    /// if the walk ever found no way on, which the argument above rules out; the caller then
    /// uses the bucket engine.
    pub fn encode<S: Sink>(&self, vocab: &Vocab, text: &[u8], out: &mut S) -> bool {
        let n = text.len();
        // The kept tokens (their info words), each with how much longer than it the longest
        // token starting where it does is (the top two bits): one stream of memory, not two.
        // Room for a token per byte, the most there can be: growing would copy the stack into
        // fresh pages (random letters keep about 0.66 tokens per byte, CJK 0.79); pages never
        // written cost nothing. The thread's last stack is reused (see `KEPT`): a fresh one
        // is fresh pages, and their faults were a fifth of the time of 10^6 CJK characters.
        // With it, one bit per position, set where no encoding of the rest starts: the
        // thread's last bitmap, all zero.
        let Kept { mut stack, mut dead } = KEPT.with(|c| c.take());
        stack.clear();
        // New vectors rather than `reserve`, which would copy the old contents (the bitmap's
        // are all zero anyway).
        if stack.capacity() < n {
            stack = Vec::with_capacity(n);
        }
        if dead.len() < n / 64 + 1 {
            dead = vec![0; n / 64 + 1];
        }
        let mut scratch = Vec::new();
        // A direct-mapped memo of general tests (key u << 32 | t of the ids, the answer
        // in bit 63): long runs repeat the same few pairs. At most 256 entries (2 KB): random
        // letters hit any size of it about 1% of the time, and 4096 entries filled L1. Sized
        // to the piece, so a short one clears less.
        let bits = (usize::BITS - n.leading_zeros()).clamp(6, MEMO_BITS);
        let mut memo = vec![u64::MAX; 1 << bits];
        let mut pos = 0;
        // The last walk that started inside a run of one byte, and where: such runs walk the
        // same bytes each time, which a comparison of those bytes confirms faster than a trie
        // walk. Kept as the start, the bytes read and the result packed in one word (few
        // registers are free in this loop). Walks that start after a different byte (nearly
        // all in random text) are neither kept nor checked: the bookkeeping on every walk cost
        // random letters and CJK about a tenth.
        let Walk { mut cand, mut len, reach: mut here, .. } = self.longest(text, 0);
        let (mut last_pos, mut last_seen, mut last) = (0, NOT_AGAIN, 0u64);
        // No position above this one is marked dead (see the runs below).
        let mut max_dead = 0;
        loop {
            let end = pos + len;
            let ok = dead[end / 64] >> (end % 64) & 1 == 0
                && match stack.last() {
                    None => true,
                    // A single byte with no longer token starting where it does: its run
                    // has no merges, and every pair across the boundary starts there and is
                    // longer than any token there, so nothing can cross (common in CJK). (The
                    // quick test says so too, at more cost than the mispredicted branch: it
                    // depends on the stack only.)
                    Some(&u) if u & (0xff << INFO_LEN_SHIFT | 3 << REACH_SHIFT) == 1 << INFO_LEN_SHIFT => true,
                    Some(&u) => match self.quick(vocab, text, pos, u, cand) {
                        q @ (0 | 1) => q == 1,
                        _ => {
                            let (iu, it) = (u & INFO_ID, cand & INFO_ID);
                            let key = (iu as u64) << 32 | it as u64;
                            let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize;
                            let m = memo[slot];
                            if m & !(1 << 63) == key {
                                m >> 63 == 1
                            } else {
                                let c = self.general(vocab, text, pos, u, cand, &mut scratch);
                                memo[slot] = key | (c as u64) << 63;
                                c
                            }
                        }
                    },
                };
            if ok {
                // How much longer than this token the longest token here is (3: 3 or more).
                stack.push(stacked(cand, len, here));
                pos = end;
                if pos == n {
                    break;
                }
                if text[pos] != text[pos - 1] {
                    // (A call of its own, so that nothing of the bookkeeping is left in it.)
                    let w = self.longest(text, pos);
                    (cand, len, here) = (w.cand, w.len, w.reach);
                } else if last_seen <= n - pos
                    && text[pos] == text[last_pos]
                    && same_bytes(text, pos, last_pos, last_seen)
                {
                    (cand, len, here) = (last as u32, (last >> 32) as u8 as usize, (last >> 40) as u8 as usize);
                    // Deep in a run of one byte the same token repeats, and so does everything
                    // about it: when the last two kept tokens are this one (same word), the test
                    // of the pair passed with all the bytes it reads (u's and t's) being the
                    // run's byte, and the walk is reused at every position p with p + seen inside
                    // the run. So each such position keeps the same token, as long as no dead
                    // mark is in the way (none above `max_dead`): push them all at once, leaving
                    // the last to the loop. A run costs a scan for its end and a store per token.
                    let w = stacked(cand, len, here);
                    let sl = stack.len();
                    if pos > max_dead && sl >= 2 && stack[sl - 1] == w && stack[sl - 2] == w {
                        let run = run_end(text, pos);
                        if run - pos >= last_seen {
                            let m = (run - pos - last_seen) / len;
                            stack.resize(sl + m, w);
                            pos += m * len;
                        }
                    }
                } else {
                    let w = self.longest(text, pos);
                    (cand, len, here) = (w.cand, w.len, w.reach);
                    (last_pos, last_seen) = (pos, w.seen);
                    last = cand as u64 | (len as u64) << 32 | (here as u64) << 40;
                }
                continue;
            }
            let mut next = self.shorter(text, pos, cand);
            while next == NONE {
                // Nothing continues from here: remember, and step back one token.
                dead[pos / 64] |= 1 << (pos % 64);
                max_dead = max_dead.max(pos);
                #[cfg(test)]
                tests::MARKS.with(|m| m.set(m.get() + 1));
                let Some(w) = stack.pop() else {
                    debug_assert!(false, "the walk found no encoding");
                    return false;
                };
                pos -= info_len(w);
                here = reach_of(w);
                next = self.shorter(text, pos, w);
            }
            cand = next;
            len = info_len(cand);
        }
        for w in &mut stack {
            *w &= INFO_ID;
        }
        out.extend(&stack);
        if stack.capacity() <= KEPT_STACK {
            // Every bit set is at a position up to `max_dead`: clearing those words leaves the
            // bitmap all zero for the next call, which then writes nothing for a fresh one.
            dead[..=max_dead / 64].fill(0);
            KEPT.with(|c| c.set(Kept { stack, dead }));
        }
        true
    }
}

/// The most stack entries (4 bytes each) a thread keeps between calls: 16 MiB, the stack of a
/// piece of 4 MB (and its dead-position bitmap, 512 KB). Only pieces over 128 bytes use them,
/// so a thread that never meets one holds nothing; larger ones are freed after their call.
const KEPT_STACK: usize = 1 << 22;

/// What a thread keeps of the walk between calls: its stack and its dead-position bitmap (all
/// zero between calls). Both are kept while the stack is within [`KEPT_STACK`], and the
/// bitmap is never longer than the largest piece the stack had room for.
#[derive(Default)]
struct Kept {
    stack: Vec<u32>,
    dead: Vec<u64>,
}

thread_local! {
    /// The walk's memory, lent to one call at a time (a nested call, were there one, would
    /// find it empty and allocate its own). The stack: process-level A/B, 10^6 CJK
    /// characters, 1.23x over bf20671 with a fresh stack per call, 1.72x with this one;
    /// time(10^6) / time(10^5) 14.7 -> 11.3 (docs/engine-experiments.md, fifth pass). The
    /// bitmap: a fresh one per call was a `calloc` of n/8 bytes (125 KB for a piece of 10^6
    /// bytes), and in a process whose heap other libraries had fragmented, glibc's
    /// `_int_malloc` took 5.6% of a loop of `a*n` calls (perf, cl100k, after encode.py's
    /// `measure`; docs/engine-experiments.md, eighteenth pass).
    static KEPT: std::cell::Cell<Kept> = const { std::cell::Cell::new(Kept { stack: Vec::new(), dead: Vec::new() }) };
}

const MEMO_BITS: u32 = 8;

/// The end of the run of `text[pos]` that `pos` is in: the first later position holding
/// another byte, or the text's length.
fn run_end(text: &[u8], pos: usize) -> usize {
    let b = text[pos];
    let mut i = pos;
    let all = u64::from_le_bytes([b; 8]);
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap()) ^ all;
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < text.len() && text[i] == b {
        i += 1;
    }
    i
}

/// Whether `text[a..a + k]` and `text[b..b + k]` are equal (both in the text, k >= 1): one
/// masked compare of two 8-byte loads for the few bytes most walks read.
#[inline(always)]
fn same_bytes(text: &[u8], a: usize, b: usize, k: usize) -> bool {
    let n = text.len();
    if k <= 8 && a + 8 <= n && b + 8 <= n {
        let load = |i: usize| u64::from_le_bytes(text[i..i + 8].try_into().unwrap());
        // Little-endian: the first k bytes are the low 8k bits.
        (load(a) ^ load(b)) << (64 - 8 * k) == 0
    } else {
        text[a..a + k] == text[b..b + k]
    }
}

/// The definition, run on a few hundred bytes at most (exact for any table).
fn exact(vocab: &Vocab, bytes: &[u8], out: &mut Vec<u32>) {
    if bytes.len() == 1 {
        out.push(vocab.byte_rank(bytes[0]));
    } else if bytes.len() <= super::merge::SMALL {
        super::merge::merge_piece(vocab, bytes, out);
    } else {
        super::bucket::merge_buckets(vocab, bytes, out);
    }
}

/// Merges a piece longer than the quadratic scan's limit: the backtracking walk when the
/// table fits it, else the bucket engine.
pub fn merge_long<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if let Some(engine) = vocab.backtrack() {
        if engine.encode(vocab, piece, out) {
            return;
        }
    }
    super::bucket::merge_buckets(vocab, piece, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::rank::merge::merge_reference;

    /// All bytes, then the given tokens in rank order.
    fn vocab(tokens: &[Vec<u8>]) -> Vocab {
        crate::test_data::byte_vocab(tokens)
    }

    use crate::test_data::Rng;

    /// A table made the way BPE training makes one: repeatedly merge the most frequent adjacent
    /// pair of a sample (so ranks follow merge order, the common case).
    fn trained(rng: &mut Rng, alphabet: &[u8], merges: usize) -> Vec<Vec<u8>> {
        let sample = rng.text(alphabet, 3000);
        let mut parts: Vec<Vec<u8>> = sample.iter().map(|&b| vec![b]).collect();
        let mut out: Vec<Vec<u8>> = Vec::new();
        for _ in 0..merges {
            let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), usize> = Default::default();
            for w in parts.windows(2) {
                *counts.entry((w[0].clone(), w[1].clone())).or_default() += 1;
            }
            let Some(((a, b), _)) = counts.into_iter().max_by_key(|(k, c)| (*c, std::cmp::Reverse(k.clone()))) else { break };
            let joined = [a.clone(), b.clone()].concat();
            let mut next = Vec::with_capacity(parts.len());
            let mut i = 0;
            while i < parts.len() {
                if i + 1 < parts.len() && parts[i] == a && parts[i + 1] == b {
                    next.push(joined.clone());
                    i += 2;
                } else {
                    next.push(parts[i].clone());
                    i += 1;
                }
            }
            parts = next;
            if joined.len() > 64 {
                break;
            }
            if !out.contains(&joined) {
                out.push(joined);
            }
        }
        out
    }

    /// A table with no merge order at all: random strings at random ranks.
    fn random_table(rng: &mut Rng, alphabet: &[u8], n: usize) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        while out.len() < n {
            let len = 2 + rng.below(5);
            let t = rng.text(alphabet, len);
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    fn run(v: &Vocab, text: &[u8]) -> Vec<u32> {
        let engine = Backtrack::build(v).expect("toy tables fit");
        let mut got = Vec::new();
        assert!(engine.encode(v, text, &mut got), "the walk must always finish");
        got
    }

    fn check_table(v: &Vocab, rng: &mut Rng, alphabet: &[u8], what: &str) {
        let engine = Backtrack::build(v).unwrap();
        // The compatibility test against the definition, for every pair of candidates.
        let cands: Vec<u32> = (0..v.table_len() as u32).filter(|&t| engine.rec_of[t as usize] != NONE).collect();
        let short: Vec<u32> = cands.iter().copied().filter(|&t| t >= 256 || alphabet.contains(&(t as u8))).collect();
        let mut scratch = Vec::new();
        let mut quick = 0;
        for &u in &short {
            for &t in &short {
                let text = [v.token(u).unwrap(), v.token(t).unwrap()].concat();
                let s = v.token(u).unwrap().len();
                let want = merge_reference(v, &text) == [u, t];
                let (ru, rt) = (engine.rec_of[u as usize], engine.rec_of[t as usize]);
                assert_eq!(engine.compatible(v, &text, s, ru, rt, usize::MAX, &mut scratch), want, "{what}: {:?}", String::from_utf8_lossy(&text));
                // The quick test, from the info words, with every reach the walk could have
                // found at u (the longest token starting there inside u t, or anything longer,
                // which a longer text could hold): right whenever it answers.
                let here = (1..=text.len()).rev().find(|&l| v.rank(&text[..l]).is_some()).unwrap();
                let (iu, it) = (engine.rec[ru as usize + REC_INFO], engine.rec[rt as usize + REC_INFO]);
                assert_eq!((info_len(iu), iu & INFO_ID, info_len(it), it & INFO_ID), (s, u, text.len() - s, t));
                for d in (here - s).min(3)..=3 {
                    let q = engine.quick(v, &text, s, iu | (d as u32) << REACH_SHIFT, it);
                    if q != 2 {
                        assert_eq!(q == 1, want, "{what}: quick, reach {d} more: {:?}", String::from_utf8_lossy(&text));
                        quick += 1;
                    }
                }
            }
        }
        assert!(quick > 0, "{what}: the quick test never answered");
        // Which tokens are candidates: exactly those that encode to themselves.
        for t in 0..v.table_len() as u32 {
            let want = merge_reference(v, v.token(t).unwrap()) == [t];
            assert_eq!(engine.rec_of[t as usize] != NONE, want, "{what}: token {t}");
        }
        // Whole texts.
        for len in [1, 2, 3, 5, 9, 17, 40, 129, 300] {
            let text = rng.text(alphabet, len);
            assert_eq!(run(v, &text), merge_reference(v, &text), "{what}: {:?}", String::from_utf8_lossy(&text));
        }
        let text = rng.text(alphabet, 3000);
        let mut want = Vec::new();
        crate::models::rank::bucket::merge_buckets(v, &text, &mut want);
        assert_eq!(run(v, &text), want, "{what}: 3000 bytes");
    }

    #[test]
    fn toy_table_agrees_with_the_definition() {
        let toks: Vec<Vec<u8>> =
            ["aa", "ab", "aaa", "bc", "abc", "aaaa", "ca", "cab", "bca"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let v = vocab(&toks);
        for s in ["aaaaaaa", "abcabcab", "aabcaab", "cabca", "a", "zz", "aaab", "bcaaaab"] {
            assert_eq!(run(&v, s.as_bytes()), merge_reference(&v, s.as_bytes()), "{s}");
        }
        check_table(&v, &mut Rng(0x9e3779b97f4a7c15), b"abc", "toy");
    }

    #[test]
    fn trained_tables_agree_with_the_definition() {
        let mut rng = Rng(0x2545f4914f6cdd1d);
        for round in 0..12 {
            let alphabet: &[u8] = if round % 3 == 0 { b"a" } else if round % 3 == 1 { b"ab" } else { b"abcd" };
            let toks = trained(&mut rng, alphabet, 40);
            let v = vocab(&toks);
            check_table(&v, &mut rng, alphabet, &format!("trained {round}"));
        }
    }

    /// Tables that are not a merge order: tokens that do not encode to themselves, tokens whose
    /// own run is not in rank order, splits that are not the canonical one.
    #[test]
    fn random_tables_agree_with_the_definition() {
        let mut rng = Rng(0xd1b54a32d192ed03);
        for round in 0..40 {
            let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abc" };
            let toks = random_table(&mut rng, alphabet, 30);
            let v = vocab(&toks);
            check_table(&v, &mut rng, alphabet, &format!("random {round}: {toks:?}"));
        }
    }

    /// The quick test against the definition on many small random tables (more tables than
    /// `random_tables_agree_with_the_definition`, each checked only on pairs of its tokens,
    /// with every reach the walk could report).
    #[test]
    fn quick_test_agrees_with_the_definition() {
        let mut rng = Rng(0x3c6ef372fe94f82b);
        let (mut answered, mut pairs) = (0, 0);
        for round in 0..400 {
            let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abc" };
            let mut toks: Vec<Vec<u8>> = Vec::new();
            let size = 3 + rng.below(12);
            while toks.len() < size {
                let len = 2 + rng.below(3);
                let t = rng.text(alphabet, len);
                if !toks.contains(&t) {
                    toks.push(t);
                }
            }
            let v = vocab(&toks);
            let engine = Backtrack::build(&v).unwrap();
            let cands: Vec<u32> = (0..v.table_len() as u32)
                .filter(|&t| engine.rec_of[t as usize] != NONE && (t >= 256 || alphabet.contains(&(t as u8))))
                .collect();
            for &u in &cands {
                for &t in &cands {
                    let text = [v.token(u).unwrap(), v.token(t).unwrap()].concat();
                    let s = v.token(u).unwrap().len();
                    let want = merge_reference(&v, &text) == [u, t];
                    let here = (1..=text.len()).rev().find(|&l| v.rank(&text[..l]).is_some()).unwrap();
                    let iu = engine.rec[engine.rec_of[u as usize] as usize + REC_INFO];
                    let it = engine.rec[engine.rec_of[t as usize] as usize + REC_INFO];
                    for d in (here - s).min(3)..=3 {
                        pairs += 1;
                        let q = engine.quick(&v, &text, s, iu | (d as u32) << REACH_SHIFT, it);
                        if q != 2 {
                            answered += 1;
                            assert_eq!(q == 1, want, "{toks:?}: {:?}, reach {d} more", String::from_utf8_lossy(&text));
                        }
                    }
                }
            }
        }
        assert!(answered * 4 > pairs, "the quick test answered {answered} of {pairs}");
    }

    #[test]
    fn runs_of_one_byte() {
        let toks: Vec<Vec<u8>> = (2..=16).map(|n| vec![b'a'; n]).collect();
        for order in 0..3 {
            let mut t = toks.clone();
            if order == 1 {
                t.reverse();
            } else if order == 2 {
                t.sort_by_key(|x| (x.len() % 3, x.len()));
            }
            let v = vocab(&t);
            for n in [2, 3, 7, 16, 17, 100, 1000, 4099] {
                let text = vec![b'a'; n];
                let mut want = Vec::new();
                crate::models::rank::bucket::merge_buckets(&v, &text, &mut want);
                assert_eq!(run(&v, &text), want, "order {order}, n {n}");
            }
        }
    }

    /// Long runs of one byte push their repeating token in batches (`run_end`): runs of every
    /// length between other bytes, on tables where the greedy choice in a run fails and the
    /// walk steps back inside it (random tables of a's, not a merge order), and trained ones.
    #[test]
    fn runs_in_batches() {
        let mut rng = Rng(0xbb67ae8584caa73b);
        for round in 0..60 {
            let toks: Vec<Vec<u8>> = if round % 3 == 0 {
                trained(&mut rng, b"aab", 30)
            } else {
                let mut t: Vec<Vec<u8>> = (0..12).map(|_| vec![b'a'; 2 + rng.below(9)]).collect();
                t.extend((0..6).map(|_| {
                    let len = 2 + rng.below(4);
                    rng.text(b"ab", len)
                }));
                t.sort();
                t.dedup();
                // A random order of ranks.
                for k in (1..t.len()).rev() {
                    let j = rng.below(k + 1);
                    t.swap(k, j);
                }
                t
            };
            let v = vocab(&toks);
            let mut text: Vec<u8> = Vec::new();
            for _ in 0..20 {
                let n = rng.below(300);
                text.resize(text.len() + n, b'a');
                let len = 1 + rng.below(3);
                text.extend_from_slice(&rng.text(b"ab", len));
            }
            let mut want = Vec::new();
            crate::models::rank::bucket::merge_buckets(&v, &text, &mut want);
            assert_eq!(run(&v, &text), want, "round {round}: {toks:?}");
            assert_eq!(run(&v, &text[..text.len() / 2]), merge_reference(&v, &text[..text.len() / 2]), "round {round}");
        }
    }

    thread_local! {
        /// Dead ends the walk marked on this thread (counted in test builds only).
        pub(super) static MARKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The thread's dead-end bitmap is all zero after every walk, including walks that marked
    /// dead ends (the next walk relies on it: a stale mark would refuse a token there).
    #[test]
    fn dead_end_bitmap_is_left_clear() {
        let mut rng = Rng(0x510e527fade682d1);
        let before = MARKS.with(|m| m.get());
        for round in 0..40 {
            let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abc" };
            let v = vocab(&random_table(&mut rng, alphabet, 30));
            for _ in 0..20 {
                let n = 129 + rng.below(400);
                let text = rng.text(alphabet, n);
                let mut want = Vec::new();
                crate::models::rank::bucket::merge_buckets(&v, &text, &mut want);
                assert_eq!(run(&v, &text), want);
                let dirty = KEPT.with(|c| {
                    let kept = c.take();
                    let dirty = kept.dead.iter().any(|&w| w != 0);
                    c.set(kept);
                    dirty
                });
                assert!(!dirty, "round {round}: a dead-end mark was left for the next walk");
            }
        }
        assert!(MARKS.with(|m| m.get()) > before, "no walk marked a dead end: the test checks nothing");
    }

    /// Repeats reuse the last trie walk when the bytes it read recur (`Walk::seen`): runs that
    /// end in other bytes or at the end of the text, periodic texts, and a table whose longest
    /// token is a single byte.
    #[test]
    fn repeated_walks() {
        let mut rng = Rng(0x6a09e667f3bcc908);
        let toks: Vec<Vec<u8>> = ["aa", "aaa", "aaaa", "ab", "aab", "ba", "abab", "ababa", "bb", "aaaaaaaaaaab", "aaaaaaaaaa"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let tables = [vocab(&toks), vocab(&random_table(&mut rng, b"ab", 40)), vocab(&[])];
        for v in &tables {
            for unit in ["a", "ab", "aab", "abb", "aaaaaaaaaab"] {
                for n in [129, 130, 131, 300, 1001] {
                    for tail in ["", "b", "a", "ba", "aaaaaaaaaaa"] {
                        let text: Vec<u8> = unit.bytes().cycle().take(n).chain(tail.bytes()).collect();
                        let mut want = Vec::new();
                        crate::models::rank::bucket::merge_buckets(v, &text, &mut want);
                        assert_eq!(run(v, &text), want, "{unit:?} x {n} + {tail:?}");
                    }
                }
            }
        }
    }
}

/// The real tables, when `BYTEPAIR_VOCAB_DIR` points at the `.tiktoken` files: build time, how
/// many tokens take each path, and agreement with the bucket engine on long pieces. Missing
/// files skip the test locally and fail it in CI (see `crate::test_data`).
#[cfg(test)]
mod real_tables {
    use super::*;

    #[test]
    fn real_tables_agree_with_the_bucket_engine() {
        for name in ["cl100k_base", "o200k_base"] {
            let Some(path) = crate::test_data::require("BYTEPAIR_VOCAB_DIR", &format!("{name}.tiktoken")) else { return };
            let data = std::fs::read(&path).unwrap();
            let mut ranks = crate::formats::tiktoken::parse(&data).unwrap();
            check_real(name, &ranks);
            // The same tokens with a third of the multi-byte ranks shuffled among themselves:
            // not a merge order, so irregular and non-candidate tokens at full scale.
            let mut x: u64 = 0x853c49e6748fea9b;
            let mut rnd = move |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let picked: Vec<usize> = (0..ranks.len()).filter(|&k| ranks[k].0.len() > 1 && rnd(3) == 0).collect();
            for k in (1..picked.len()).rev() {
                let j = rnd(k as u64 + 1) as usize;
                let (a, b) = (picked[k], picked[j]);
                let (ra, rb) = (ranks[a].1, ranks[b].1);
                ranks[a].1 = rb;
                ranks[b].1 = ra;
            }
            check_real(&format!("{name} scrambled"), &ranks);
        }
    }

    fn check_real(name: &str, ranks: &[(Vec<u8>, u32)]) {
        {
            let v = Vocab::new(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), []).unwrap();
            let t0 = std::time::Instant::now();
            let e = Backtrack::build(&v).unwrap();
            let built = t0.elapsed();
            let kind = |r: u32| if r == NONE { NOT_CANDIDATE } else { e.rec[r as usize + REC_KIND] as u8 };
            let count = |k: u8| (0..v.table_len()).filter(|&t| v.token(t as u32).is_some() && kind(e.rec_of[t]) == k).count();
            eprintln!(
                "{name}: built in {built:?}; monotone {}, irregular {}, not candidates {}; trie nodes {} ({} wide), record words {}; {} bytes",
                count(MONOTONE),
                count(IRREGULAR),
                count(NOT_CANDIDATE),
                e.node.len(),
                e.wide.len(),
                e.rec.len(),
                e.heap_bytes()
            );
            let mut x: u64 = 0x9e3779b97f4a7c15;
            let mut rnd = |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let samples: Vec<Vec<u8>> = vec![
                vec![b'a'; 5000],
                vec![b' '; 5000],
                vec![b'\n'; 5000],
                vec![b'^'; 5000],
                (0..20000).map(|_| b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[rnd(52) as usize]).collect(),
                (0..3000).flat_map(|_| char::from_u32(0x4E00 + rnd(0x5200) as u32).unwrap().to_string().into_bytes()).collect(),
                (0..20000).map(|_| b" \n\ta"[rnd(4) as usize]).collect(),
                (0..20000).map(|_| rnd(256) as u8).collect(),
            ];
            for s in &samples {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                assert!(e.encode(&v, s, &mut a));
                crate::models::rank::bucket::merge_buckets(&v, s, &mut b);
                assert_eq!(a, b, "{name}: {:?}", String::from_utf8_lossy(&s[..40]));
            }
        }
    }
}
