//! `Tokenizer.encode_chat`: conversations rendered by `bytepair.chat` (special-token ids and
//! texts, each with its mask) -> ids and masks, many conversations in one call.
//!
//! Converts the Python parts into the core's `chat::Segment`s (GIL held: the `str`s are
//! borrowed, not copied), encodes the conversations on up to `num_threads` threads with the GIL
//! released (`bytepair_core::chat`), and builds the `(ids, mask)` lists. A Jinja template's
//! conversation comes converted but not rendered (`JinjaConversation`, jinja.rs): the thread
//! that encodes it renders it first, so rendering runs on every thread too. One call per batch
//! rather than one `encode_ordinary` per text: the per-text Python calls, the per-token mask
//! lists and the token-offset lookups were most of a conversation's cost.

use bytepair_core::chat::frame::{Part as Rendered, TextTrain};
use bytepair_core::chat::{encode_conversation, ChatError, Segment};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

use crate::errors::to_py;
use crate::chatml::{ChatMLFrame, Framed};
use crate::jinja::{ChatError as PyChatError, JinjaConversation, JinjaPreparer, Prepared, Refused};
use crate::ids::list;
use crate::text::Text;
use crate::tokenizer::Tokenizer;

/// A conversation as taken from Python: its parts, rendered by a template in Python (or by
/// jinja2), or a Jinja template's conversation to be rendered here, on the encoding thread
/// (`JinjaConversation`, jinja.rs): rendering then runs on every thread of a job, not only in
/// the one that calls.
enum Conv {
    Parts(Vec<Part>),
    Render(Arc<Prepared>),
    /// Framed here from the caller's dicts (`ChatMLFrame`, chatml.rs).
    Framed(Vec<Rendered>),
}

/// A part of a conversation as taken from Python (owning its text's borrow of the `str`).
enum Part {
    Token(u32, bool),
    Text(Text, TextTrain),
}

impl Part {
    /// The part as [`encode_conversation`] takes it, borrowing the `str`'s text.
    fn segment(&self) -> Segment<'_> {
        match self {
            Part::Token(id, train) => Segment::Token { id: *id, train: *train },
            Part::Text(text, train) => Segment::Text { text, train: train.as_train() },
        }
    }
}

/// Conversations per parallel task: enough text (~16 x 2 KB) that a task's overhead is small.
const CHUNK: usize = 16;

/// One chunk's results: all ids and mask bytes, where each conversation ends, the
/// conversations jinja2 is to render (index, why; their ids are left empty here), and the
/// first failure (conversation index, error), after which the chunk stops.
struct Done {
    ids: Vec<u32>,
    mask: Vec<u8>,
    ends: Vec<usize>,
    jinja2: Vec<(usize, String)>,
    err: Option<(usize, Failed)>,
}

enum Failed {
    Chat(ChatError),
    /// A Jinja template's ChatError (its message): `raise_exception`, a mask not found.
    Template(String),
    /// The core panicked (a bug): reported, never unwound through the pool.
    Panicked,
}

/// What a chat call gives Python: `(results, failed, jinja2)`, see [`encode_chat`].
pub type Answer<'py> = (Bound<'py, PyList>, Option<(usize, String)>, Vec<(usize, String)>);

/// `conversations`: a sequence of `(parts, trains)` pairs of equal-length lists (a part is a
/// special token's id (`int`) or a text (`str`), its train is 0 or 1, or for a text a list of
/// `(start, end)` character spans) or `JinjaConversation`s, rendered here; or, with `chatml`,
/// the caller's conversations as they are, framed by it ([`Chatml`]). Returns `(results,
/// failed, jinja2)`: `(ids, mask)` lists for each conversation before `failed`, which is None
/// or `(index, why)` for the first conversation that failed: `"not byte-level"` (its spans
/// split a text and the model's tokens are not byte strings of the text), `"surrogates"` (a
/// text with spans holds lone surrogates), or a ChatError message (a Jinja template's, or
/// the chatml template's for a conversation it refused); `jinja2`:
/// `(index, why)` for each conversation before `failed` that jinja2 is to render (its lists
/// are empty).
pub fn encode_chat<'py>(
    py: Python<'py>,
    tokenizer: &Bound<'py, Tokenizer>,
    conversations: &Bound<'py, PyAny>,
    num_threads: usize,
    framer: Option<Framer<'_, 'py>>,
) -> PyResult<Answer<'py>> {
    if num_threads > 1 && conversations.len().unwrap_or(0) > CHUNK {
        // On the pool and this thread, as `render_many`'s jobs are. A small batch stays here:
        // handing it to another thread and waiting costs a wake-up, which on a busy machine
        // is a time slice.
        return start(tokenizer, conversations, num_threads - 1, framer)?.result(py);
    }
    let (convs, refused) = convert(conversations, framer)?;
    let inner = &tokenizer.get().inner;
    let chunks = py.allow_threads(|| convs.chunks(CHUNK).enumerate().map(|(c, chunk)| encode_chunk(inner, c * CHUNK, chunk)).collect());
    lists(py, chunks, refused)
}

