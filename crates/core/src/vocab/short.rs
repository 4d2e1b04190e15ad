//! The rank index for tokens of at most 7 bytes, which is where almost every lookup of the merge
//! engine and of whole pieces lands.
//!
//! A token of up to 7 bytes packs into one `u64` (its bytes little-endian, its length in the top
//! byte), so a lookup is a multiply, one probe into an open-addressed table and an integer
//! compare: one cache miss, no pointer to chase and no `memcmp`, where the general index needs
//! three (slot, span table, blob). The slots are 8 bytes for the built-in tables (the key is
//! stored as its quotient, see [`ShortIndex`]): half the cache footprint of `(key, rank)` pairs.

use super::pages::{in_home_order, touch_pages, ZeroedPages};

/// Longest token this index holds.
pub const MAX_SHORT: usize = 7;

const EMPTY: u64 = 0; // no key is 0: the length byte of a real key is at least 1

/// `[key, rank]`; all zero is an empty slot, so the table starts as zeroed pages
/// ([`ZeroedPages`]: no pass fills it).
type Slot = [u64; 2];

/// Bits of a narrow slot holding its distance from its home slot plus one (0 = empty).
const DIST_BITS: u32 = 5;
/// Farthest a narrow slot may sit from its home; a table that needs more is built wide.
const MAX_DIST: u64 = (1 << DIST_BITS) - 2;
/// Slots a narrow lookup reads at once, from home ([`ShortIndex::get_or_none`]).
const WINDOW: usize = 4;
/// [`ShortIndex::get_or_none`] of a key that is not there. No rank is this: ranks are at most
/// 2^31 - 1 (`MAX_TOKEN_ID`).
pub const NONE: u32 = u32::MAX;

/// Two layouts, chosen at build time, over a table of 2^b slots:
/// - *narrow* (o200k_base, cl100k_base, and any table whose ranks fit in b bits and whose keys
///   all sit within [`MAX_DIST`] slots of home): one `u64` per slot, from the top: the
///   quotient (59 - b bits), the distance from home plus one (5 bits), the rank (b bits). A key
///   has 59 bits (56 of bytes, 3 of length); shifted up by 5 and multiplied by an odd number
///   it is a bijection of the top 59 bits of a word, whose top b bits are the home slot and the
///   rest the quotient, so home and quotient together are the key, and a slot matches when its
///   quotient and distance are the ones wanted: one XOR and one compare. Half the footprint
///   of the wide slots (o200k_base 2 MB, cl100k_base 1 MB).
/// - *wide*: `(key, rank)` in 16 bytes, for tables outside those limits.
#[derive(Clone)]
pub struct ShortIndex {
    narrow: ZeroedPages<u64>,
    wide: ZeroedPages<Slot>,
    is_narrow: bool,
    /// b: the table has 2^b slots.
    bits: u32,
}

impl std::fmt::Debug for ShortIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShortIndex(2^{} slots, narrow {})", self.bits, self.is_narrow)
    }
}

/// Packs 1..=7 bytes into a key. Reads overlapping words instead of copying byte by byte: the
/// bytes that two reads share land at the same bit positions, so OR-ing them changes nothing.
#[inline(always)]
pub fn pack(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!((1..=MAX_SHORT).contains(&n));
    let v = if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | hi << ((n - 4) * 8)
    } else if n >= 2 {
        let lo = u16::from_le_bytes([b[0], b[1]]) as u64;
        let hi = u16::from_le_bytes([b[n - 2], b[n - 1]]) as u64;
        lo | hi << ((n - 2) * 8)
    } else {
        b[0] as u64
    };
    v | (n as u64) << 56
}

/// The key of the `n` (1..=7) bytes at the start of `w` (a little-endian load of at least
/// those bytes): [`pack`] without a branch on the length, for callers that can read 8 bytes.
#[inline(always)]
pub fn pack_word(w: u64, n: usize) -> u64 {
    debug_assert!((1..=MAX_SHORT).contains(&n));
    (w & (u64::MAX >> (64 - 8 * n))) | (n as u64) << 56
}

impl ShortIndex {
    fn slots_for(n: usize) -> usize {
        // Load factor at most 3/5 (o200k_base: 0.50; cl100k_base: 0.54): probe runs stay
        // short, and half the table of a load of at most 1/2 means half the cache footprint
        // and half the page faults at start-up. Measured side by side, encoding was no slower
        // (docs/engine.md).
        (n * 5 / 3 + 1).next_power_of_two().max(16)
    }

    /// An empty wide index sized for `n` keys (filled with [`insert`](Self::insert)).
    pub fn with_capacity(n: usize) -> ShortIndex {
        let size = Self::slots_for(n);
        ShortIndex {
            narrow: ZeroedPages::new(0),
            wide: ZeroedPages::new(size),
            is_narrow: false,
            bits: size.trailing_zeros(),
        }
    }

