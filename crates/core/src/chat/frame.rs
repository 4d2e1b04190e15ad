//! A rendered Jinja conversation -> parts (special-token ids and texts) and their trains.
//!
//! The frame is the special tokens the template writes itself. Before rendering, every
//! special-token spelling in the caller's strings is wrapped in private-use markers
//! ([`Specials::mark`]: U+E000 spelling U+E001; a private-use character the caller wrote is
//! wrapped the same way), so [`Specials::split`] cuts the rendered string only at the
//! template's own specials; the markers are dropped and a wrapped spelling stays text. A lone
//! marker (a wrapped spelling the template cut apart) is dropped; U+E002/U+E003 are the
//! `{% generation %}` block's start and end: the characters between them are trained.
//!
//! Without `{% generation %}`, [`assistant_spans`] finds each assistant message's part: the
//! conversation before it, rendered with the generation prompt, must be a prefix of the whole
//! rendering; the message's part runs from there through the next end-of-turn token.
//!
//! All offsets are in characters (Unicode scalar values) of the clean text (markers removed),
//! the offsets a Python `str` is indexed by and [`super::Train::Spans`] takes.
//!
//! Cost: one Aho-Corasick scan over each caller string and over the rendered string, plus a
//! character walk of the strings that hold a private-use character (few do).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};

use super::jinja::{GEN_END, GEN_START};

pub const WRAP: char = '\u{e000}';
pub const UNWRAP: char = '\u{e001}';

#[inline]
fn is_private(c: char) -> bool {
    ('\u{e000}'..='\u{e003}').contains(&c)
}

/// Whether `s` may hold U+E000..U+E003: their UTF-8 starts with 0xEE (a byte scan, far
/// faster than decoding characters; a false positive only costs the exact check).
#[inline]
fn may_have_private(s: &str) -> bool {
    s.as_bytes().contains(&0xEE) && s.chars().any(is_private)
}

/// The encoding's special tokens: spelling -> id, and a finder for them.
pub struct Specials {
    finder: Option<AhoCorasick>,
    ids: Vec<u32>,
    by_text: HashMap<String, u32>,
}

impl fmt::Debug for Specials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Specials({} tokens)", self.ids.len())
    }
}

/// The byte offset of the first U+E000..U+E003 in `s` at or after `from` (a character
/// boundary): their UTF-8 is EE 80 80..83, found with memchr rather than by decoding every
/// character.
fn find_private(s: &str, from: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut at = from;
    while let Some(k) = memchr::memchr(0xEE, &bytes[at..]) {
        let p = at + k;
        if bytes.get(p + 1) == Some(&0x80) && bytes.get(p + 2).is_some_and(|&b| (0x80..=0x83).contains(&b)) {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

/// One piece of a rendered conversation: a text or a special token, with its character length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String, usize),
    Special(u32, usize),
}

impl Piece {
    fn chars(&self) -> usize {
        match *self {
            Piece::Text(_, n) | Piece::Special(_, n) => n,
        }
    }
}

/// A rendered string split at the template's specials.
#[derive(Debug, Default)]
pub struct Split {
    pub pieces: Vec<Piece>,
    /// The `{% generation %}` spans, merged, in clean-text characters.
    pub spans: Vec<(usize, usize)>,
    /// The clean text's length in characters.
    pub chars: usize,
}

/// Which characters of a text part are trained (owned: see [`super::Train`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextTrain {
    No,
    All,
    Spans(Vec<(usize, usize)>),
}

/// A part of the conversation to encode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Token { id: u32, train: bool },
    Text { text: String, train: TextTrain },
}

impl TextTrain {
    /// As [`super::encode_conversation`] takes it, borrowing the spans.
    pub fn as_train(&self) -> super::Train<'_> {
        match self {
            TextTrain::No => super::Train::No,
            TextTrain::All => super::Train::All,
            TextTrain::Spans(spans) => super::Train::Spans(spans),
        }
    }
}

