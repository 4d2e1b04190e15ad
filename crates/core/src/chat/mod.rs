//! A rendered chat conversation -> ids and training mask.
//!
//! The chat templates (Python's `bytepair.chat`) decide the frame; what they hand here is one
//! conversation as a list of [`Segment`]s: a special token's id with its mask bit, or a text
//! that is encoded on its own with `encode_ordinary` (so content that spells a special token
//! stays text, and a text never merges with the token beside it). A text carries which of its
//! characters are trained: none, all, or character spans, for the templates that write a
//! header and the content into one text (ChatML's `assistant\n` + content, every Jinja
//! template), where the two can merge into one token.
//!
//! The span rule is transformers' for `return_assistant_tokens_mask`: a token is trained if it
//! overlaps a trained span. A rank model's tokens are exact byte strings of the text, so token
//! k covers the bytes from the end of token k-1 to its own end. A model whose tokens' bytes
//! are not the text's (SentencePiece's dummy prefix) has no such offsets: a span that splits
//! its text is refused ([`ChatError::NotByteLevel`]) rather than guessed.
//!
//! Cost: the encoding, plus for a text with spans a binary search per span and one table
//! lookup per token up to the last span edge inside the text (per token of the text for a
//! model other than rank BPE, whose sum is checked).

use crate::{AnyModel, Error, Tokenizer};

pub mod chatml;
pub mod frame;
pub mod jinja;
pub mod prompts;

/// Which characters of a text segment are trained.
#[derive(Clone, Copy, Debug)]
pub enum Train<'a> {
    No,
    All,
    /// Character (Unicode scalar value) offsets `[start, end)`, sorted and not overlapping:
    /// the offsets a Python `str` is indexed by.
    Spans(&'a [(usize, usize)]),
}

/// One part of a rendered conversation.
#[derive(Clone, Copy, Debug)]
pub enum Segment<'a> {
    /// A special token's id, and whether it is trained.
    Token { id: u32, train: bool },
    /// Text, encoded as one piece with `encode_ordinary`.
    Text { text: &'a str, train: Train<'a> },
}

/// Why a conversation could not be encoded.
#[derive(Debug)]
pub enum ChatError {
    /// The encoder failed.
    Encode(Error),
    /// A text's spans split it, but the model's tokens are not byte strings of the text, so
    /// the tokens' offsets are unknown.
    NotByteLevel,
}

impl From<Error> for ChatError {
    fn from(e: Error) -> Self {
        ChatError::Encode(e)
    }
}

