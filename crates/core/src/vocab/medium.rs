//! The rank index for tokens of 8 to 15 bytes: the whole-word pieces of real text that are too
//! long for [`super::short`] (" through", " government", "ungsweise").
//!
//! Same idea as the short index, one size up: a token packs into two words (bytes 0-7, then
//! bytes 8-14 and its length in the top byte), and a lookup is a hash of the two words, one
//! probe into an open-addressed table of `(key, key, rank)` and two compares. The general
//! index it replaces for these lengths (`hashbrown` over ranks, comparing against the token
//! blob) costs a probe, a read of the span table and a `memcmp` against the blob: three
//! places in memory instead of one. Measured on o200k English, the lookups of 8-15 byte
//! pieces were about a sixth of the encoding time before this table (docs/engine.md).

use super::pages::{in_home_order, touch_pages, ZeroedPages};

pub const MAX_MEDIUM: usize = 15;

/// `[key lo, key hi, rank]`; `key hi == 0` is an empty slot (a key's top byte is its length).
type Slot = [u64; 3];

/// Packs 2..=15 bytes into two words: bytes 0-7 little-endian, then bytes 8-14 and the length
/// in the top byte. Injective on such byte strings (the length says where the bytes stop).
#[inline(always)]
pub fn pack16(b: &[u8]) -> [u64; 2] {
    let n = b.len();
    debug_assert!((2..=MAX_MEDIUM).contains(&n));
    let (lo, hi) = if n >= 8 {
        let lo = u64::from_le_bytes(b[..8].try_into().unwrap());
        // The last 8 bytes end at n; bytes 8..n are their top n - 8 bytes.
        let last = u64::from_le_bytes(b[n - 8..].try_into().unwrap());
        (lo, if n > 8 { last >> (8 * (16 - n)) } else { 0 })
    } else if n >= 4 {
        let a = u32::from_le_bytes(b[..4].try_into().unwrap()) as u64;
        let z = u32::from_le_bytes(b[n - 4..].try_into().unwrap()) as u64;
        (a | z << (8 * (n - 4)), 0)
    } else {
        let a = u16::from_le_bytes([b[0], b[1]]) as u64;
        let z = b[n - 1] as u64;
        (a | z << (8 * (n - 1)), 0)
    };
    [lo, hi | (n as u64) << 56]
}

/// [`pack16`] of the first `n` (1..=15) of 16 readable bytes: two loads and two masks from a
/// table, no branch on the length. (The masks computed as 128-bit shifts took about fifteen
/// instructions more per key, with a test and a select each: cachegrind, issue 14's
/// fourteenth pass.)
#[inline(always)]
pub fn pack16_words(words: &[u8], n: usize) -> [u64; 2] {
    debug_assert!(words.len() == 16 && (1..=MAX_MEDIUM).contains(&n));
    let lo = u64::from_le_bytes(words[..8].try_into().unwrap());
    let hi = u64::from_le_bytes(words[8..16].try_into().unwrap());
    let [m0, m1] = KEEP[n & 15];
    [lo & m0, hi & m1 | (n as u64) << 56]
}

/// `KEEP[n]`: the masks keeping the first min(n, 8) bytes of the first word and n - min(n, 8)
/// of the second (also the piece cache's for the last two words of a 32-byte key).
pub(crate) static KEEP: [[u64; 2]; 16] = {
    let mut t = [[0u64; 2]; 16];
    let mut n = 0;
    while n < 16 {
        let (a, b) = if n < 8 { (n, 0) } else { (8, n - 8) };
        t[n] = [((1u128 << (8 * a)) - 1) as u64, ((1u128 << (8 * b)) - 1) as u64];
        n += 1;
    }
    t
};

/// The hash of a two-word key, mixed into the top bits.
#[inline(always)]
pub fn hash16(key: [u64; 2]) -> u64 {
    let h = key[0].wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key[1];
    h.wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
}

#[derive(Clone)]
pub struct MediumIndex {
    slots: ZeroedPages<Slot>,
    shift: u32,
}