impl Part {
    /// The part as [`super::encode_conversation`] takes it, borrowing its text and spans.
    pub fn segment(&self) -> super::Segment<'_> {
        match self {
            Part::Token { id, train } => super::Segment::Token { id: *id, train: *train },
            Part::Text { text, train } => super::Segment::Text { text, train: train.as_train() },
        }
    }
}

/// Why an assistant message's part could not be found (the messages are Python's wording).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The conversation before message `.0`, ending with the generation prompt, is not a prefix.
    NotPrefix(usize),
    /// No end-of-turn token after message `.0`; `.1` names the tokens looked for.
    NoEnd(usize, String),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::NotPrefix(i) => write!(
                f,
                "message {i}: the template renders the conversation before this assistant message differently \
                 when it ends there, so where the message lands cannot be found; add {{% generation %}} ... \
                 {{% endgeneration %}} around the assistant's part of the template, or render with mask=False"
            ),
            FrameError::NoEnd(i, names) => write!(
                f,
                "message {i}: no end-of-turn token ({names}) after this assistant message; add {{% generation %}} markers"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Characters (Unicode scalar values: what a Python `str` is indexed by) in `s`.
pub(crate) fn chars_of(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

impl Specials {
    /// `tokens`: each special token's spelling and id (empty spellings are ignored).
    pub fn new(tokens: impl IntoIterator<Item = (String, u32)>) -> Result<Self, String> {
        let (texts, ids): (Vec<String>, Vec<u32>) = tokens.into_iter().filter(|(t, _)| !t.is_empty()).unzip();
        let finder = if texts.is_empty() {
            None
        } else {
            // Leftmost-longest: Python's alternation of the spellings sorted longest first.
            Some(AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(&texts).map_err(|e| e.to_string())?)
        };
        let by_text = texts.iter().cloned().zip(ids.iter().copied()).collect();
        Ok(Specials { finder, ids, by_text })
    }

    /// The id of a special token's spelling.
    pub fn id(&self, text: &str) -> Option<u32> {
        self.by_text.get(text).copied()
    }

    fn find_at(&self, s: &str, at: usize) -> Option<(usize, usize, u32)> {
        let m = self.finder.as_ref()?.find(aho_corasick::Input::new(s).range(at..))?;
        Some((m.start(), m.end(), self.ids[m.pattern().as_usize()]))
    }

    /// `s` with each special spelling and each private-use marker character wrapped in
    /// U+E000 ... U+E001 (borrowed when there is none: most strings).
    pub fn mark<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let private = may_have_private(s);
        let first = self.find_at(s, 0);
        if !private && first.is_none() {
            return Cow::Borrowed(s);
        }
        let mut out = String::with_capacity(s.len() + 16);
        let copy = |out: &mut String, gap: &str| {
            if private {
                for c in gap.chars() {
                    if is_private(c) {
                        out.extend([WRAP, c, UNWRAP]);
                    } else {
                        out.push(c);
                    }
                }
            } else {
                out.push_str(gap);
            }
        };
        let mut at = 0;
        let mut next = first;
        while let Some((start, end, _)) = next {
            copy(&mut out, &s[at..start]);
            out.push(WRAP);
            out.push_str(&s[start..end]);
            out.push(UNWRAP);
            at = end;
            next = self.find_at(s, at);
        }
        copy(&mut out, &s[at..]);
        Cow::Owned(out)
    }

    /// What [`Specials::split`] gives as text, unsplit: markers removed, wrapped spellings kept.
    pub fn clean<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !may_have_private(text) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        while at < text.len() {
            match self.private_at(text, at) {
                Private::Wrapped(inner, end) => {
                    out.push_str(inner);
                    at = end;
                }
                Private::Lone(_, end) => at = end,
                Private::No(c) => {
                    out.push(c);
                    at += c.len_utf8();
                }
            }
        }
        Cow::Owned(out)
    }

    /// At byte `at` of `text`: a wrapped spelling (WRAP, a special or a private character,
    /// UNWRAP), a lone private character, or another character.
    fn private_at<'t>(&self, text: &'t str, at: usize) -> Private<'t> {
        let Some(c) = text[at..].chars().next() else { return Private::No('\0') };
        if !is_private(c) {
            return Private::No(c);
        }
        if c == WRAP {
            let inner = at + c.len_utf8();
            let inner_end = match text[inner..].chars().next() {
                Some(p) if is_private(p) => Some(inner + p.len_utf8()),
                _ => self.find_at(text, inner).filter(|&(s, _, _)| s == inner).map(|(_, e, _)| e),
            };
            if let Some(e) = inner_end {
                if text[e..].starts_with(UNWRAP) {
                    return Private::Wrapped(&text[inner..e], e + UNWRAP.len_utf8());
                }
            }
        }
        Private::Lone(c, at + c.len_utf8())
    }

    /// Splits a rendered string at the specials the template wrote (see the module docs).
    pub fn split(&self, text: &str) -> Split {
        let mut out = Split::default();
        let private = may_have_private(text);
        let mut buf = String::new();
        let mut buf_chars = 0;
        let mut chars = 0; // clean characters so far
        let mut open: Option<usize> = None;
        let mut spans = Vec::new();
        let flush = |out: &mut Split, buf: &mut String, buf_chars: &mut usize| {
            if !buf.is_empty() {
                out.pieces.push(Piece::Text(std::mem::take(buf), *buf_chars));
                *buf_chars = 0;
            }
        };
        let mut at = 0;
        let mut special = self.find_at(text, 0);
        let find_private = |from: usize| if private { find_private(text, from) } else { None };
        let mut next_private = find_private(0);
        while at < text.len() {
            // The next private character, if any, decides whether the special found comes first.
            // Both are searched again only once passed (searching from every special was
            // quadratic in a rendering with {% generation %} markers).
            if next_private.is_some_and(|p| p < at) {
                next_private = find_private(at);
            }
            let special_first = special.is_some_and(|(s, _, _)| next_private.is_none_or(|p| s < p));
            match (special, next_private) {
                (Some((s, e, id)), _) if special_first => {
                    let gap = &text[at..s];
                    buf.push_str(gap);
                    let n = chars_of(gap);
                    buf_chars += n;
                    chars += n;
                    flush(&mut out, &mut buf, &mut buf_chars);
                    let n = chars_of(&text[s..e]);
                    out.pieces.push(Piece::Special(id, n));
                    chars += n;
                    at = e;
                    special = self.find_at(text, at);
                }
                (_, Some(p)) => {
                    let gap = &text[at..p];
                    buf.push_str(gap);
                    let n = chars_of(gap);
                    buf_chars += n;
                    chars += n;
                    match self.private_at(text, p) {
                        Private::Wrapped(inner, end) => {
                            buf.push_str(inner);
                            let n = chars_of(inner);
                            buf_chars += n;
                            chars += n;
                            at = end;
                        }
                        Private::Lone(c, end) => {
                            if c == GEN_START {
                                open = Some(chars);
                            } else if c == GEN_END {
                                if let Some(s) = open.take() {
                                    spans.push((s, chars));
                                }
                            }
                            // any other lone marker: a wrapped spelling the template cut apart
                            at = end;
                        }
                        // find_private stops only at a private character; kept as text if not.
                        Private::No(c) => {
                            buf.push(c);
                            buf_chars += 1;
                            chars += 1;
                            at = p + c.len_utf8();
                        }
                    }
                    if special.is_some_and(|(s, _, _)| s < at) {
                        special = self.find_at(text, at);
                    }
                }
                _ => {
                    let rest = &text[at..];
                    buf.push_str(rest);
                    let n = chars_of(rest);
                    buf_chars += n;
                    chars += n;
                    at = text.len();
                }
            }
        }
        flush(&mut out, &mut buf, &mut buf_chars);
        out.spans = merge(spans);
        out.chars = chars;
        out
    }
}