    /// The index of `(key, rank)` pairs, sized for `n` keys, or the ranks `(earlier, later)`
    /// of a key given twice.
    ///
    /// The keys are inserted in order of their home slot (`pages::in_home_order`), not in the
    /// order given: consecutive inserts then land in neighbouring slots, so a cold table fills
    /// front to back with a page fault and a few cache misses per page, instead of a cache and
    /// TLB miss for nearly every key. The table that results answers every lookup as one filled
    /// in any other order would. Narrow when quotient, rank and distance fit in a slot and no
    /// key sits more than [`MAX_DIST`] slots from home; wide otherwise.
    pub fn from_pairs(n: usize, pairs: &[(u64, u32)]) -> Result<ShortIndex, (u32, u32)> {
        let size = Self::slots_for(n);
        let table_bits = size.trailing_zeros();
        let bucket_bits = table_bits.min(12);
        let ordered = in_home_order(pairs.iter().copied(), bucket_bits, |&(key, _)| {
            Self::home(key, table_bits) >> (table_bits - bucket_bits)
        });
        let max_rank = ordered.iter().map(|&(_, rank)| rank).max().unwrap_or(0);
        if (max_rank as u64) < 1 << table_bits {
            let mut idx =
                ShortIndex { narrow: ZeroedPages::new(size), wide: ZeroedPages::new(0), is_narrow: true, bits: table_bits };
            touch_pages(&mut idx.narrow[..]);
            let mut fits = true;
            for &(key, rank) in &ordered {
                match idx.insert_narrow(key, rank) {
                    Ok(true) => {}
                    Ok(false) => {
                        fits = false;
                        break;
                    }
                    Err(prev) => return Err((prev, rank)),
                }
            }
            if fits {
                return Ok(idx);
            }
        }
        let mut idx = ShortIndex::with_capacity(n);
        touch_pages(&mut idx.wide[..]);
        for (key, rank) in ordered {
            // Equal keys share a bucket and keep their given order, so `prev` came first.
            idx.insert(key, rank).map_err(|prev| (prev, rank))?;
        }
        Ok(idx)
    }

    /// Narrow insert: `Ok(false)` when the key would sit too far from home.
    fn insert_narrow(&mut self, key: u64, rank: u32) -> Result<bool, u32> {
        let (mut i, mut want, step) = self.narrow_start(key);
        let mask = self.narrow.len() - 1;
        for _ in 0..=MAX_DIST {
            let s = &mut self.narrow[i];
            if *s == 0 {
                *s = want | rank as u64;
                return Ok(true);
            }
            if *s ^ want < step {
                return Err((*s & (step - 1)) as u32);
            }
            want += step;
            i = (i + 1) & mask;
        }
        Ok(false)
    }

    /// Home slot, the slot value wanted there with the rank bits zero, and the increment of
    /// that value per slot further from home.
    #[inline(always)]
    fn narrow_start(&self, key: u64) -> (usize, u64, u64) {
        let h = Self::hash(key);
        let step = 1u64 << self.bits;
        (Self::home(key, self.bits), (h << self.bits) + step, step)
    }

