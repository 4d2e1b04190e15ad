//! What tiktoken's unstable-token API needs from the encoder: the ids of `encode`, and how many
//! of them came from the text's last piece.
//!
//! tiktoken's own `CoreBPE::encode` returns that pair. Its `encode_with_unstable` and
//! `_encode_bytes` (written in Python here, at the end of `bytepair/encoding.py`) take the last
//! piece's ids off and work on its bytes again, because text that follows could merge with
//! them. The last piece is the last one the split pattern finds after the last allowed special
//! token; when the text ends with an allowed special token, or nothing after it is a piece, there
//! is none and the count is 0.

use super::merge::encode_piece;
use super::{Encoder, SpecialFilter};
use crate::error::Result;
use crate::models::Count;

impl Encoder {
    /// `encode(text, allowed)` and the number of its ids that the last piece gave.
    ///
    /// Walks the text twice (the encoding, then the pieces of the part after the last allowed
    /// special token): this serves an API that re-encodes candidate completions anyway, and
    /// leaves the encode path itself untouched.
    pub fn encode_with_last_piece(&self, text: &str, allowed: &SpecialFilter) -> Result<(Vec<u32>, usize)> {
        let ids = self.encode(text, allowed)?;
        // Where the text after the last allowed special token starts, found as `encode_into`
        // finds them. Spellings are never empty, so each match moves `tail` forward.
        let mut tail = 0;
        if !allowed.is_none() {
            while let Some(m) = self.next_allowed_special(text, tail, allowed) {
                tail = m.end;
            }
        }
        let mut last = None;
        self.pretokenizer().for_each_piece(&text[tail..], |piece| last = Some(piece))?;
        let n = last.map_or(0, |piece| {
            // A piece encodes on its own to the ids it gives inside the text.
            let mut count = Count::default();
            encode_piece(self.vocab(), piece.as_bytes(), &mut count);
            count.0
        });
        Ok((ids, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::rank::tests::toy;

    #[test]
    fn counts_the_last_pieces_ids() {
        let e = toy();
        let none = SpecialFilter::None;
        let s = SpecialFilter::from_ids(vec![300]);
        assert_eq!(e.encode_with_last_piece("", &none).unwrap(), (vec![], 0));
        assert_eq!(e.encode_with_last_piece("ab ab", &none).unwrap(), (vec![256, 32, 256], 1));
        assert_eq!(e.encode_with_last_piece("ab abc", &none).unwrap(), (vec![256, 32, 256, 99], 2));
        // An allowed special token at the end: no last piece.
        assert_eq!(e.encode_with_last_piece("ab<s>", &s).unwrap(), (vec![256, 300], 0));
        // Not allowed: its spelling is text, and ">" is the last piece.
        assert_eq!(e.encode_with_last_piece("ab<s>", &none).unwrap(), (vec![256, 60, 115, 62], 1));
        // After the last allowed one, a special token that is not allowed is text too.
        assert_eq!(
            e.encode_with_last_piece("<s>ab<t>", &s).unwrap(),
            (vec![300, 256, 60, 116, 62], 1)
        );
        assert_eq!(e.encode_with_last_piece("<s>abab", &s).unwrap(), (vec![300, 256, 256], 2));
    }
}