/// `encode_chat` in two steps: [`start`] converts the conversations and hands their encoding to
/// the pool, without waiting; [`ChatJob::result`] encodes what the pool has not claimed yet,
/// waits for the rest and builds the lists. The caller (`render_many`) renders the next
/// conversations in between. A Python thread that called `encode_chat` instead needed the GIL
/// to convert and to build the lists, which it got only when the rendering thread blocked (or
/// after the 5 ms switch interval): rendering and encoding took turns rather than overlapping.
#[pyclass(frozen, module = "bytepair._core")]
pub struct ChatJob {
    shared: Mutex<Option<Arc<Shared>>>,
    refused: Stop,
}

/// A job's conversations and who encodes which: the pool's workers claim runs from the
/// front, the caller (once it asks for the result) from the back, as the list batches do
/// (threads.rs, `Claims`). Before, the caller waited idle for the pool while it had nothing
/// left to render: with 2 threads, half the machine. A run is at most [`CHUNK`]
/// conversations and shrinks as the job runs out (a share of what is left), so the caller's
/// wait for the last run a worker claimed is short. The last holder of the `Arc` frees the
/// conversations (a worker: pyo3 then defers the `str`s' release to the next GIL holder).
struct Shared {
    convs: Vec<Conv>,
    tokenizer: Py<Tokenizer>,
    /// The threads that claim: the pool's and the caller.
    threads: usize,
    /// Conversations `[front, back)` are unclaimed.
    claims: Mutex<(usize, usize)>,
    /// The encoded runs (first conversation, result), and how many conversations they hold.
    done: Mutex<(Vec<(usize, Done)>, usize)>,
    all_done: Condvar,
}

impl Shared {
    fn claim(&self, from_back: bool) -> Option<std::ops::Range<usize>> {
        let mut span = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        let (front, back) = *span;
        if front == back {
            return None;
        }
        let k = ((back - front) / (2 * self.threads)).clamp(1, CHUNK);
        Some(if from_back {
            span.1 -= k;
            back - k..back
        } else {
            span.0 += k;
            front..front + k
        })
    }

    /// Encodes runs claimed from one end until none is left.
    fn work(&self, from_back: bool) {
        let tokenizer = &self.tokenizer.get().inner;
        while let Some(run) = self.claim(from_back) {
            let (first, n) = (run.start, run.len());
            let chunk = encode_chunk(tokenizer, first, &self.convs[run]);
            let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
            done.0.push((first, chunk));
            done.1 += n;
            if done.1 == self.convs.len() {
                self.all_done.notify_all();
            }
        }
    }

