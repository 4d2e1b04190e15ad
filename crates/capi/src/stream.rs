//! Decoding ids as they arrive (python/bytepair/stream.py's model, in Rust): only complete
//! UTF-8 goes out; the bytes of a character split across ids wait for the id that completes it.
//!
//! Rank models decode id by id (each id's bytes are looked up once). The others' decoders look
//! at the id before (SentencePiece drops the first piece's leading space; a Metaspace decoder
//! does the same), so each id is decoded after the previous one and the difference goes out.
//! A control piece (BOS, EOS) writes nothing, keeps the previous id as context, and ends the
//! run of bytes before it (SentencePiece decodes each run of byte pieces on its own).
//!
//! A step computes everything first and changes the state only once its output fits the
//! caller's buffer, so a step refused with BP_ERR_BUFFER_TOO_SMALL can be retried.

use bytepair_core::spec::PieceType;
use bytepair_core::{AnyModel, Result, Tokenizer};

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

#[derive(Default)]
pub struct StreamState {
    /// Bytes of an unfinished character, held back.
    pending: Vec<u8>,
    /// The last id that was not a control piece (context for non-rank models).
    previous: Option<u32>,
}

/// What one step gives: the text to write and the state after it.
pub struct Step {
    pub text: Vec<u8>,
    pending: Vec<u8>,
    previous: Option<u32>,
}

/// `bytes` as UTF-8 text, invalid sequences replaced by U+FFFD (one per maximal invalid
/// subpart, as Python's "replace"); an unfinished character at the end is returned as the
/// tail unless `last`, when it becomes one U+FFFD too.
fn complete_utf8(bytes: &[u8], last: bool) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                return (out, Vec::new());
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.extend_from_slice(valid);
                match e.error_len() {
                    Some(n) => {
                        out.extend_from_slice(REPLACEMENT);
                        rest = &after[n..];
                    }
                    None if last => {
                        out.extend_from_slice(REPLACEMENT);
                        return (out, Vec::new());
                    }
                    None => return (out, after.to_vec()),
                }
            }
        }
    }
}

impl StreamState {
    pub fn step(&self, tok: &Tokenizer, id: u32) -> Result<Step> {
        let (data, control) = match tok.model() {
            AnyModel::Rank(_) => (tok.token_bytes(id)?.to_vec(), false),
            model => {
                let control = match model {
                    AnyModel::Score(s) => s.kind(id)? == PieceType::Control,
                    _ => false,
                };
                let before = match self.previous {
                    Some(p) => tok.decode_bytes(&[p])?,
                    None => Vec::new(),
                };
                let both = match self.previous {
                    Some(p) => tok.decode_bytes(&[p, id])?,
                    None => tok.decode_bytes(&[id])?,
                };
                let added = both.strip_prefix(before.as_slice()).map(<[u8]>::to_vec).unwrap_or(both);
                (added, control)
            }
        };
        let mut bytes = self.pending.clone();
        bytes.extend_from_slice(&data);
        let (text, pending) = complete_utf8(&bytes, control);
        let previous = if control || matches!(tok.model(), AnyModel::Rank(_)) { self.previous } else { Some(id) };
        Ok(Step { text, pending, previous })
    }

    pub fn commit(&mut self, step: Step) {
        self.pending = step.pending;
        self.previous = step.previous;
    }

    /// The held-back tail as U+FFFD (empty when nothing is held back); the stream starts over.
    pub fn flush_text(&self) -> Vec<u8> {
        complete_utf8(&self.pending, true).0
    }

    pub fn reset(&mut self) {
        *self = StreamState::default();
    }
}

#[cfg(test)]
mod tests {
    use super::complete_utf8;

    #[test]
    fn holds_back_only_an_unfinished_character() {
        let e = "é".as_bytes();
        assert_eq!(complete_utf8(&[b'a', e[0]], false), (b"a".to_vec(), vec![e[0]]));
        assert_eq!(complete_utf8(&[b'a', e[0]], true), ("a\u{FFFD}".as_bytes().to_vec(), vec![]));
        assert_eq!(complete_utf8(&[0xff, b'b'], false), ("\u{FFFD}b".as_bytes().to_vec(), vec![]));
    }
}