    /// Adds a key to a wide index; a key already present keeps its rank, which is returned as
    /// the error. At most the capacity given to [`with_capacity`](Self::with_capacity) keys fit.
    pub fn insert(&mut self, key: u64, rank: u32) -> Result<(), u32> {
        assert!(!self.is_narrow, "insert is for wide indexes");
        let mask = self.wide.len() - 1;
        let mut i = Self::home(key, self.bits);
        loop {
            let s = &mut self.wide[i];
            if s[0] == EMPTY {
                *s = [key, rank as u64];
                return Ok(());
            }
            if s[0] == key {
                return Err(s[1] as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// A bijection of the 59-bit keys onto the top 59 bits of a word (the low 5 are zero):
    /// multiplying by an odd number mixes every key bit into the top bits, which pick the home
    /// slot (Fibonacci hashing).
    #[inline(always)]
    fn hash(key: u64) -> u64 {
        (key << DIST_BITS).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    #[inline(always)]
    fn home(key: u64, bits: u32) -> usize {
        (Self::hash(key) >> (64 - bits)) as usize
    }

    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        if self.is_narrow {
            let (mut i, mut want, step) = self.narrow_start(key);
            // The home slot first, outside the walk: nearly every lookup of a whole piece ends
            // there (found, or an empty slot), and the walk's distance counter and wrap-around
            // are instructions such a lookup does not need (docs/engine-measurements.md,
            // "Eleventh pass (warm, Latin, numpy)").
            debug_assert!(i < self.narrow.len());
            // Safety: a home slot is the hash's top `bits` bits, below 2^bits, the table's
            // length (`from_pairs`, the one place a narrow index is made, with at least 16
            // slots). The bounds check it replaces was three instructions a lookup.
            let s = unsafe { *self.narrow.get_unchecked(i) };
            if s ^ want < step {
                return Some((s & (step - 1)) as u32);
            }
            if s == 0 {
                return None;
            }
            let mask = self.narrow.len() - 1;
            want += step;
            i = (i + 1) & mask;
            // No key sits more than MAX_DIST slots from home, so the walk is bounded (and
            // `want` never carries into the quotient).
            for _ in 1..=MAX_DIST {
                let s = self.narrow[i];
                if s ^ want < step {
                    return Some((s & (step - 1)) as u32);
                }
                if s == 0 {
                    return None;
                }
                want += step;
                i = (i + 1) & mask;
            }
            return None;
        }
        let mask = self.wide.len() - 1;
        let mut i = Self::home(key, self.bits);
        loop {
            let [k, rank] = self.wide[i];
            if k == key {
                return Some(rank as u32);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// [`get`](Self::get) as a rank or [`NONE`], with no branch on the outcome: for pair
    /// lookups whose outcomes the branch predictor cannot guess (the merges of pieces that do
    /// not repeat). It reads the first WINDOW slots from home at once. A slot XOR the value
    /// wanted at its distance is below `step` only for the key's own slot, and is then the
    /// rank (the wanted value's rank bits are zero), so the minimum of the XORs is the rank if
    /// the key is in the window. If it is not but a slot is empty, the key is absent (no
    /// deletions: every slot between a key's home and its own is full). Only a full window
    /// without the key (or a home within WINDOW slots of the end) walks on, slot by slot.
    ///
    /// Not for every lookup: where the outcome is predictable (whole pieces of real text, the
    /// pair lookups of German, mostly found at home) `get`'s early exit costs nothing and the
    /// window's wait for all its slots does; used for every merge it cost English and German
    /// 2-4% (docs/engine-experiments.md, "Fifth pass").
    #[inline(always)]
    pub fn get_or_none(&self, key: u64) -> u32 {
        if self.is_narrow {
            let (i, want, step) = self.narrow_start(key);
            if let Some(w) = self.narrow.get(i..i + WINDOW) {
                let (mut d, mut low, mut wj) = (u64::MAX, u64::MAX, want);
                for &s in w {
                    d = d.min(s ^ wj);
                    low = low.min(s);
                    wj += step;
                }
                let hit = d < step;
                // All ones (NONE) without a hit: arithmetic, not a branch.
                let r = (d | (hit as u64).wrapping_sub(1)) as u32;
                if hit | (low == 0) {
                    return r;
                }
            }
        }
        self.get_cold(key)
    }

    /// [`get`](Self::get) out of line, as a rank or [`NONE`]: the rare lookups the window of
    /// [`get_or_none`](Self::get_or_none) does not settle, and wide tables.
    #[cold]
    #[inline(never)]
    fn get_cold(&self, key: u64) -> u32 {
        self.get(key).unwrap_or(NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_is_injective_on_short_strings() {
        let samples: [&[u8]; 9] = [b"a", b"a\0", b"\0a", b"ab", b"abc", b"abcd", b"abcde", b"abcdef", b"abcdefg"];
        let keys: std::collections::HashSet<u64> = samples.iter().map(|s| pack(s)).collect();
        assert_eq!(keys.len(), samples.len());
        for s in samples {
            let mut want = [0u8; 8];
            want[..s.len()].copy_from_slice(s);
            want[7] = s.len() as u8;
            assert_eq!(pack(s), u64::from_le_bytes(want));
        }
    }

    #[test]
    fn pack_word_equals_pack() {
        let text = b"abcdefghijklmnop\xff\x00\x01";
        for start in 0..text.len() - 8 {
            let w = u64::from_le_bytes(text[start..start + 8].try_into().unwrap());
            for n in 1..=MAX_SHORT {
                assert_eq!(pack_word(w, n), pack(&text[start..start + n]));
            }
        }
    }

    #[test]
    fn finds_what_was_inserted() {
        let toks: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("t{i}").into_bytes()).filter(|t| t.len() <= 7).collect();
        let mut idx = ShortIndex::with_capacity(toks.len());
        for (r, t) in toks.iter().enumerate() {
            idx.insert(pack(t), r as u32).unwrap();
        }
        assert_eq!(idx.insert(pack(&toks[0]), 99), Err(0));
        for (r, t) in toks.iter().enumerate() {
            assert_eq!(idx.get(pack(t)), Some(r as u32));
        }
        assert_eq!(idx.get(pack(b"zz")), None);

        let key_of = |r: u32| pack(&toks[r as usize % toks.len()]);
        let pairs = |ranks: &mut dyn Iterator<Item = u32>, key: &dyn Fn(u32) -> u64| ranks.map(|r| (key(r), r)).collect::<Vec<_>>();
        let built = ShortIndex::from_pairs(toks.len(), &pairs(&mut (0..toks.len() as u32), &key_of)).unwrap();
        for (r, t) in toks.iter().enumerate() {
            assert_eq!(built.get(pack(t)), Some(r as u32));
        }
        assert_eq!(built.get(pack(b"zz")), None);
        // Rank toks.len() + 7 has the key of rank 7.
        let twice = (0..toks.len() as u32).chain([toks.len() as u32 + 7]);
        assert_eq!(ShortIndex::from_pairs(toks.len() + 1, &pairs(&mut twice.clone(), &key_of)).unwrap_err(), (7, toks.len() as u32 + 7));
        assert!(built.is_narrow);

        // Ranks too wide for a narrow slot: the same answers from the wide layout.
        let big = 1u32 << 31;
        let key_big = |r: u32| pack(&toks[(r - big) as usize]);
        let wide = ShortIndex::from_pairs(toks.len(), &pairs(&mut (big..big + toks.len() as u32), &key_big)).unwrap();
        assert!(!wide.is_narrow);
        for (r, t) in toks.iter().enumerate() {
            assert_eq!(wide.get(pack(t)), Some(big + r as u32));
        }
        assert_eq!(wide.get(pack(b"zz")), None);
        let twice = (big..big + toks.len() as u32).chain([big + 7]);
        assert_eq!(ShortIndex::from_pairs(toks.len() + 1, &pairs(&mut twice.clone(), &key_big)).unwrap_err(), (big + 7, big + 7));
        // The windowed lookup gives the same answers, present or absent: keys at every distance
        // from home (windows full and not), homes within a window of the table's end (whose
        // windows wrap), and keys never inserted. `dense` holds random keys (the keys above are
        // so regular that Fibonacci hashing spaces them evenly) and is sized for half of them
        // (load about 0.6, where the built-in tables have 0.5), so some sit past the window.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut seen = std::collections::HashSet::new();
        let random: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                let n = 2 + (rnd() % 6) as usize;
                (0..n).map(|_| b"abcdefghij"[(rnd() % 10) as usize]).collect::<Vec<u8>>()
            })
            .filter(|t| seen.insert(t.clone()))
            .take(5000)
            .collect();
        let dense = ShortIndex::from_pairs(random.len() / 2, &pairs(&mut (0..random.len() as u32), &|r| pack(&random[r as usize]))).unwrap();
        assert!(dense.is_narrow);
        let mut absent = 0;
        for (idx, tokens, base) in [(&built, &toks, 0), (&wide, &toks, big), (&dense, &random, 0)] {
            for (r, t) in tokens.iter().enumerate() {
                assert_eq!(idx.get_or_none(pack(t)), base + r as u32);
                for extra in [b"#".as_slice(), b"~~", b"k"] {
                    let mut u = t.clone();
                    u.extend_from_slice(extra);
                    if u.len() <= MAX_SHORT && !tokens.contains(&u) {
                        assert_eq!(idx.get_or_none(pack(&u)), NONE, "{u:?}");
                        assert_eq!(idx.get(pack(&u)), None, "{u:?}");
                        absent += 1;
                    }
                }
            }
        }
        assert!(absent > 10_000);
        let (mask, step) = (dense.narrow.len() - 1, 1u64 << dense.bits);
        let dist = |t: &Vec<u8>| -> usize {
            let (home, want, _) = dense.narrow_start(pack(t));
            (0..).find(|&d| dense.narrow[(home + d) & mask] & !(step - 1) == want + d as u64 * step).unwrap()
        };
        let far = random.iter().filter(|t| dist(t) >= WINDOW).count();
        let wrapping = random.iter().filter(|t| ShortIndex::home(pack(t), dense.bits) + WINDOW > dense.narrow.len()).count();
        assert!(far > 0 && wrapping > 0, "keys past the window: {far}, homes near the end: {wrapping}");
        // Every key absent from the narrow table, including ones sharing homes with present keys.
        for a in 0..=255u8 {
            for b in [b'!', b'~', 0xc3] {
                let k = pack(&[a, b, b'#', b'@']);
                assert_eq!(built.get(k), None);
                assert_eq!(built.get_or_none(k), NONE);
                assert_eq!(dense.get_or_none(k), NONE);
            }
        }
    }
}