    /// Every run's result in conversation order, once all are encoded (this thread encodes
    /// from the back meanwhile).
    fn finish(&self) -> Vec<Done> {
        self.work(true);
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while done.1 < self.convs.len() {
            done = self.all_done.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        let mut runs = std::mem::take(&mut done.0);
        runs.sort_unstable_by_key(|(first, _)| *first);
        runs.into_iter().map(|(_, chunk)| chunk).collect()
    }
}

pub fn start<'py>(
    tokenizer: &Bound<'py, Tokenizer>,
    conversations: &Bound<'py, PyAny>,
    num_threads: usize,
    framer: Option<Framer<'_, 'py>>,
) -> PyResult<ChatJob> {
    let (convs, refused) = convert(conversations, framer)?;
    let chunks = convs.len().div_ceil(CHUNK);
    let pool = crate::threads::pool_of(num_threads).filter(|_| chunks > 0);
    let shared = Arc::new(Shared {
        tokenizer: tokenizer.clone().unbind(),
        threads: pool.as_ref().map_or(0, |p| p.current_num_threads()) + 1,
        claims: Mutex::new((0, convs.len())),
        done: Mutex::new((Vec::with_capacity(chunks), 0)),
        all_done: Condvar::new(),
        convs,
    });
    // No pool (none could be started): the caller encodes everything in `result`.
    if let Some(pool) = pool {
        for _ in 0..pool.current_num_threads().min(chunks) {
            let shared = shared.clone();
            pool.spawn(move || shared.work(false));
        }
    }
    Ok(ChatJob { shared: Mutex::new(Some(shared)), refused })
}

#[pymethods]
impl ChatJob {
    /// `encode_chat`'s `(results, failed, jinja2)`: the chunks the pool has not claimed are encoded
    /// here, the rest waited for, with the GIL released. A second call raises.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Answer<'py>> {
        let shared = self.shared.lock().unwrap_or_else(|e| e.into_inner()).take();
        let shared = shared.ok_or_else(|| PyRuntimeError::new_err("this chat job's result was already taken"))?;
        let chunks = py.allow_threads(|| shared.finish());
        lists(py, chunks, self.refused.clone())
    }

    /// Whether a conversation was refused while converting (the job holds those before it):
    /// `render_many` then starts no further jobs, as a serial loop would stop there.
    #[getter]
    fn stopped(&self) -> bool {
        self.refused.is_some()
    }
}

/// The built-in chatml template for [`encode_chat`]: its frame, and the Python function that
/// gives a conversation the frame does not take as it is (`bytepair.chat.chatml.plain`) as
/// plain messages, or raises its ChatError.
pub struct Chatml<'a, 'py> {
    pub frame: &'a ChatMLFrame,
    pub plain: &'a Bound<'py, PyAny>,
}

/// `encode_chat`'s `chatml` argument: the frame, and the Python function that gives a
/// conversation it does not take as plain messages.
pub type ChatmlArg<'py> = (PyRef<'py, ChatMLFrame>, Bound<'py, PyAny>);

/// `encode_chat`'s `jinja` argument: the batch's preparer, and the Python function that
/// prepares a conversation the preparer does not take as it is.
pub type JinjaArg<'py> = (PyRef<'py, JinjaPreparer>, Bound<'py, PyAny>);