impl std::fmt::Debug for MediumIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MediumIndex({} slots)", self.slots.len())
    }
}

impl MediumIndex {
    /// An empty index sized for `n` keys (load at most 3/5, as the short index).
    pub fn with_capacity(n: usize) -> MediumIndex {
        let size = (n * 5 / 3 + 1).next_power_of_two().max(16);
        MediumIndex { slots: ZeroedPages::new(size), shift: 64 - size.trailing_zeros() }
    }

    #[inline(always)]
    fn home(&self, key: [u64; 2]) -> usize {
        (hash16(key) >> self.shift) as usize
    }

    /// The index of `(key, rank)` pairs, or the ranks `(earlier, later)` of a key given twice.
    /// Inserted in order of home slot (`pages::in_home_order`, as `ShortIndex::from_pairs`), so
    /// the cold table fills front to back; a comparison sort there was a tenth of loading
    /// o200k_base (perf).
    pub fn from_pairs(pairs: &[([u64; 2], u32)]) -> Result<MediumIndex, (u32, u32)> {
        let mut idx = MediumIndex::with_capacity(pairs.len());
        let table_bits = 64 - idx.shift;
        let bucket_bits = table_bits.min(12);
        let ordered = in_home_order(pairs.iter().copied(), bucket_bits, |&(key, _)| idx.home(key) >> (table_bits - bucket_bits));
        touch_pages(&mut idx.slots[..]);
        for (key, rank) in ordered {
            idx.insert(key, rank).map_err(|prev| (prev, rank))?;
        }
        Ok(idx)
    }

    /// Adds a key; a key already present keeps its rank, which is returned as the error.
    pub fn insert(&mut self, key: [u64; 2], rank: u32) -> Result<(), u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &mut self.slots[i];
            if s[1] == 0 {
                *s = [key[0], key[1], rank as u64];
                return Ok(());
            }
            if [s[0], s[1]] == key {
                return Err(s[2] as u32);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(always)]
    pub fn get(&self, key: [u64; 2]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = self.slots[i];
            if s[0] == key[0] && s[1] == key[1] {
                return Some(s[2] as u32);
            }
            if s[1] == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key is the bytes, zero-padded, with the length in the last byte, both ways of
    /// computing it: so it is injective on byte strings of 2..=15 bytes.
    #[test]
    fn pack16_is_the_padded_bytes_and_length() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for n in 2..=MAX_MEDIUM {
            for _ in 0..200 {
                let b: Vec<u8> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        [0u8, 1, b'a', 0xff][(x % 4) as usize]
                    })
                    .collect();
                let mut want = [0u8; 16];
                want[..n].copy_from_slice(&b);
                want[15] = n as u8;
                let want = [u64::from_le_bytes(want[..8].try_into().unwrap()), u64::from_le_bytes(want[8..].try_into().unwrap())];
                assert_eq!(pack16(&b), want, "{b:?}");
                let mut padded = b.clone();
                padded.extend_from_slice(&[0xab; 16]);
                assert_eq!(pack16_words(&padded[..16], n), want, "{b:?} from words");
            }
        }
    }

    #[test]
    fn finds_what_was_inserted() {
        let toks: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("token-{i:05}").into_bytes()).collect();
        let pairs: Vec<_> = toks.iter().enumerate().map(|(r, t)| (pack16(t), r as u32)).collect();
        let idx = MediumIndex::from_pairs(&pairs).unwrap();
        for (r, t) in toks.iter().enumerate() {
            assert_eq!(idx.get(pack16(t)), Some(r as u32));
        }
        assert_eq!(idx.get(pack16(b"token-99999")), None);
        assert_eq!(idx.get(pack16(b"token-0000")), None);
        let mut twice = pairs;
        twice.push((pack16(&toks[7]), 20_000));
        assert_eq!(MediumIndex::from_pairs(&twice).unwrap_err(), (7, 20_000));
    }
}
