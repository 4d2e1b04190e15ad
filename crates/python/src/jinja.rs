//! `JinjaTemplate`: a compiled Jinja chat template (bytepair_core::chat::jinja), rendered
//! with a context of Python values.
//!
//! The context is converted value by value (dict, list, tuple, str, int, float, bool, None:
//! what `bytepair.chat.jinja` hands over after preparing and marking the messages) into
//! minijinja values; rendering runs with the GIL released. A value this engine would not treat
//! as jinja2 treats the Python object (another type, which jinja2 would see with its attributes
//! and `str()`; a `str` with lone surrogates; an int beyond 128 bits) and a template that needs
//! what the engine does not reproduce (printing a list or dict) raise `NotImplementedError`,
//! on which the Python layer renders that call with jinja2.
//!
//! A conversation is converted with the GIL held, by a [`JinjaPreparer`] (one template, one
//! set of options, their variables converted once) and rendered without it: here
//! (`JinjaConversation.parts`) or on a chat job's threads (chat.rs), where `render_many` sends
//! a chunk of them to be rendered and encoded together, so rendering runs on every core rather
//! than in the calling thread only. There the preparer converts the caller's plain
//! conversations itself ([`JinjaPreparer::convert`]), so no Python runs per conversation.
//!
//! Measured against the other route (`json.dumps` in Python, `serde_json` into minijinja values
//! here), converting directly was faster and keeps what JSON loses (tuples vs lists are the
//! same to a template, but non-str keys, NaN and big ints are not).