/// How `encode_chat` reads the caller's conversations as they are, rather than rendered or
/// prepared in Python first (`render_many`: a Python call per conversation was most of the
/// calling thread's time).
pub enum Framer<'a, 'py> {
    Chatml(Chatml<'a, 'py>),
    /// A Jinja template's conversations converted here ([`JinjaPreparer::convert`]); the
    /// function (`bytepair.chat._preparer`'s) prepares the others, or raises their ChatError.
    Jinja { preparer: &'a JinjaPreparer, prepare: &'a Bound<'py, PyAny> },
}

impl<'a, 'py> Framer<'a, 'py> {
    /// The binding's `chatml` and `jinja` arguments as a [`Framer`] (at most one of them).
    pub fn from_args(chatml: &'a Option<ChatmlArg<'py>>, jinja: &'a Option<JinjaArg<'py>>) -> PyResult<Option<Self>> {
        Ok(match (chatml, jinja) {
            (Some(_), Some(_)) => return Err(PyValueError::new_err("encode_chat takes chatml or jinja, not both")),
            (Some((frame, plain)), None) => Some(Framer::Chatml(Chatml { frame, plain })),
            (None, Some((preparer, prepare))) => Some(Framer::Jinja { preparer, prepare }),
            (None, None) => None,
        })
    }
}

impl Chatml<'_, '_> {
    /// `conversation` framed: read from the dicts, or from what `plain` gives for it. Err(why)
    /// for a conversation refused: lone surrogates in a trained span, or `plain`'s ChatError.
    fn convert(&self, conversation: &Bound<'_, PyAny>) -> PyResult<Result<Vec<Rendered>, String>> {
        let framed = match self.frame.frame(conversation)? {
            Some(framed) => framed,
            None => {
                let plain = match self.plain.call1((conversation,)) {
                    Ok(plain) => plain,
                    Err(e) if e.is_instance_of::<PyChatError>(conversation.py()) => {
                        return Ok(Err(e.value(conversation.py()).to_string()));
                    }
                    Err(e) => return Err(e),
                };
                self.frame.frame(&plain)?.ok_or_else(|| PyRuntimeError::new_err("chatml.plain gave messages that are not plain (a bug)"))?
            }
        };
        Ok(match framed {
            Framed::Parts(parts) => Ok(parts),
            Framed::Surrogates => Err("surrogates".into()),
        })
    }
}

/// The first conversation refused while converting, if any: its index and why (see
/// [`encode_chat`]'s `failed`).
type Stop = Option<(usize, String)>;

/// The conversations, up to the first that cannot be taken (its index and why): the
/// ones before it are still encoded, since an error among them comes first.
fn convert(conversations: &Bound<'_, PyAny>, framer: Option<Framer<'_, '_>>) -> PyResult<(Vec<Conv>, Stop)> {
    let mut convs: Vec<Conv> = Vec::with_capacity(conversations.len().unwrap_or(0));
    for conv in conversations.try_iter()? {
        let mut conv = conv?;
        match &framer {
            Some(Framer::Chatml(chatml)) => {
                match chatml.convert(&conv)? {
                    Ok(parts) => convs.push(Conv::Framed(parts)),
                    Err(why) => {
                        let at = convs.len();
                        return Ok((convs, Some((at, why))));
                    }
                }
                continue;
            }
            Some(Framer::Jinja { preparer, prepare }) => {
                if let Some(prepared) = preparer.convert(&conv) {
                    convs.push(Conv::Render(Arc::new(prepared)));
                    continue;
                }
                // Prepared in Python: a JinjaConversation or jinja2's parts, taken below.
                conv = match prepare.call1((&conv,)) {
                    Ok(prepared) => prepared,
                    Err(e) if e.is_instance_of::<PyChatError>(conv.py()) => {
                        let at = convs.len();
                        return Ok((convs, Some((at, e.value(conv.py()).to_string()))));
                    }
                    Err(e) => return Err(e),
                };
            }
            None => {}
        }
        if let Ok(c) = conv.downcast::<JinjaConversation>() {
            convs.push(Conv::Render(c.get().inner.clone()));
            continue;
        }
        match parts(&conv)? {
            Some(p) => convs.push(Conv::Parts(p)),
            None => {
                let at = convs.len();
                return Ok((convs, Some((at, "surrogates".into()))));
            }
        }
    }
    Ok((convs, None))
}

/// The `(ids, mask)` lists of the encoded chunks, up to the first failure.
fn lists<'py>(py: Python<'py>, chunks: Vec<Done>, refused: Stop) -> PyResult<Answer<'py>> {
    // Lists of ints form no cycles; without the pause the collector walked every young list
    // (a fifth of a call's samples in perf).
    let _gc = crate::threads::GcPaused::new(py);
    let out = PyList::empty(py);
    let mut jinja2 = Vec::new();
    for chunk in chunks {
        let mut start = 0;
        for &end in &chunk.ends {
            let pair = (untracked(list(py, &chunk.ids[start..end])?), untracked(list(py, &chunk.mask[start..end])?));
            out.append(pair)?;
            start = end;
        }
        jinja2.extend(chunk.jinja2);
        let failed = match chunk.err {
            None => continue,
            Some((i, Failed::Chat(ChatError::NotByteLevel))) => (i, "not byte-level".to_string()),
            Some((i, Failed::Template(message))) => (i, message),
            Some((_, Failed::Chat(ChatError::Encode(e)))) => return Err(to_py(e)),
            Some((_, Failed::Panicked)) => return Err(PyRuntimeError::new_err("bytepair internal error (a bug: please report it)")),
        };
        return Ok((out, Some(failed), jinja2));
    }
    Ok((out, refused, jinja2))
}

