//! A one-bit-per-slot filter over the tokens of 16 bytes and more, asked before the hashed
//! lookup of such a piece ([`super::Vocab::rank`]).
//!
//! Why: nearly every piece of 16+ bytes of CJK or Cyrillic text is no token (zh-fortunes on
//! o200k: about 1 in 40), and the hashed lookup that says so hashes the whole slice (foldhash
//! past 16 bytes) and probes a table of 5,492 ids spread over the token blob; `perf` put that
//! at 6-7% of o200k's time on zh-fortunes and uk (`Vocab::rank` and the slice hash). The
//! filter reads the piece's first and last eight bytes and its length, which the caller's
//! slice has, mixes them with two multiplies, and tests one bit of a table of 16 bits per
//! long token (o200k: 16 KB, cl100k: 4 KB, in L1/L2): about 1 in 25 pieces that are no token
//! pass it anyway (one hash, so about 1 - e^(-1/16)) and take the hashed lookup as before.
//!
//! Exact: every long token's bit is set, so a clear bit proves the piece is no token; a set
//! bit proves nothing and the lookup decides.

/// Bits of filter per long token.
const BITS_PER_TOKEN: usize = 16;

#[derive(Clone, Default)]
pub(crate) struct LongFilter {
    bits: Vec<u64>,
    /// 64 minus log2 of the number of bits.
    shift: u32,
}

impl LongFilter {
    /// A filter holding `tokens` (each at least 16 bytes).
    pub(crate) fn new<'a>(tokens: impl ExactSizeIterator<Item = &'a [u8]>) -> LongFilter {
        let n_bits = (tokens.len() * BITS_PER_TOKEN).next_power_of_two().max(512);
        let mut f = LongFilter { bits: vec![0; n_bits / 64], shift: 64 - n_bits.trailing_zeros() };
        for t in tokens {
            let h = f.slot(t);
            f.bits[h / 64] |= 1 << (h % 64);
        }
        f
    }

    /// The bit of `b` (at least 16 bytes).
    #[inline(always)]
    fn slot(&self, b: &[u8]) -> usize {
        let n = b.len();
        debug_assert!(n >= 16);
        let w = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().unwrap_or([0; 8]));
        let (first, last) = (w(0), w(n - 8));
        let h = (first ^ (n as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ last;
        (h.wrapping_mul(0xff51_afd7_ed55_8ccd) >> self.shift) as usize
    }

    /// False when `b` (at least 16 bytes) is certainly not one of the tokens.
    #[inline(always)]
    pub(crate) fn may_hold(&self, b: &[u8]) -> bool {
        if self.bits.is_empty() {
            // The default filter (no tokens indexed yet) holds back nothing.
            return true;
        }
        let h = self.slot(b);
        self.bits[h / 64] >> (h % 64) & 1 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token passes; most other pieces of the same lengths do not.
    #[test]
    fn holds_every_token_and_few_others() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let tokens: Vec<Vec<u8>> = (0..3000).map(|_| (0..16 + rnd() % 40).map(|_| rnd() as u8).collect()).collect();
        let f = LongFilter::new(tokens.iter().map(|t| t.as_slice()));
        assert!(tokens.iter().all(|t| f.may_hold(t)));
        // Near misses: one byte changed anywhere, or one byte longer.
        let mut passed = 0;
        for t in &tokens {
            let mut u = t.clone();
            let k = rnd() as usize % u.len();
            u[k] ^= 1 + (rnd() as u8 & 0x7f);
            let mut v = t.clone();
            v.push(b'x');
            passed += f.may_hold(&u) as usize + f.may_hold(&v) as usize;
        }
        // Bytes in the middle are not hashed: a change there always passes (then the lookup
        // decides); the ends and the length are.
        assert!(passed < 2 * tokens.len() * 3 / 4, "{passed}");
    }
}