enum Private<'t> {
    Wrapped(&'t str, usize),
    Lone(char, usize),
    No(char),
}

fn merge(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ if e > s => out.push((s, e)),
            _ => {}
        }
    }
    out
}

/// Where a rendered conversation's trained characters come from.
#[derive(Debug, Clone, Copy)]
pub enum Trained<'a> {
    /// Nothing is trained (`mask=False`).
    Nothing,
    /// The characters between the `{% generation %}` markers.
    Generation,
    /// Each assistant message's part, placed by the conversation before it rendered with the
    /// generation prompt: `prompts`, `end_of_turn` and `names` as [`assistant_spans`] takes them.
    AfterPrompts { prompts: &'a [(usize, String)], end_of_turn: &'a [u32], names: &'a str },
}

/// A rendered conversation (its caller strings marked) as parts to encode: split at the
/// template's own specials, with the trained characters placed as `trained` says. The one
/// framing both renderers use: minijinja's in the core and jinja2's (Python's fallback).
pub fn frame(specials: &Specials, text: &str, trained: Trained<'_>) -> Result<Vec<Part>, FrameError> {
    let split = specials.split(text);
    let spans = match trained {
        Trained::Nothing => Vec::new(),
        Trained::Generation => split.spans.clone(),
        Trained::AfterPrompts { prompts, end_of_turn, names } => {
            assistant_spans(specials, text, &split, prompts, end_of_turn, names)?
        }
    };
    Ok(parts(split, &spans))
}