/// `list` taken out of Python's cyclic collector. A list of ints can be in no reference cycle,
/// yet the collector walks every id of every tracked list: the first allocation after
/// `render_many` re-enables it starts a collection of the young objects, which are the results
/// (perf, built-in chatml on 2 threads: a quarter of the calling thread's samples, `list_traverse`
/// and `visit_*` over 2 million ids), and again when they move to the older generations. The
/// cost: a cycle the caller later builds through one of these lists (`ids.append(ids)`) is not
/// collected; nothing else changes (`gc.is_tracked` says False).
fn untracked(list: Bound<'_, PyList>) -> Bound<'_, PyList> {
    // Safety: the GIL is held (the Bound); untracking a tracked container is allowed at any
    // time, and list deallocation untracks only if tracked.
    unsafe { pyo3::ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
    list
}

fn encode_chunk(tokenizer: &bytepair_core::Tokenizer, first: usize, convs: &[Conv]) -> Done {
    let mut done = Done { ids: Vec::new(), mask: Vec::new(), ends: Vec::with_capacity(convs.len()), jinja2: Vec::new(), err: None };
    let mut scratch = Vec::new();
    for (k, conv) in convs.iter().enumerate() {
        let r = catch_unwind(AssertUnwindSafe(|| encode_one(tokenizer, conv, &mut done.ids, &mut done.mask, &mut scratch)));
        match r {
            Ok(Ok(None)) => {}
            Ok(Ok(Some(why))) => done.jinja2.push((first + k, why)),
            Ok(Err(e)) => {
                done.err = Some((first + k, e));
                break;
            }
            Err(_) => {
                done.err = Some((first + k, Failed::Panicked));
                break;
            }
        }
        done.ends.push(done.ids.len());
    }
    done
}

/// One conversation's ids and mask appended (rendered first if it is a Jinja template's);
/// `Some(why)` if jinja2 is to render it instead (nothing appended).
fn encode_one(tokenizer: &bytepair_core::Tokenizer, conv: &Conv, ids: &mut Vec<u32>, mask: &mut Vec<u8>, scratch: &mut Vec<usize>) -> Result<Option<String>, Failed> {
    let rendered: Vec<Rendered>;
    let segments: Vec<Segment<'_>> = match conv {
        Conv::Parts(parts) => parts.iter().map(Part::segment).collect(),
        Conv::Framed(parts) => parts.iter().map(Rendered::segment).collect(),
        Conv::Render(prepared) => {
            rendered = match prepared.render() {
                Ok(parts) => parts,
                Err(Refused::Jinja2(why)) => return Ok(Some(why)),
                Err(Refused::Chat(message)) => return Err(Failed::Template(message)),
            };
            rendered.iter().map(Rendered::segment).collect()
        }
    };
    encode_conversation(tokenizer, &segments, ids, mask, scratch).map_err(Failed::Chat)?;
    Ok(None)
}

/// One conversation's `(parts, trains)`; None if a text with spans holds lone surrogates.
fn parts(conv: &Bound<'_, PyAny>) -> PyResult<Option<Vec<Part>>> {
    let pair = conv.downcast::<PyTuple>()?;
    if pair.len() != 2 {
        return Err(PyValueError::new_err("expected a (parts, trains) pair"));
    }
    let (items, trains) = (pair.get_item(0)?, pair.get_item(1)?);
    let (items, trains) = (items.downcast::<PyList>()?, trains.downcast::<PyList>()?);
    if items.len() != trains.len() {
        return Err(PyValueError::new_err("parts and trains differ in length"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (item, train) in items.iter().zip(trains.iter()) {
        if let Ok(s) = item.downcast::<PyString>() {
            let text = crate::text::text(s.as_any())?;
            let mask = if let Ok(spans) = train.downcast::<PyList>() {
                if matches!(text, Text::Repaired(_)) {
                    // Repairing joins a split surrogate pair into one character, which would
                    // shift the character offsets of the spans.
                    return Ok(None);
                }
                TextTrain::Spans(spans.extract()?)
            } else if train.extract::<u8>()? != 0 {
                TextTrain::All
            } else {
                TextTrain::No
            };
            out.push(Part::Text(text, mask));
        } else {
            out.push(Part::Token(item.extract()?, train.extract::<u8>()? != 0));
        }
    }
    Ok(Some(out))
}