use bytepair_core::chat::frame::{frame, Part, Specials, TextTrain, Trained};
use bytepair_core::chat::jinja::{dict_value, list_value, try_dict_value, Conversation, JinjaTemplate as Core, Mask, RenderError, TemplateError, Value};
use pyo3::exceptions::{PyNotImplementedError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::sync::Arc;

pyo3::import_exception!(bytepair.errors, ChatError);

/// How deep a context value may nest (deeper: jinja2 renders it).
const MAX_DEPTH: usize = 200;

#[pyclass(frozen, module = "bytepair._core")]
pub struct JinjaTemplate {
    inner: Arc<Core>,
}

/// Why a conversation did not render in the core: jinja2 is to render it (NotImplementedError
/// in Python, with this reason), or it fails (a ChatError with this message).
pub enum Refused {
    Jinja2(String),
    Chat(String),
}

impl Refused {
    pub fn into_py(self) -> PyErr {
        match self {
            Refused::Jinja2(why) => PyNotImplementedError::new_err(why),
            Refused::Chat(message) => ChatError::new_err(message),
        }
    }
}

/// `raise_exception`'s message and syntax errors are ChatErrors; any other failure is handed
/// back for jinja2 to render: minijinja lacks some of jinja2's filters, tests and Python
/// methods, and where jinja2 fails too its error is the one transformers' users know.
fn refused(e: TemplateError) -> Refused {
    match e {
        TemplateError::Unsupported(what) => Refused::Jinja2(what),
        TemplateError::Syntax { .. } => Refused::Chat(format!("the chat template is {e}")),
        TemplateError::Raised(_) | TemplateError::Context(_) => Refused::Chat(format!("the chat template failed: {e}")),
        TemplateError::Render { .. } => Refused::Jinja2(format!("the chat template failed: {e}")),
    }
}

fn to_py(e: TemplateError) -> PyErr {
    refused(e).into_py()
}

/// How a batch's conversations render: everything [`JinjaTemplate::render_parts`] needs
/// besides the conversation, shared by every conversation a [`JinjaPreparer`] prepares.
struct Options {
    template: Arc<Core>,
    specials: Arc<Specials>,
    add_generation_prompt: bool,
    mask: bool,
    end_of_turn: Vec<u32>,
    names: String,
}

/// A conversation converted for the core's renderer (its strings marked), with how to render
/// it, and nothing of Python's, so any thread can render it without the GIL.
pub struct Prepared {
    options: Arc<Options>,
    conversation: Conversation,
}

impl Prepared {
    /// The conversation rendered and split into parts (bytepair_core::chat::jinja).
    pub fn render(&self) -> Result<Vec<Part>, Refused> {
        let o = &*self.options;
        let mask = if o.mask { Mask::Yes { end_of_turn: &o.end_of_turn, names: &o.names } } else { Mask::No };
        o.template.render_parts(&o.specials, &self.conversation, o.add_generation_prompt, mask).map_err(|e| match e {
            RenderError::Template(e) => refused(e),
            RenderError::Frame(e) => Refused::Chat(e.to_string()),
        })
    }
}

/// One template with one set of options (`JinjaTemplate.preparer`): converts conversations
/// for the core's renderer. The template's special tokens and the caller's variables (tools,
/// documents, extra keywords) are converted once here, not once per conversation.
#[pyclass(frozen, module = "bytepair._core")]
pub struct JinjaPreparer {
    options: Arc<Options>,
    variables: Arc<[(Value, Value)]>,
    /// Whether a conversation given as a dict passes its own `"tools"` (the caller gave none).
    own_tools: bool,
}

#[pymethods]
impl JinjaPreparer {
    /// `messages` (prepared by `bytepair.chat.jinja._prepare`: plain dicts, `None` values
    /// dropped, reasoning aliased) converted, their strings marked. NotImplementedError for a
    /// value jinja2 is to render.
    fn prepare(&self, messages: &Bound<'_, PyList>) -> PyResult<JinjaConversation> {
        let marker = Some(&*self.options.specials);
        let messages = messages.iter().map(|m| to_value(&m, 0, marker)).collect::<PyResult<Vec<_>>>()?;
        Ok(JinjaConversation { inner: Arc::new(self.prepared(messages)) })
    }
}

/// The keys transformers' preparation rewrites (`_prepare`: `thinking` and
/// `reasoning_content` filled from each other): a message holding one takes Python's path.
const REASONING: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

impl JinjaPreparer {
    fn prepared(&self, messages: Vec<Value>) -> Prepared {
        Prepared { options: self.options.clone(), conversation: Conversation { variables: self.variables.clone(), messages } }
    }

    /// `conversation` as the caller gave it (`render_many`), converted here when it is plain:
    /// a list of plain dicts with a `role`, none with a reasoning key (or a dict holding such
    /// a list under `"messages"` and no tools of its own to pass), every value one this
    /// engine converts. `None` for any other: Python prepares it (`ChatTemplate.prepare`),
    /// with its errors and its jinja2 fallback, so this path decides nothing Python's would
    /// decide differently. Keys whose value is `None` are dropped, as `_prepare` drops them.
    pub fn convert(&self, conversation: &Bound<'_, PyAny>) -> Option<Prepared> {
        let messages = if let Ok(list) = conversation.downcast_exact::<PyList>() {
            list.clone()
        } else {
            let dict = conversation.downcast_exact::<PyDict>().ok()?;
            if self.own_tools && dict.get_item("tools").ok()?.is_some_and(|tools| !tools.is_none()) {
                return None;
            }
            dict.get_item("messages").ok()??.downcast_exact::<PyList>().ok()?.clone()
        };
        if messages.is_empty() {
            return None;
        }
        let marker = Some(&*self.options.specials);
        let mut out = Vec::with_capacity(messages.len());
        for message in messages.iter() {
            let message = message.downcast_exact::<PyDict>().ok()?;
            let mut role = false;
            // Err(()): Python's path is to take the conversation.
            let pairs = message.iter().filter_map(|(k, v)| {
                if let Ok(key) = k.downcast_exact::<PyString>() {
                    let Ok(key) = key.to_str() else { return Some(Err(())) };
                    role |= key == "role";
                    if REASONING.contains(&key) {
                        return Some(Err(()));
                    }
                }
                if v.is_none() {
                    return None;
                }
                Some(match (to_value(&k, 1, None), to_value(&v, 1, marker)) {
                    (Ok(k), Ok(v)) => Ok((k, v)),
                    _ => Err(()),
                })
            });
            let message = try_dict_value(pairs).ok()?;
            if !role {
                return None;
            }
            out.push(message);
        }
        Some(self.prepared(out))
    }
}

/// A prepared conversation ([`Prepared`]): `parts()` renders it here; a chat job renders it
/// on its threads.
#[pyclass(frozen, module = "bytepair._core")]
pub struct JinjaConversation {
    pub inner: Arc<Prepared>,
}

#[pymethods]
impl JinjaConversation {
    /// The rendered conversation as `(parts, trains)` (as `bytepair.chat.jinja`'s Python path
    /// gives them), rendered with the GIL released.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let parts = py.allow_threads(|| self.inner.render()).map_err(Refused::into_py)?;
        py_parts(py, parts)
    }
}