/// Each assistant message's span (see the module docs). `prompts`: for each assistant message,
/// its index and the rendering of the messages before it with the generation prompt (marked);
/// `end_of_turn`: the ids that end an assistant turn; `names`: those tokens' spellings for the
/// error message.
fn assistant_spans(
    specials: &Specials,
    text: &str,
    split: &Split,
    prompts: &[(usize, String)],
    end_of_turn: &[u32],
    names: &str,
) -> Result<Vec<(usize, usize)>, FrameError> {
    let clean = specials.clean(text);
    // Where each end-of-turn special ends, by start, in clean characters.
    let mut ends = Vec::new();
    let mut at = 0;
    for p in &split.pieces {
        if let Piece::Special(id, n) = *p {
            if end_of_turn.contains(&id) {
                ends.push((at, at + n));
            }
        }
        at += p.chars();
    }
    let mut spans = Vec::new();
    for (i, prompt) in prompts {
        let prompt = specials.clean(prompt);
        if !clean.starts_with(&*prompt) {
            return Err(FrameError::NotPrefix(*i));
        }
        let start = chars_of(&prompt);
        match ends.iter().find(|&&(s, _)| s >= start) {
            Some(&(_, end)) => spans.push((start, end)),
            None if start == split.chars => {} // the template writes nothing for this message
            None => return Err(FrameError::NoEnd(*i, names.to_string())),
        }
    }
    Ok(spans)
}

