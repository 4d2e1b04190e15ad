//! GPT-2's byte table: each of the 256 bytes spelled as one printable character, so that text
//! files (GPT-2's `vocab.bpe` and `encoder.json`, HF `tokenizer.json` with a ByteLevel
//! pre-tokenizer) can hold tokens of any bytes. GPT-2's `bytes_to_unicode`, HF's ByteLevel
//! alphabet; written here once, and read by Python as `bytepair._core.BYTE_LEVEL_CHARS`.
//!
//! Printable Latin-1 bytes other than space (`!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`) stand for
//! themselves; the other 68 are numbered from U+0100 upwards in byte order, so space is U+0120
//! (`Ġ`) and the soft hyphen 0xAD, the last, is U+0143.

/// Whether GPT-2 spells byte `b` as the character with the same code point.
pub const fn is_printable(b: u8) -> bool {
    matches!(b, 33..=126 | 161..=172 | 174..=255)
}

/// Byte -> its character.
pub const BYTE_CHARS: [char; 256] = {
    let mut out = ['\0'; 256];
    let mut next = 0x100u32;
    let mut b = 0;
    while b < 256 {
        out[b] = if is_printable(b as u8) {
            b as u8 as char
        } else {
            next += 1;
            match char::from_u32(next - 1) {
                Some(c) => c,
                None => panic!("U+0100..U+0144 are characters"),
            }
        };
        b += 1;
    }
    out
};

/// One past the highest code point in the table.
const END: usize = 0x144;

/// Code point -> byte, for the code points below [`END`].
const CHAR_BYTES: [Option<u8>; END] = {
    let mut out = [None; END];
    let mut b = 0;
    while b < 256 {
        out[BYTE_CHARS[b] as usize] = Some(b as u8);
        b += 1;
    }
    out
};

/// The byte that `c` spells, or `None` if `c` is not in the table.
#[inline]
pub fn byte_of(c: char) -> Option<u8> {
    CHAR_BYTES.get(c as usize).copied().flatten()
}

/// The bytes in printable-first order (each byte's position is its rank in GPT-2's vocabulary):
/// the same as ordering them by their characters.
pub fn printable_first() -> Vec<u8> {
    (0..=255u8).filter(|&b| is_printable(b)).chain((0..=255u8).filter(|&b| !is_printable(b))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2s_table() {
        assert_eq!(BYTE_CHARS[b'a' as usize], 'a');
        assert_eq!(BYTE_CHARS[b' ' as usize], '\u{120}');
        assert_eq!(BYTE_CHARS[0], '\u{100}');
        assert_eq!(BYTE_CHARS[0xad], '\u{143}');
        assert!(BYTE_CHARS.iter().all(|&c| (c as usize) < END));
    }

    #[test]
    fn round_trips_and_orders() {
        for b in 0..=255u8 {
            assert_eq!(byte_of(BYTE_CHARS[b as usize]), Some(b));
        }
        assert_eq!(byte_of('\u{144}'), None);
        assert_eq!(byte_of(' '), None);
        let order = printable_first();
        let mut by_char: Vec<u8> = (0..=255).collect();
        by_char.sort_by_key(|&b| BYTE_CHARS[b as usize]);
        assert_eq!(order, by_char);
    }
}