/// Appends the ids of `segments` to `ids` and one mask byte (1 = trained) per id to `mask`.
/// `scratch` is working room the caller may reuse between calls. On error, `ids` and `mask`
/// hold a partial conversation.
pub fn encode_conversation(
    tokenizer: &Tokenizer,
    segments: &[Segment<'_>],
    ids: &mut Vec<u32>,
    mask: &mut Vec<u8>,
    scratch: &mut Vec<usize>,
) -> Result<(), ChatError> {
    for segment in segments {
        match *segment {
            Segment::Token { id, train } => {
                ids.push(id);
                mask.push(train as u8);
            }
            Segment::Text { text, train } => {
                let start = ids.len();
                tokenizer.encode_ordinary_into(text, ids)?;
                let n = ids.len() - start;
                match train {
                    Train::No => mask.resize(mask.len() + n, 0),
                    Train::All => mask.resize(mask.len() + n, 1),
                    Train::Spans(spans) => {
                        mask.resize(mask.len() + n, 0);
                        let at = mask.len() - n;
                        span_mask(tokenizer, text, spans, &ids[start..], &mut mask[at..], scratch)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Sets `mask[k]` to 1 for each token `k` of `text` (ids `ids`) that overlaps a span.
fn span_mask(
    tokenizer: &Tokenizer,
    text: &str,
    spans: &[(usize, usize)],
    ids: &[u32],
    mask: &mut [u8],
    ends: &mut Vec<usize>,
) -> Result<(), ChatError> {
    if spans.is_empty() {
        return Ok(());
    }
    let chars = if text.is_ascii() { text.len() } else { text.chars().count() };
    if spans.len() == 1 && spans[0] == (0, chars) {
        // The whole text: no offsets needed, so any model can take it.
        mask.fill(1);
        return Ok(());
    }
    // ends[k]: the byte where token k ends, computed as far as a span needs: a span that runs
    // to the end of the text (an assistant's content after its header, the usual case) needs
    // only the tokens up to its start.
    ends.clear();
    let mut at = 0;
    let mut extend = |ends: &mut Vec<usize>, past: &dyn Fn(usize) -> bool| -> Result<(), ChatError> {
        while ends.len() < ids.len() && !ends.last().is_some_and(|&e| past(e)) {
            at += tokenizer.token_bytes(ids[ends.len()])?.len();
            ends.push(at);
        }
        Ok(())
    };
    if !matches!(tokenizer.model(), AnyModel::Rank(_)) {
        // A rank model's tokens are the text's bytes by construction; another model's may not
        // be, which only the whole sum shows.
        extend(ends, &|_| false)?;
        if ends.last().copied().unwrap_or(0) != text.len() {
            return Err(ChatError::NotByteLevel);
        }
    }
    let byte_at = |c: usize| -> usize {
        if text.is_ascii() {
            c.min(text.len())
        } else {
            text.char_indices().nth(c).map_or(text.len(), |(b, _)| b)
        }
    };
    for &(s, e) in spans {
        let (b_start, b_end) = (byte_at(s), byte_at(e));
        // Token k overlaps [b_start, b_end) when it ends after b_start and starts before
        // b_end: from the first token ending after b_start through the first ending at or
        // after b_end (the last token, when b_end is the end of the text).
        extend(ends, &|x| x > b_start)?;
        let first = ends.partition_point(|&x| x <= b_start);
        let last = if b_end >= text.len() {
            ids.len().saturating_sub(1)
        } else {
            extend(ends, &|x| x >= b_end)?;
            ends.partition_point(|&x| x < b_end).min(ids.len().saturating_sub(1))
        };
        if first <= last && first < ids.len() {
            mask[first..=last].fill(1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_tokenizer() -> Tokenizer {
        // Every byte a token, plus "ab" and "\n\n": enough to see merges across a span edge.
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        ranks.push((b"ab".to_vec(), 256));
        ranks.push((b"\n\n".to_vec(), 257));
        let ranks = ranks.iter().map(|(b, r)| (b.as_slice(), *r));
        crate::Encoder::from_ranks(ranks, vec![("<|x|>".into(), 300)], r"[a-z]+|\s+|.").expect("encoder").into()
    }

    fn run(tok: &Tokenizer, segments: &[Segment<'_>]) -> (Vec<u32>, Vec<u8>) {
        let (mut ids, mut mask, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
        encode_conversation(tok, segments, &mut ids, &mut mask, &mut scratch).expect("encodes");
        (ids, mask)
    }

    #[test]
    fn a_token_that_straddles_a_span_edge_is_trained() {
        let tok = bytes_tokenizer();
        // "x\n" + "\nab": the header's "\n" and the content's "\n" merge into one token.
        let (ids, mask) = run(&tok, &[
            Segment::Token { id: 300, train: false },
            Segment::Text { text: "x\n\nab", train: Train::Spans(&[(2, 5)]) },
            Segment::Token { id: 300, train: true },
        ]);
        assert_eq!(ids, vec![300, b'x' as u32, 257, 256, 300]);
        assert_eq!(mask, vec![0, 0, 1, 1, 1]);
    }

    #[test]
    fn spans_are_in_characters() {
        let tok = bytes_tokenizer();
        // "é" is two bytes, one character: the span (1, 2) is the "a" after it.
        let (ids, mask) = run(&tok, &[Segment::Text { text: "éa", train: Train::Spans(&[(1, 2)]) }]);
        assert_eq!(ids.len(), 3);
        assert_eq!(mask, vec![0, 0, 1]);
    }

    #[test]
    fn spans_inside_the_text_stop_at_their_last_token() {
        let tok = bytes_tokenizer();
        // "ab" " " "c" "d" " " "ab": the spans (1, 2) and (3, 4) touch tokens 0 and 2.
        let (ids, mask) = run(&tok, &[Segment::Text { text: "ab cd ab", train: Train::Spans(&[(1, 2), (3, 4)]) }]);
        assert_eq!(ids, vec![256, b' ' as u32, b'c' as u32, b'd' as u32, b' ' as u32, 256]);
        assert_eq!(mask, vec![1, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn no_all_and_whole_span_agree() {
        let tok = bytes_tokenizer();
        let (_, none) = run(&tok, &[Segment::Text { text: "ab cd", train: Train::No }]);
        let (_, all) = run(&tok, &[Segment::Text { text: "ab cd", train: Train::All }]);
        let (_, whole) = run(&tok, &[Segment::Text { text: "ab cd", train: Train::Spans(&[(0, 5)]) }]);
        assert_eq!(none, vec![0; 4]);
        assert_eq!(all, vec![1; 4]);
        assert_eq!(whole, all);
    }
}
