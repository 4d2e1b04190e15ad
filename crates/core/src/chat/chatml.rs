//! ChatML's frame, one message at a time: `<|im_start|>`, `role\n` + content as one text,
//! `<|im_end|>`, the newline's ids. The template's rules (which messages, which options, the
//! content's shapes) are `bytepair.chat.chatml`'s; this is the frame it and `render_many` write
//! each message with, so that a dataset's plain conversations are framed without a Python call
//! per message (the binding reads them straight from the dicts).
//!
//! `role\n` and the content are one text because transformers encodes the text between two
//! special tokens as one piece: `assistant\n` + `\nHi` gives `\n\n`, `Hi`. An assistant's content
//! is the text's trained span, so a token holding the header's `\n` and the content's first
//! characters is trained (transformers' offset rule), and its `<|im_end|>` is trained.

use super::frame::{chars_of, Part, TextTrain};

/// An encoding's ChatML ids: `<|im_start|>`, `<|im_end|>` and the ids of `"\n"`.
#[derive(Debug, Clone)]
pub struct ChatML {
    pub im_start: u32,
    pub im_end: u32,
    pub newline: Vec<u32>,
}

impl ChatML {
    /// Appends one message's parts to `out`.
    pub fn message(&self, role: &str, content: &str, out: &mut Vec<Part>) {
        let assistant = role == "assistant";
        let mut text = String::with_capacity(role.len() + 1 + content.len());
        text.push_str(role);
        text.push('\n');
        text.push_str(content);
        let train = if assistant && !content.is_empty() {
            let head = chars_of(role) + 1;
            TextTrain::Spans(vec![(head, head + chars_of(content))])
        } else {
            TextTrain::No
        };
        out.push(Part::Token { id: self.im_start, train: false });
        out.push(Part::Text { text, train });
        out.push(Part::Token { id: self.im_end, train: assistant });
        out.extend(self.newline.iter().map(|&id| Part::Token { id, train: false }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assistant_content_is_the_span_after_its_header() {
        let frame = ChatML { im_start: 1, im_end: 2, newline: vec![10] };
        let mut out = Vec::new();
        frame.message("user", "hé", &mut out);
        frame.message("assistant", "ça", &mut out);
        frame.message("assistant", "", &mut out);
        let text = |t: &str, train| Part::Text { text: t.into(), train };
        let token = |id, train| Part::Token { id, train };
        assert_eq!(out, vec![
            token(1, false), text("user\nhé", TextTrain::No), token(2, false), token(10, false),
            token(1, false), text("assistant\nça", TextTrain::Spans(vec![(10, 12)])), token(2, true), token(10, false),
            token(1, false), text("assistant\n", TextTrain::No), token(2, true), token(10, false),
        ]);
    }
}