/// Rendered parts as the `(parts, trains)` lists the Python templates give: a special token's
/// id or a text; 0 or 1, or a text's `(start, end)` character spans.
pub fn py_parts(py: Python<'_>, parts: Vec<Part>) -> PyResult<Bound<'_, PyTuple>> {
    let out_parts = PyList::empty(py);
    let out_trains = PyList::empty(py);
    for part in parts {
        match part {
            Part::Token { id, train } => {
                out_parts.append(id)?;
                out_trains.append(train as u8)?;
            }
            Part::Text { text, train } => {
                out_parts.append(text)?;
                match train {
                    TextTrain::No => out_trains.append(0)?,
                    TextTrain::All => out_trains.append(1)?,
                    TextTrain::Spans(spans) => out_trains.append(spans)?,
                }
            }
        }
    }
    PyTuple::new(py, [out_parts, out_trains])
}

/// An encoding's special tokens for marking and splitting rendered conversations
/// (bytepair_core::chat::frame), built once per encoding.
#[pyclass(frozen, module = "bytepair._core")]
pub struct ChatSpecials {
    inner: Arc<Specials>,
}

#[pymethods]
impl ChatSpecials {
    #[new]
    fn new(tokens: &Bound<'_, PyDict>) -> PyResult<Self> {
        let mut pairs = Vec::with_capacity(tokens.len());
        for (k, v) in tokens.iter() {
            pairs.push((k.extract::<String>()?, v.extract::<u32>()?));
        }
        Ok(ChatSpecials { inner: Arc::new(Specials::new(pairs).map_err(PyValueError::new_err)?) })
    }

    /// `text` with each special spelling and private-use marker wrapped, so a rendering splits
    /// only at the template's own specials (the same `str` back when there is none: most).
    /// For jinja2's renderings; minijinja's are marked in [`JinjaTemplate::prepare`].
    fn mark<'py>(&self, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
        Ok(match self.inner.mark(text.to_str()?) {
            Cow::Borrowed(_) => text.clone(),
            Cow::Owned(marked) => PyString::new(text.py(), &marked),
        })
    }

    /// A rendering of marked strings as `(parts, trains)`, framed as the core frames its own
    /// renderings (bytepair_core::chat::frame::frame): nothing trained without `mask`; the
    /// `{% generation %}` blocks with `generation`; otherwise each assistant message's part,
    /// placed by `prompts` (its index and the conversation before it rendered with the
    /// generation prompt) through the next of `end_of_turn` (`names`: their spellings).
    #[pyo3(signature = (text, *, mask, generation, prompts, end_of_turn, names))]
    #[allow(clippy::too_many_arguments)]
    fn frame<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        mask: bool,
        generation: bool,
        prompts: Vec<(usize, String)>,
        end_of_turn: Vec<u32>,
        names: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let trained = match (mask, generation) {
            (false, _) => Trained::Nothing,
            (true, true) => Trained::Generation,
            (true, false) => Trained::AfterPrompts { prompts: &prompts, end_of_turn: &end_of_turn, names },
        };
        let parts = frame(&self.inner, text, trained).map_err(|e| ChatError::new_err(e.to_string()))?;
        py_parts(py, parts)
    }
}

#[pymethods]
impl JinjaTemplate {
    #[new]
    fn new(py: Python<'_>, source: &str) -> PyResult<Self> {
        let inner = py.allow_threads(|| Core::new(source)).map_err(to_py)?;
        Ok(JinjaTemplate { inner: Arc::new(inner) })
    }

    /// Whether the source has `{% generation %}` blocks.
    #[getter]
    fn has_generation(&self) -> bool {
        self.inner.has_generation()
    }

    /// The rendered string; `context` maps variable names to values.
    fn render(&self, py: Python<'_>, context: &Bound<'_, PyDict>) -> PyResult<String> {
        let context = to_value(context.as_any(), 0, None)?;
        py.allow_threads(|| self.inner.render(context)).map_err(to_py)
    }

