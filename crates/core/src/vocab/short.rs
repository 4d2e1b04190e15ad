//! The rank index for tokens of at most 7 bytes, which is where almost every lookup of the merge
//! engine and of whole pieces lands.
//!
//! A token of up to 7 bytes packs into one `u64` (its bytes little-endian, its length in the top
//! byte), so a lookup is a multiply, one probe into an open-addressed table of `(key, rank)`
//! and an integer compare: one cache miss, no pointer to chase and no `memcmp`, where the
//! general index needs three (slot, span table, blob).

use super::pages::ZeroedPages;

/// Longest token this index holds.
pub const MAX_SHORT: usize = 7;

const EMPTY: u64 = 0; // no key is 0: the length byte of a real key is at least 1

/// `[key, rank]`; all zero is an empty slot, so the table starts as zeroed pages
/// ([`ZeroedPages`]: no pass fills it).
type Slot = [u64; 2];

#[derive(Clone)]
pub struct ShortIndex {
    slots: ZeroedPages<Slot>,
    shift: u32,
}

impl std::fmt::Debug for ShortIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShortIndex({} slots)", self.slots.len())
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
    /// An empty index sized for `n` keys.
    pub fn with_capacity(n: usize) -> ShortIndex {
        // Load factor at most 3/5 (o200k_base: 0.50, 4 MB; cl100k_base: 0.54, 2 MB): probe
        // runs stay short (linear probing, four slots to a cache line), and half the table of
        // a load of at most 1/2 means half the cache footprint and half the page faults at
        // start-up. Measured side by side, encoding was no slower (docs/engine.md).
        let size = (n * 5 / 3 + 1).next_power_of_two().max(16);
        let slots = ZeroedPages::new(size);
        ShortIndex { slots, shift: 64 - size.trailing_zeros() }
    }

    /// The index of `ranks`, whose keys `key_of` gives, or the ranks `(earlier, later)` of a
    /// key given twice.
    ///
    /// The keys are inserted in order of their home slot, not in the order given: consecutive
    /// inserts then land in neighbouring slots, so a cold table (o200k_base's is 4 MB) fills
    /// front to back with a page fault and a few cache misses per page, instead of a cache
    /// and TLB miss for nearly every key. A stable counting sort of `(key, rank)` on the top
    /// bits of the home does the ordering in linear passes; the table that results
    /// answers every lookup as one filled in any other order would.
    pub fn from_ranks<I, K>(n: usize, ranks: I, key_of: K) -> Result<ShortIndex, (u32, u32)>
    where
        I: Iterator<Item = u32> + Clone,
        K: Fn(u32) -> u64,
    {
        let mut idx = ShortIndex::with_capacity(n);
        let table_bits = 64 - idx.shift;
        let bucket_bits = table_bits.min(12);
        let shift = idx.shift;
        let bucket = |rank: u32| Self::home(key_of(rank), shift) >> (table_bits - bucket_bits);
        let mut starts = vec![0usize; (1 << bucket_bits) + 1];
        let mut total = 0;
        for rank in ranks.clone() {
            starts[bucket(rank) + 1] += 1;
            total += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        // The zeroed table's pages are not mapped yet, and an insert reads its slot before
        // writing it: the read would map the shared zero page and the write then fault the
        // page a second time. Writing one slot per page first faults each page once.
        // black_box hides that the memory is already zero, so the writes are not dropped.
        let slots = std::hint::black_box(&mut idx.slots[..]);
        for s in slots.iter_mut().step_by(4096 / std::mem::size_of::<Slot>()) {
            *s = [EMPTY, 0];
        }
        // The keys go with the ranks: computing them again in bucket order would read the
        // token bytes at random.
        let mut ordered = vec![(0u64, 0u32); total];
        for rank in ranks {
            let key = key_of(rank);
            let at = &mut starts[Self::home(key, shift) >> (table_bits - bucket_bits)];
            ordered[*at] = (key, rank);
            *at += 1;
        }
        for (key, rank) in ordered {
            // Equal keys share a bucket and keep their given order, so `prev` came first.
            idx.insert(key, rank).map_err(|prev| (prev, rank))?;
        }
        Ok(idx)
    }

    /// Adds a key; a key already present keeps its rank, which is returned as the error.
    /// At most the capacity given to [`with_capacity`](Self::with_capacity) keys fit.
    pub fn insert(&mut self, key: u64, rank: u32) -> Result<(), u32> {
        let mask = self.slots.len() - 1;
        let mut i = Self::home(key, self.shift);
        loop {
            let s = &mut self.slots[i];
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

    #[inline(always)]
    fn home(key: u64, shift: u32) -> usize {
        // Fibonacci hashing: the multiply mixes every key byte into the top bits we keep.
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = Self::home(key, self.shift);
        loop {
            let [k, rank] = self.slots[i];
            if k == key {
                return Some(rank as u32);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
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
        let built = ShortIndex::from_ranks(toks.len(), 0..toks.len() as u32, key_of).unwrap();
        for (r, t) in toks.iter().enumerate() {
            assert_eq!(built.get(pack(t)), Some(r as u32));
        }
        assert_eq!(built.get(pack(b"zz")), None);
        // Rank toks.len() + 7 has the key of rank 7.
        let twice = (0..toks.len() as u32).chain([toks.len() as u32 + 7]);
        assert_eq!(ShortIndex::from_ranks(toks.len() + 1, twice, key_of).unwrap_err(), (7, toks.len() as u32 + 7));
    }
}