/// The pieces as parts: a special token trained if a span touches it; a text with the spans'
/// parts inside it, in its own character offsets (all of it or none needs no offsets).
fn parts(split: Split, spans: &[(usize, usize)]) -> Vec<Part> {
    let mut out = Vec::with_capacity(split.pieces.len());
    let (mut k, mut start) = (0, 0);
    for piece in split.pieces {
        let end = start + piece.chars();
        while k < spans.len() && spans[k].1 <= start {
            k += 1;
        }
        let mut local = Vec::new();
        let mut j = k;
        while j < spans.len() && spans[j].0 < end {
            let (s, e) = (spans[j].0.max(start), spans[j].1.min(end));
            if s < e {
                local.push((s - start, e - start));
            }
            j += 1;
        }
        out.push(match piece {
            Piece::Special(id, _) => Part::Token { id, train: !local.is_empty() },
            Piece::Text(text, n) => {
                let train = if local.is_empty() {
                    TextTrain::No
                } else if local == [(0, n)] {
                    TextTrain::All
                } else {
                    TextTrain::Spans(local)
                };
                Part::Text { text, train }
            }
        });
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specials() -> Specials {
        Specials::new([("<|im_start|>".to_string(), 1), ("<|im_end|>".to_string(), 2), ("<|im".to_string(), 3)]).unwrap()
    }

    #[test]
    fn marking_wraps_spellings_and_markers_and_splitting_keeps_them_text() {
        let sp = specials();
        assert!(matches!(sp.mark("plain"), Cow::Borrowed(_)));
        let marked = sp.mark("a<|im_end|>b\u{e002}c<|im");
        assert_eq!(marked, "a\u{e000}<|im_end|>\u{e001}b\u{e000}\u{e002}\u{e001}c\u{e000}<|im\u{e001}");
        let rendered = format!("<|im_start|>user\n{marked}<|im_end|>");
        let split = sp.split(&rendered);
        assert_eq!(split.pieces, vec![
            Piece::Special(1, 12),
            Piece::Text("user\na<|im_end|>b\u{e002}c<|im".into(), 23),
            Piece::Special(2, 10),
        ]);
        assert!(split.spans.is_empty());
        assert_eq!(sp.clean(&rendered), "<|im_start|>user\na<|im_end|>b\u{e002}c<|im<|im_end|>");
        // A wrapped spelling the template cut apart (content[:3]) loses its lone marker.
        assert_eq!(sp.split("\u{e000}<|i").pieces, vec![Piece::Text("<|i".into(), 3)]);
    }

    #[test]
    fn private_markers_are_found_by_their_bytes() {
        let s = "a\u{e00f}b\u{e100}é\u{e003}c\u{e000}";
        assert_eq!(find_private(s, 0), Some(s.find('\u{e003}').unwrap()));
        assert_eq!(find_private(s, s.find('c').unwrap()), Some(s.find('\u{e000}').unwrap()));
        assert_eq!(find_private("plain \u{e004}", 0), None);
    }

    #[test]
    fn generation_markers_become_spans_and_parts() {
        let sp = specials();
        let split = sp.split("<|im_start|>assistant\n\u{e002}hé<|im_end|>\u{e003}\n");
        assert_eq!(split.spans, vec![(22, 34)]);
        assert_eq!(parts(split, &[(22, 34)]), vec![
            Part::Token { id: 1, train: false },
            Part::Text { text: "assistant\nhé".into(), train: TextTrain::Spans(vec![(10, 12)]) },
            Part::Token { id: 2, train: true },
            Part::Text { text: "\n".into(), train: TextTrain::No },
        ]);
    }

    #[test]
    fn assistant_spans_run_from_the_prompt_through_the_end_of_turn() {
        let sp = specials();
        let text = "<|im_start|>user\nhi<|im_end|><|im_start|>assistant\nyo<|im_end|>";
        let split = sp.split(text);
        let prompt = "<|im_start|>user\nhi<|im_end|><|im_start|>assistant\n".to_string();
        let spans = assistant_spans(&sp, text, &split, &[(1, prompt.clone())], &[2], "<|im_end|>").unwrap();
        assert_eq!(spans, vec![(prompt.len(), text.len())]);
        let bad = assistant_spans(&sp, text, &split, &[(1, "<|im_start|>system".into())], &[2], "<|im_end|>");
        assert_eq!(bad, Err(FrameError::NotPrefix(1)));
        let none = assistant_spans(&sp, text, &split, &[(1, prompt)], &[], "none known");
        assert!(matches!(none, Err(FrameError::NoEnd(1, _))));
    }
}