    /// A [`JinjaPreparer`] of conversations to be rendered and split into `(parts, trains)`:
    /// `special_tokens` are the template's own (not marked); `variables` (tools, documents,
    /// extra keywords) are the caller's, their strings marked here, as the messages' will be.
    /// With `mask`, `end_of_turn` are the ids that end an assistant turn and `names` their
    /// spellings (for the error message). `own_tools`: a conversation given as a dict passes
    /// its own tools. NotImplementedError for a value jinja2 is to render.
    #[allow(clippy::too_many_arguments)]
    fn preparer(
        &self,
        specials: &ChatSpecials,
        special_tokens: &Bound<'_, PyDict>,
        variables: &Bound<'_, PyDict>,
        add_generation_prompt: bool,
        mask: bool,
        end_of_turn: Vec<u32>,
        names: String,
        own_tools: bool,
    ) -> PyResult<JinjaPreparer> {
        let marker = Some(&*specials.inner);
        let mut converted = Vec::with_capacity(special_tokens.len() + variables.len());
        for (k, v) in special_tokens.iter() {
            converted.push((to_value(&k, 0, None)?, to_value(&v, 0, None)?));
        }
        for (k, v) in variables.iter() {
            converted.push((to_value(&k, 0, None)?, to_value(&v, 0, marker)?));
        }
        let options = Options {
            template: self.inner.clone(),
            specials: specials.inner.clone(),
            add_generation_prompt,
            mask,
            end_of_turn,
            names,
        };
        Ok(JinjaPreparer { options: Arc::new(options), variables: converted.into(), own_tools })
    }

    /// The rendered string, the context given as a JSON object.
    fn render_json(&self, py: Python<'_>, context: &str) -> PyResult<String> {
        py.allow_threads(|| self.inner.render_json(context)).map_err(to_py)
    }
}

fn unsupported(what: String) -> PyErr {
    PyNotImplementedError::new_err(what)
}

/// `obj` as a minijinja value; with `mark`, its strings (not dict keys) marked.
fn to_value(obj: &Bound<'_, PyAny>, depth: usize, mark: Option<&Specials>) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(unsupported(format!("a value nested more than {MAX_DEPTH} deep")));
    }
    // Exact types only: a subclass (an str enum, an OrderedDict, ...) may print or behave
    // differently in jinja2, which sees the Python object.
    if let Ok(s) = obj.downcast_exact::<PyString>() {
        return match s.to_str() {
            Ok(s) => Ok(match mark {
                Some(m) => Value::from(m.mark(s).as_ref()),
                None => Value::from(s),
            }),
            Err(_) => Err(unsupported("a string with lone surrogates".into())),
        };
    }
    if let Ok(d) = obj.downcast_exact::<PyDict>() {
        let mut pairs = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            pairs.push((to_value(&k, depth + 1, None)?, to_value(&v, depth + 1, mark)?));
        }
        return Ok(dict_value(pairs));
    }
    if let Ok(l) = obj.downcast_exact::<PyList>() {
        let items = l.iter().map(|v| to_value(&v, depth + 1, mark)).collect::<PyResult<Vec<_>>>()?;
        return Ok(list_value(items));
    }
    if obj.is_none() {
        return Ok(Value::from(()));
    }
    if let Ok(b) = obj.downcast_exact::<PyBool>() {
        return Ok(Value::from(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return match obj.extract::<i128>() {
            Ok(i) => Ok(Value::from(i)),
            Err(_) => Err(unsupported("an int beyond 128 bits".into())),
        };
    }
    if let Ok(f) = obj.downcast_exact::<PyFloat>() {
        // Python writes a float outside [1e-4, 1e16) in exponent form (`1e-05`) and minijinja
        // positionally (`0.00001`) when `~`, `join` or `format` turn it into text; NaN and the
        // infinities are spelled differently too. Such a value renders with jinja2.
        let x = f.value();
        if !x.is_finite() || (x != 0.0 && !(1e-4..1e16).contains(&x.abs())) {
            return Err(unsupported(format!("the float {x:e}, which Python writes in exponent form")));
        }
        return Ok(Value::from(x));
    }
    if let Ok(t) = obj.downcast_exact::<PyTuple>() {
        let items = t.iter().map(|v| to_value(&v, depth + 1, mark)).collect::<PyResult<Vec<_>>>()?;
        return Ok(list_value(items));
    }
    let name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    Err(unsupported(format!("a value of type {name}")))
}
