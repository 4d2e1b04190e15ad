//! `ChatMLFrame`: the built-in chatml template's frame (bytepair_core::chat::chatml) over
//! Python conversations.
//!
//! `render_many` hands a chunk of conversations to the core as they are (chat.rs): a plain one
//! (a `list` of `dict`s whose `role` and `content` are `str`s, or a `dict` holding such a list
//! under `messages` and no `tools`) is read straight from the dicts here, GIL held, and framed;
//! anything else goes to the Python template (`bytepair.chat.chatml.plain`: enum roles, lists
//! of text parts, options, and every error), which gives the plain messages this frames. So
//! Python runs per conversation only for the unusual ones. Before, the Python template built
//! each conversation's parts and trains lists (~7 µs per conversation, in the calling thread,
//! the serial part of `render_many` on several threads) and the core read them back.

use bytepair_core::chat::chatml::ChatML;
use bytepair_core::chat::frame::Part;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::text::{text, Text};

#[pyclass(frozen, module = "bytepair._core")]
pub struct ChatMLFrame {
    pub inner: ChatML,
}

/// A conversation read by [`ChatMLFrame::frame`].
pub enum Framed {
    /// Its parts.
    Parts(Vec<Part>),
    /// An assistant's content (a trained span) holds lone surrogates: repairing them could join
    /// a split pair into one character and move the span (chat.rs refuses it, as it refuses such
    /// a text from the Python templates).
    Surrogates,
}

impl ChatMLFrame {
    /// `conversation` framed if it is plain (see the module docs); None if it is not.
    pub fn frame(&self, conversation: &Bound<'_, PyAny>) -> PyResult<Option<Framed>> {
        let Some(messages) = plain_messages(conversation)? else { return Ok(None) };
        let mut out = Vec::with_capacity(messages.len() * (3 + self.inner.newline.len()));
        let mut surrogates = false;
        for message in messages.iter() {
            let Ok(message) = message.downcast_exact::<PyDict>() else { return Ok(None) };
            let (Some(role), Some(content)) = (message.get_item("role")?, message.get_item("content")?) else {
                return Ok(None);
            };
            let (Ok(role), Ok(content)) = (role.downcast_exact::<PyString>(), content.downcast_exact::<PyString>()) else {
                return Ok(None);
            };
            let (role, content) = (text(role.as_any())?, text(content.as_any())?);
            // Not returned at once: a later message that is not plain is the template's to
            // judge first (its error before this refusal, as the Python template gave them).
            surrogates |= matches!(content, Text::Repaired(_)) && &*role == "assistant" && !content.is_empty();
            self.inner.message(&role, &content, &mut out);
        }
        Ok(Some(if surrogates { Framed::Surrogates } else { Framed::Parts(out) }))
    }
}

/// The messages of a plain conversation: the `list` itself, or a `dict`'s `messages` list when
/// it has no `tools` (which the template turns into an option chatml refuses).
fn plain_messages<'py>(conversation: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyList>>> {
    if let Ok(list) = conversation.downcast_exact::<PyList>() {
        return Ok(Some(list.clone()));
    }
    if let Ok(dict) = conversation.downcast_exact::<PyDict>() {
        if !dict.contains("tools")? {
            if let Some(messages) = dict.get_item("messages")? {
                return Ok(messages.downcast_exact::<PyList>().ok().cloned());
            }
        }
    }
    Ok(None)
}

#[pymethods]
impl ChatMLFrame {
    #[new]
    fn new(im_start: u32, im_end: u32, newline: Vec<u32>) -> Self {
        ChatMLFrame { inner: ChatML { im_start, im_end, newline } }
    }

    /// Plain messages (`{"role": str, "content": str}`, as `bytepair.chat.chatml.plain` gives
    /// them) as `(parts, trains)`, the lists a `Render` holds; None if an assistant's content
    /// holds lone surrogates. TypeError for messages that are not plain.
    fn parts<'py>(&self, messages: &Bound<'py, PyList>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match self.frame(messages.as_any())? {
            Some(Framed::Parts(parts)) => Ok(Some(crate::jinja::py_parts(messages.py(), parts)?)),
            Some(Framed::Surrogates) => Ok(None),
            None => Err(pyo3::exceptions::PyTypeError::new_err("expected messages as dicts of str 'role' and 'content'")),
        }
    }
}
