//! Jinja chat templates rendered with minijinja, as transformers renders them with jinja2.
//!
//! A [`JinjaTemplate`] is compiled once and rendered many times (`&self`, so from any thread).
//! The environment is transformers' (`_compile_jinja_template`): `trim_blocks`,
//! `lstrip_blocks`, `break`/`continue`, the globals `raise_exception(message)` (a
//! [`TemplateError::Raised`]), `strftime_now(format)` and `namespace(...)`, the `tojson` filter
//! writing what Python's `json.dumps` writes, and the `{% generation %}` tag, which becomes the
//! markers U+E002 ... U+E003 around what its body renders (the caller turns them into trained
//! spans). Python's string and dict methods (`.strip()`, `.items()`, ...) come from
//! minijinja-contrib's `pycompat`. No autoescaping; undefined values are jinja2's default
//! (print as nothing, iterate as empty, false; an attribute of one is an error).
//!
//! Where jinja2 would write something this engine cannot reproduce exactly (a list or dict
//! printed as text, which jinja2 writes as its Python `repr`), rendering stops with
//! [`TemplateError::Unsupported`] naming the feature, so the caller can render that
//! conversation with jinja2 instead; the text is never silently different.
//!
//! Cost: compiling is parsing the source once. A render is one pass of minijinja's VM over the
//! context; values are shared (reference counted), not copied, as the template reads them.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use minijinja::value::{Enumerator, Kwargs, ObjectExt as _, ObjectRepr, Rest, ValueOrKwargs};

use super::frame::{frame, FrameError, Part, Specials, Trained};
use super::prompts::{message_local, Counting, Fetches};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

/// The values a context is made of (minijinja's), for callers that build one.
pub use minijinja::Value;

/// What a `{% generation %}` block's output starts and ends with.
pub const GEN_START: char = '\u{e002}';
pub const GEN_END: char = '\u{e003}';

const NAME: &str = "chat_template";

/// Most VM instructions one render may run: about a second. A template is code from a model's
/// files, and a loop in a loop (`range` stops at 100,000 each) would otherwise hold a caller,
/// such as an inference engine on the C library, for hours. The published templates take at
/// most a few hundred instructions per message (`render_stays_far_below_the_fuel` below: 2,000
/// messages in a twentieth of this), so a conversation of tens of thousands of messages
/// renders. A render that runs out is an error ([`TemplateError::Render`]); the Python path
/// hands it to jinja2, as every render failure, so the text there never changes. Memory is not
/// bounded: a template that doubles a string in a loop can still exhaust it.
pub const FUEL: u64 = 20_000_000;

/// Why a template did not compile or render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The source is not valid Jinja.
    Syntax { message: String, line: Option<usize> },
    /// The template called `raise_exception(message)`.
    Raised(String),
    /// Rendering failed (an undefined attribute, a bad operand, recursion too deep, ...).
    Render { message: String, line: Option<usize> },
    /// The template asked for something this engine does not write as jinja2 does.
    Unsupported(String),
    /// The context given as JSON is not a JSON object.
    Context(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |line: &Option<usize>| line.map(|l| format!(" (line {l})")).unwrap_or_default();
        match self {
            TemplateError::Syntax { message, line } => write!(f, "not valid Jinja: {message}{}", at(line)),
            TemplateError::Raised(message) => write!(f, "TemplateError: {message}"),
            TemplateError::Render { message, line } => write!(f, "{message}{}", at(line)),
            TemplateError::Unsupported(what) => write!(f, "not supported by the Rust engine: {what}"),
            TemplateError::Context(message) => write!(f, "bad context: {message}"),
        }
    }
}

impl std::error::Error for TemplateError {}

/// The payloads our globals attach to a minijinja error, found again in [`to_template_error`]
/// (minijinja errors have a fixed set of kinds; the source chain carries ours).
#[derive(Debug)]
struct Raised(String);
#[derive(Debug)]
struct Unsupported(String);

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Raised {}
impl std::error::Error for Unsupported {}

fn unsupported(what: impl Into<String>) -> Error {
    let what = what.into();
    Error::new(ErrorKind::InvalidOperation, what.clone()).with_source(Unsupported(what))
}

/// A compiled chat template.
pub struct JinjaTemplate {
    env: Environment<'static>,
    has_generation: bool,
    /// Whether the generation prompts can be taken from one render ([`super::prompts`]).
    message_local: bool,
    fuel: u64,
}

impl fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JinjaTemplate").field("has_generation", &self.has_generation).finish()
    }
}

impl JinjaTemplate {
    /// Compiles `source`.
    pub fn new(source: &str) -> Result<Self, TemplateError> {
        Self::build(source, true, FUEL)
    }

    /// Compiles `source` to render the text transformers' `apply_chat_template(tokenize=False)`
    /// gives: `{% generation %}` blocks print no markers (the C library's renderer).
    pub fn plain(source: &str) -> Result<Self, TemplateError> {
        Self::build(source, false, FUEL)
    }

    fn build(source: &str, markers: bool, fuel: u64) -> Result<Self, TemplateError> {
        let (rewritten, has_generation) = rewrite_generation(source, markers)?;
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build().map_err(to_template_error)?;
        // Only a template that finds masks needs it (not the C library's `plain` one).
        let message_local = markers && message_local(&rewritten, syntax.clone());
        env.set_syntax(syntax);
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        env.set_fuel(Some(fuel));
        // Templates are named by no file extension, but say so: no HTML escaping, ever.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.set_unknown_method_callback(|state, value, method, args| match value.as_str() {
            Some(s) => match py_str_method(s, method, args)? {
                Some(v) => Ok(v),
                None => minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args),
            },
            None => minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args),
        });
        env.set_formatter(|out, _state, value| {
            let written = match value.as_str() {
                Some(s) => out.write_str(s), // most values: no copy
                None => {
                    let mut s = String::new();
                    write_str(&mut s, value)?;
                    out.write_str(&s)
                }
            };
            written.map_err(|_| Error::new(ErrorKind::WriteFailure, "formatter"))
        });
        env.add_filter("tojson", tojson);
        env.add_filter("string", string);
        env.add_filter("trim", trim);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_function("namespace", namespace);
        env.add_template_owned(NAME, rewritten.into_owned()).map_err(|e| match to_template_error(e) {
            TemplateError::Render { message, line } => TemplateError::Syntax { message, line },
            other => other,
        })?;
        Ok(JinjaTemplate { env, has_generation, message_local, fuel })
    }

    /// Whether the source has `{% generation %}` blocks.
    pub fn has_generation(&self) -> bool {
        self.has_generation
    }

    /// Renders with `context` (a map: `messages`, `add_generation_prompt`, `bos_token`, ...).
    pub fn render(&self, context: Value) -> Result<String, TemplateError> {
        let template = self.env.get_template(NAME).map_err(to_template_error)?;
        no_repr(template.render(context).map_err(to_template_error)?)
    }

    /// [`JinjaTemplate::render`] writing into a [`Counting`] writer for `fetches`, and the
    /// fuel the render used.
    fn render_counting(&self, context: Value, fetches: &Fetches) -> Result<(String, u64), TemplateError> {
        let template = self.env.get_template(NAME).map_err(to_template_error)?;
        let mut out = Counting { out: Vec::new(), fetches };
        let captured = template.render_captured_to(context, &mut out).map_err(to_template_error)?;
        let used = captured.state().fuel_levels().map_or(u64::MAX, |(used, _)| used);
        // The writer is handed only `&str`s (minijinja's output is text).
        let text = String::from_utf8(out.out).map_err(|_| TemplateError::Render { message: "output is not UTF-8".into(), line: None })?;
        Ok((no_repr(text)?, used))
    }

    /// Renders with a context given as a JSON object (its keys keep their order).
    pub fn render_json(&self, context: &str) -> Result<String, TemplateError> {
        let value: Value = serde_json::from_str(context).map_err(|e| TemplateError::Context(e.to_string()))?;
        if value.kind() != minijinja::value::ValueKind::Map {
            return Err(TemplateError::Context(format!("expected a JSON object, got {}", value.kind())));
        }
        self.render(caller_value(value))
    }
}

/// A conversation to render: the variables (`tools`, `documents`, `bos_token`, extra keywords,
/// ...) and the messages, kept apart so the renders of its prefixes share them, and the
/// conversations of a batch the variables (converted once).
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub variables: Arc<[(Value, Value)]>,
    pub messages: Vec<Value>,
}

/// Whether and how to find the trained parts.
#[derive(Debug, Clone, Copy)]
pub enum Mask<'a> {
    No,
    /// `end_of_turn`: the ids that end an assistant turn; `names`: their spellings, for errors.
    Yes { end_of_turn: &'a [u32], names: &'a str },
}

/// Why a conversation did not render into parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    Template(TemplateError),
    Frame(FrameError),
}

impl From<TemplateError> for RenderError {
    fn from(e: TemplateError) -> Self {
        RenderError::Template(e)
    }
}

impl From<FrameError> for RenderError {
    fn from(e: FrameError) -> Self {
        RenderError::Frame(e)
    }
}

/// A rendering that holds [`REPR_MARK`] is refused (see there).
fn no_repr(text: String) -> Result<String, TemplateError> {
    if text.contains(REPR_MARK) {
        return Err(TemplateError::Unsupported("a list or dict turned into text (jinja2 writes its Python repr)".into()));
    }
    Ok(text)
}

impl JinjaTemplate {
    /// The variables with the first `n` messages (their fetches noted in `fetches`, if given).
    fn context(conversation: &Conversation, n: usize, add_generation_prompt: bool, fetches: Option<Arc<Fetches>>) -> Value {
        let messages = Value::from_object(List { items: conversation.messages[..n].to_vec(), fetches });
        Value::from_pairs(conversation.variables.iter().cloned().chain([
            (Value::from("messages"), messages),
            (Value::from("add_generation_prompt"), Value::from(add_generation_prompt)),
        ]))
    }

    /// Renders `conversation` (its strings already marked with [`Specials::mark`]) and splits
    /// it into parts with their trains (see [`super::frame`]): the `{% generation %}` spans,
    /// or without them each assistant message's part, found by rendering the messages before
    /// it with the generation prompt.
    pub fn render_parts(
        &self,
        specials: &Specials,
        conversation: &Conversation,
        add_generation_prompt: bool,
        mask: Mask<'_>,
    ) -> Result<Vec<Part>, RenderError> {
        let n = conversation.messages.len();
        let render = || self.render(Self::context(conversation, n, add_generation_prompt, None));
        let (end_of_turn, names) = match mask {
            Mask::No => return Ok(frame(specials, &render()?, Trained::Nothing)?),
            Mask::Yes { .. } if self.has_generation => return Ok(frame(specials, &render()?, Trained::Generation)?),
            Mask::Yes { end_of_turn, names } => (end_of_turn, names),
        };
        // The generation prompts: from this render where the template allows (message-local),
        // else from the prefix renders.
        let (text, counted) = if self.message_local {
            let fetches = Arc::new(Fetches::default());
            let (text, used) = self.render_counting(Self::context(conversation, n, add_generation_prompt, Some(fetches.clone())), &fetches)?;
            (text, fetches.offsets().map(|at| (at, used)))
        } else {
            (render()?, None)
        };
        let prompts = self.prompts(conversation, &text, counted)?;
        Ok(frame(specials, &text, Trained::AfterPrompts { prompts: &prompts, end_of_turn, names })?)
    }

    /// For each assistant message, its index and the rendering of the messages before it with
    /// the generation prompt: taken from the rendering `text` when `counted` holds where the
    /// loop fetched each message and the fuel it used ([`super::prompts`]), else rendered.
    fn prompts(&self, conversation: &Conversation, text: &str, counted: Option<(Vec<usize>, u64)>) -> Result<Vec<(usize, String)>, TemplateError> {
        let assistants: Vec<usize> = conversation.messages.iter().enumerate()
            .filter(|(_, m)| m.get_item(&Value::from("role")).ok().as_ref().and_then(|r| r.as_str()) == Some("assistant"))
            .map(|(i, _)| i)
            .collect();
        if let (Some((at, used)), false) = (counted, assistants.is_empty()) {
            if let Some(prompts) = self.prompts_from_one_render(conversation, text, &assistants, &at, used) {
                return Ok(prompts);
            }
        }
        assistants.into_iter().map(|i| Ok((i, self.render(Self::context(conversation, i, true, None))?))).collect()
    }

    /// The prompts as `text[..at[i]]` and what the template writes after its loop with the
    /// generation prompt, from a render of no messages; None where the prefix renders must
    /// decide: the loop did not fetch every message, that render failed (the prefix renders
    /// then fail as they always did) or wrote a container as text, it did not write what
    /// `text` starts with before the loop, or the two renders used more fuel than a prefix
    /// render may.
    fn prompts_from_one_render(&self, conversation: &Conversation, text: &str, assistants: &[usize], at: &[usize], used: u64) -> Option<Vec<(usize, String)>> {
        if at.len() != conversation.messages.len() {
            return None;
        }
        let (empty, empty_used) = self.render_counting(Self::context(conversation, 0, true, None), &Fetches::default()).ok()?;
        let before_loop = text.get(..at[0])?;
        let tail = empty.strip_prefix(before_loop)?;
        if used.saturating_add(empty_used) > self.fuel {
            return None;
        }
        assistants.iter().map(|&i| Some((i, [text.get(..at[i])?, tail].concat()))).collect()
    }
}

fn to_template_error(e: Error) -> TemplateError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Raised>() {
            return TemplateError::Raised(r.0.clone());
        }
        if let Some(u) = s.downcast_ref::<Unsupported>() {
            return TemplateError::Unsupported(u.0.clone());
        }
        source = s.source();
    }
    let line = e.line();
    let message = match e.detail() {
        Some(d) if d.contains("recursion limit exceeded") => "recursion too deep".to_string(),
        _ if e.kind() == ErrorKind::OutOfFuel => "the template ran out of instructions (chat::jinja::FUEL)".to_string(),
        Some(d) => format!("{}: {d}", e.kind()),
        None => e.kind().to_string(),
    };
    match e.kind() {
        ErrorKind::SyntaxError | ErrorKind::BadEscape => TemplateError::Syntax { message, line },
        _ => TemplateError::Render { message, line },
    }
}

// {% generation %} ----------------------------------------------------------------------------

/// `source` with each `{% generation %}` / `{% endgeneration %}` tag replaced by an `if` block
/// that prints the start / end marker, and whether there was any.
///
/// The tag's own delimiters are kept (`{%- generation +%}` -> `{%- if true %}...{% endif +%}`)
/// so `-`/`+` whitespace control, `lstrip_blocks` (on the opening `{%`) and `trim_blocks` (on
/// the closing `%}`) apply exactly where jinja2 applies them to the original tag. Comments,
/// `{% raw %}` blocks, expressions and other tags are copied unchanged. The tags must pair up
/// (as jinja2's parser requires); unlike jinja2, a pair that crosses another block is not
/// refused (it renders as if properly nested).
/// With `markers` false the blocks print nothing of their own (`{{ "" }}`).
pub fn rewrite_generation(source: &str, markers: bool) -> Result<(Cow<'_, str>, bool), TemplateError> {
    if !source.contains("generation") {
        return Ok((Cow::Borrowed(source), false));
    }
    let line_at = |at: usize| source[..at].matches('\n').count() + 1;
    let mut out = String::with_capacity(source.len() + 64);
    let mut copied = 0; // source[..copied] is in `out`
    let mut at = 0;
    let mut open: Vec<usize> = Vec::new(); // the unclosed {% generation %} tags' offsets
    let mut found = false;
    while let Some(rel) = source[at..].find('{') {
        let start = at + rel;
        let rest = &source[start..];
        // Each closer is looked for after its opener, as jinja2's lexer does: in `{#}` or `{%}`
        // the opener's `#` or `%` does not close it (a search from the `{` found `{%}`'s own
        // `%}` and cut the tag from byte 2 to byte 1: a fuzzer's input, now
        // fuzz/regressions/chat_template). In expressions and tags, not inside a string.
        if let Some(inner) = rest.strip_prefix("{#") {
            at = inner.find("#}").map_or(source.len(), |e| start + 2 + e + 2);
        } else if let Some(inner) = rest.strip_prefix("{{") {
            at = closer_outside_strings(inner, "}}").map_or(source.len(), |e| start + 2 + e + 2);
        } else if let Some(inner) = rest.strip_prefix("{%") {
            let Some(close) = closer_outside_strings(inner, "%}").map(|e| 2 + e) else { break };
            let tag = &rest[2..close]; // between {% and %}
            let end = start + close + 2;
            let lead = tag.strip_prefix(['-', '+']).unwrap_or(tag);
            let name = lead.trim_start();
            let word = name.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
            match word {
                "raw" => {
                    // Up to the end of the {% endraw %} tag: nothing inside is a tag.
                    at = source[end..].find("endraw").and_then(|e| source[end + e..].find("%}").map(|c| end + e + c + 2))
                        .unwrap_or(source.len());
                    continue;
                }
                "generation" | "endgeneration" if name[word.len()..].trim_start().trim_start_matches(['-', '+']).is_empty() => {
                    let after = &name[word.len()..]; // whitespace and the closing - or +
                    let left = &tag[..tag.len() - name.len()]; // {% and its - or + and spaces
                    let marker = if word == "generation" {
                        open.push(start);
                        GEN_START
                    } else if open.pop().is_none() {
                        return Err(TemplateError::Syntax {
                            message: "{% endgeneration %} without {% generation %}".into(),
                            line: Some(line_at(start)),
                        });
                    } else {
                        GEN_END
                    };
                    out.push_str(&source[copied..start]);
                    let marker = if markers { marker.to_string() } else { String::new() };
                    let _ = write!(out, "{{%{left}if true %}}{{{{ \"{marker}\" }}}}{{% endif{after}%}}");
                    copied = end;
                    found = true;
                }
                _ => {}
            }
            at = end;
        } else {
            at = start + 1;
        }
    }
    if let Some(&start) = open.last() {
        return Err(TemplateError::Syntax {
            message: "{% generation %} without {% endgeneration %}".into(),
            line: Some(line_at(start)),
        });
    }
    if !found {
        return Ok((Cow::Borrowed(source), false));
    }
    out.push_str(&source[copied..]);
    Ok((Cow::Owned(out), true))
}

/// Where `close` first occurs in `inner` (the text after a `{{` or `{%`) outside the string
/// literals jinja2's lexer reads there (`'...'` or `"..."`, a backslash escaping the next
/// character), so that `{{ '}}' }}` ends at its last `}}`; None if it does not occur, or a
/// string is left open (jinja2 refuses such a template, and so does the renderer).
fn closer_outside_strings(inner: &str, close: &str) -> Option<usize> {
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return None;
                }
                i += 1;
            }
            _ if b[i..].starts_with(close.as_bytes()) => return Some(i),
            _ => i += 1,
        }
    }
    None
}

// globals -------------------------------------------------------------------------------------

fn raise_exception(message: Value) -> Result<Value, Error> {
    let message = message.to_string();
    Err(Error::new(ErrorKind::InvalidOperation, message.clone()).with_source(Raised(message)))
}

/// jinja2's `namespace(...)` refuses nothing, but bytepair's jinja2 environment refuses names
/// starting with `_` (they reach CPython internals there); the same template must fail the
/// same way here.
fn namespace(defaults: Option<ValueOrKwargs>) -> Result<Value, Error> {
    if let Some(arg) = defaults.clone().map(ValueOrKwargs::into_value) {
        if let (Ok(keys), minijinja::value::ValueKind::Map) = (arg.try_iter(), arg.kind()) {
            {
                for key in keys {
                    if key.as_str().is_some_and(|k| k.starts_with('_')) {
                        return Err(Error::new(
                            ErrorKind::InvalidOperation,
                            format!("SecurityError: a namespace attribute cannot start with '_': '{key}'"),
                        ));
                    }
                }
            }
        }
    }
    minijinja::functions::namespace(defaults)
}

/// Python's `datetime.now().strftime(format)`: the C library's `strftime` on local time, as
/// CPython calls it, after CPython's own `%f` (microseconds) and `%z`/`%Z`/`%:z` (empty for
/// the naive `datetime.now()`).
fn strftime_now(format: &str) -> Result<String, Error> {
    strftime_local(format).ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "strftime_now failed"))
}

#[cfg(unix)]
fn strftime_local(format: &str) -> Option<String> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?;
    let mut fmt = String::with_capacity(format.len());
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            fmt.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('f') => {
                chars.next();
                let _ = write!(fmt, "{:06}", now.subsec_micros());
            }
            Some('z') | Some('Z') => {
                chars.next();
            }
            Some(':') => {
                chars.next();
                if chars.peek() == Some(&'z') {
                    chars.next();
                } else {
                    fmt.push_str("%:");
                }
            }
            Some(next) => {
                chars.next();
                fmt.push('%');
                fmt.push(next);
            }
            None => fmt.push('%'),
        }
    }
    let c_fmt = std::ffi::CString::new(fmt).ok()?;
    let secs = libc::time_t::try_from(now.as_secs()).ok()?;
    // SAFETY: localtime_r writes into `tm`, which we own; strftime writes at most `buf.len()`
    // bytes into `buf` and returns how many (0 when it did not fit, or an empty result).
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return None;
        }
        let mut size = 256 + c_fmt.as_bytes().len() * 8;
        for _ in 0..4 {
            let mut buf = vec![0u8; size];
            let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), c_fmt.as_ptr(), &tm);
            if n > 0 || c_fmt.as_bytes().is_empty() {
                buf.truncate(n);
                return String::from_utf8(buf).ok();
            }
            size *= 8;
        }
        Some(String::new()) // a format whose result is empty (CPython gives "" too)
    }
}

#[cfg(not(unix))]
fn strftime_local(_format: &str) -> Option<String> {
    None
}

// Python's whitespace -------------------------------------------------------------------------

/// Python's `str.isspace()` for one character: Unicode White_Space (Rust's `is_whitespace`)
/// and the four separators U+001C..U+001F, which Python counts and Rust does not. `trim`,
/// `.strip()` and `.split()` with Rust's definition stopped at them (a message starting with
/// U+001F was not stripped at all), so they are redefined here.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's line boundaries (`str.splitlines`): `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C..U+001E,
/// U+0085, U+2028, U+2029.
fn py_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn py_strip<'a>(s: &'a str, method: &str, chars: Option<&str>) -> &'a str {
    let strip = |c: char| match chars {
        Some(set) => set.contains(c),
        None => py_space(c),
    };
    match method {
        "lstrip" => s.trim_start_matches(strip),
        "rstrip" => s.trim_end_matches(strip),
        _ => s.trim_matches(strip),
    }
}

/// The string methods whose Python meaning depends on Python's whitespace or line breaks
/// (`None`: not one of them, or arguments left to minijinja-contrib's pycompat).
fn py_str_method(s: &str, method: &str, args: &[Value]) -> Result<Option<Value>, Error> {
    let arg = |k: usize| args.get(k).filter(|v| !v.is_none());
    match method {
        "strip" | "lstrip" | "rstrip" if args.len() <= 1 => {
            let chars = match arg(0) {
                None => None,
                Some(v) => Some(v.as_str().ok_or_else(|| Error::new(ErrorKind::InvalidOperation, format!("{method} arg must be None or str")))?),
            };
            Ok(Some(Value::from(py_strip(s, method, chars))))
        }
        "split" if args.is_empty() || (args.len() == 1 && arg(0).is_none()) => {
            Ok(Some(s.split(py_space).filter(|w| !w.is_empty()).map(Value::from).collect()))
        }
        // split(None, maxsplit): Python's rules for the remainder, left to jinja2.
        "split" if arg(0).is_none() => Err(unsupported("str.split(None, maxsplit)")),
        "splitlines" if args.len() <= 1 => {
            let keepends = arg(0).is_some_and(|v| v.is_true());
            let mut lines = Vec::new();
            let mut rest = s;
            while let Some(at) = rest.find(py_line_break) {
                let c = rest[at..].chars().next().unwrap_or('\n');
                let mut end = at + c.len_utf8();
                if c == '\r' && rest[end..].starts_with('\n') {
                    end += 1;
                }
                lines.push(Value::from(if keepends { &rest[..end] } else { &rest[..at] }));
                rest = &rest[end..];
            }
            if !rest.is_empty() {
                lines.push(Value::from(rest));
            }
            Ok(Some(Value::from(lines)))
        }
        "isspace" if args.is_empty() => Ok(Some(Value::from(!s.is_empty() && s.chars().all(py_space)))),
        _ => Ok(None),
    }
}

/// jinja2's `trim(value, chars=None)`: Python's `str(value).strip(chars)`.
fn trim(value: Value, chars: Option<String>) -> Result<Value, Error> {
    let mut text = String::new();
    let s = match value.as_str() {
        Some(s) => s,
        None => {
            write_str(&mut text, &value)?;
            &text
        }
    };
    Ok(Value::from(py_strip(s, "strip", chars.as_deref())))
}

// the caller's containers ---------------------------------------------------------------------

/// What the caller's list or dict writes when a template turns it into text some way other
/// than `{{ }}` or `|string` (which refuse it directly): `~`, `join`, `format`. jinja2 writes
/// Python's repr there and minijinja its own notation, so a rendering that holds this
/// character is refused ([`TemplateError::Unsupported`]) rather than returned. A caller's
/// string holding it only costs a needless refusal.
const REPR_MARK: char = '\u{e004}';

/// A caller's dict: a map like minijinja's own, but it writes [`REPR_MARK`] as text. Hashed with
/// foldhash: std's SipHash of the key was ~5% of a render's samples (`message['content']`).
#[derive(Debug)]
struct Dict(indexmap::IndexMap<Value, Value, foldhash::fast::RandomState>);

/// Up to this many keys, a string key is found by comparing it with each key rather than by
/// hashing it: a message has two to four keys, and comparing `"content"` with them is cheaper
/// than hashing it once.
const SCAN_KEYS: usize = 8;

impl minijinja::value::Object for Dict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        // The same entry the hash lookup finds: the keys are distinct, and a string equals
        // (minijinja's `==`, which the map uses) only a string with the same text.
        // (`as_str` also reads bytes, which equal no string: hence the kinds.)
        fn string(v: &Value) -> Option<&str> {
            if v.kind() == minijinja::value::ValueKind::String { v.as_str() } else { None }
        }
        if let (true, Some(name)) = (self.0.len() <= SCAN_KEYS, string(key)) {
            return self.0.iter().find(|(k, _)| string(k) == Some(name)).map(|(_, v)| v.clone());
        }
        self.0.get(key).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_rev_key_value_enumerator(|this| Box::new(this.0.iter().map(|(k, v)| (k.clone(), v.clone()))))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.0.len())
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char(REPR_MARK)
    }
}

/// A caller's list (or tuple): a sequence like minijinja's own that writes [`REPR_MARK`]. The
/// messages of a render that finds the generation prompts in one go note each fetch
/// ([`super::prompts`]).
#[derive(Debug)]
struct List {
    items: Vec<Value>,
    fetches: Option<Arc<Fetches>>,
}

impl minijinja::value::Object for List {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = key.as_usize()?;
        if let Some(fetches) = &self.fetches {
            fetches.note(i);
        }
        self.items.get(i).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.items.len())
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char(REPR_MARK)
    }
}

/// A caller's dict as a template value (keys in the given order; a repeated key keeps its
/// first place and its last value, as a Python dict built from the pairs would).
pub fn dict_value(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
    Value::from_object(Dict(pairs.into_iter().collect()))
}

/// [`dict_value`] of pairs that may fail: the first error, or the dict, built without an
/// intermediate vector (a binding converting a dataset's messages makes one per message).
pub fn try_dict_value<E>(pairs: impl IntoIterator<Item = Result<(Value, Value), E>>) -> Result<Value, E> {
    Ok(Value::from_object(Dict(pairs.into_iter().collect::<Result<_, E>>()?)))
}

/// A caller's list as a template value.
pub fn list_value(items: Vec<Value>) -> Value {
    Value::from_object(List { items, fetches: None })
}

/// `value` with every map and sequence made a [`Dict`] / [`List`] (for contexts read from JSON).
fn caller_value(value: Value) -> Value {
    match value.kind() {
        minijinja::value::ValueKind::Map => {
            let pairs: Vec<(Value, Value)> = match value.try_iter() {
                Ok(keys) => keys.map(|k| {
                    let v = value.get_item(&k).unwrap_or_default();
                    (k, caller_value(v))
                }).collect(),
                Err(_) => return value,
            };
            dict_value(pairs)
        }
        minijinja::value::ValueKind::Seq => match value.try_iter() {
            Ok(items) => list_value(items.map(caller_value).collect()),
            Err(_) => value,
        },
        _ => value,
    }
}

// printing ------------------------------------------------------------------------------------

/// `str(value)` as Python writes it for the values a chat template prints: strings as they
/// are, `None`/`True`/`False`, integers, floats by `repr`; an undefined value as nothing.
/// Containers are refused: jinja2 writes their Python `repr`, which this engine does not copy.
fn write_str(out: &mut String, value: &Value) -> Result<(), Error> {
    if let Some(s) = value.as_str() {
        out.push_str(s);
        return Ok(());
    }
    match value.kind() {
        minijinja::value::ValueKind::Undefined => {}
        minijinja::value::ValueKind::None => out.push_str("None"),
        minijinja::value::ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        minijinja::value::ValueKind::Number if value.is_integer() => {
            let _ = write!(out, "{value}");
        }
        minijinja::value::ValueKind::Number => {
            let f = f64::try_from(value.clone()).map_err(|_| unsupported("a number that is not a float"))?;
            py_float_repr(out, f, false);
        }
        kind => return Err(unsupported(format!("printing a {kind} as text (jinja2 writes its Python repr)"))),
    }
    Ok(())
}

fn string(value: Value) -> Result<Value, Error> {
    if value.as_str().is_some() {
        return Ok(value);
    }
    let mut s = String::new();
    write_str(&mut s, &value)?;
    Ok(Value::from(s))
}

/// Python's `repr(float)` (`json` gives `NaN`/`Infinity` where `repr` gives `nan`/`inf`): the
/// shortest digits that read back as `f`, in positional notation for decimal exponents -4 to
/// 15, else scientific with a sign and at least two exponent digits.
fn py_float_repr(out: &mut String, f: f64, json: bool) {
    if f.is_nan() {
        out.push_str(if json { "NaN" } else { "nan" });
        return;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    if f.is_infinite() {
        out.push_str(if json { "Infinity" } else { "inf" });
        return;
    }
    // Rust's `{:e}` writes the same shortest round-trip digits: "1.2345e3", "5e-7", "0e0".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let point = exp + 1; // digits before the decimal point
    if (-4..16).contains(&exp) {
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-point) as usize));
            out.push_str(&digits);
        } else if (point as usize) < digits.len() {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        } else {
            out.push_str(&digits);
            out.push_str(&"0".repeat(point as usize - digits.len()));
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

// tojson --------------------------------------------------------------------------------------

/// How deep `tojson` follows containers (CPython stops at its recursion limit, ~1000).
const MAX_JSON_DEPTH: usize = 500;

struct JsonStyle {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

/// transformers' `tojson`: `json.dumps(value, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`, the arguments by position or name. Unlike Jinja's
/// built-in `tojson`, no HTML escaping.
fn tojson(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > NAMES.len() {
        return Err(Error::new(ErrorKind::TooManyArguments, "tojson takes at most 4 arguments"));
    }
    let mut given: [Option<Value>; 4] = Default::default();
    for (k, v) in args.iter().enumerate() {
        given[k] = Some(v.clone());
    }
    for (k, name) in NAMES.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            if given[k].is_some() {
                return Err(Error::new(ErrorKind::InvalidOperation, format!("tojson got {name} twice")));
            }
            given[k] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let [ensure_ascii, indent, separators, sort_keys] = given.map(|v| v.filter(|v| !v.is_none()));
    let indent = match indent {
        None => None,
        Some(v) if v.as_str().is_some() => Some(v.as_str().unwrap_or_default().to_string()),
        Some(v) => {
            let n = v.as_i64().ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "tojson: indent must be an integer or a string"))?;
            Some(" ".repeat(n.clamp(0, 1 << 16) as usize))
        }
    };
    let (item_sep, key_sep) = match separators {
        Some(seps) => {
            let parts: Vec<Value> = seps.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                    (a.as_str().unwrap_or_default().to_string(), b.as_str().unwrap_or_default().to_string())
                }
                _ => return Err(Error::new(ErrorKind::InvalidOperation, "tojson: separators must be two strings")),
            }
        }
        // Python's default: ", " and ": ", or "," and ": " when indenting.
        None => (if indent.is_some() { "," } else { ", " }.to_string(), ": ".to_string()),
    };
    let style = JsonStyle {
        ensure_ascii: ensure_ascii.is_some_and(|v| v.is_true()),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.is_some_and(|v| v.is_true()),
    };
    let mut out = String::new();
    write_json(&mut out, &value, &style, 0)?;
    Ok(Value::from(out))
}

fn json_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("tojson: {message}"))
}

fn write_json(out: &mut String, value: &Value, style: &JsonStyle, depth: usize) -> Result<(), Error> {
    if depth > MAX_JSON_DEPTH {
        return Err(json_error("nested too deeply".into()));
    }
    if let Some(s) = value.as_str() {
        write_json_str(out, s, style.ensure_ascii);
        return Ok(());
    }
    match value.kind() {
        minijinja::value::ValueKind::None => out.push_str("null"),
        minijinja::value::ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        minijinja::value::ValueKind::Number if value.is_integer() => {
            let _ = write!(out, "{value}");
        }
        minijinja::value::ValueKind::Number => {
            let f = f64::try_from(value.clone()).map_err(|_| json_error("not a number".into()))?;
            py_float_repr(out, f, true);
        }
        // Not ValueKind::Iterable: a generator (`|map(...)` in jinja2) is not serializable in Python.
        minijinja::value::ValueKind::Seq => {
            let items: Vec<Value> = value.try_iter()?.collect();
            write_container(out, style, depth, '[', ']', items.len(), |out, k| write_json(out, &items[k], style, depth + 1))?;
        }
        minijinja::value::ValueKind::Map => {
            let mut pairs: Vec<(String, Value)> = Vec::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                pairs.push((json_key(&key)?, item));
            }
            if style.sort_keys {
                // Python sorts the keys themselves; for string keys that is code point order,
                // which is UTF-8 byte order.
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
            }
            write_container(out, style, depth, '{', '}', pairs.len(), |out, k| {
                write_json_str(out, &pairs[k].0, style.ensure_ascii);
                out.push_str(&style.key_sep);
                write_json(out, &pairs[k].1, style, depth + 1)
            })?;
        }
        kind => return Err(json_error(format!("a {kind} is not JSON serializable"))),
    }
    Ok(())
}

/// A dict key as Python's `json` writes it: strings as they are, numbers, `true`/`false`/`null`.
fn json_key(key: &Value) -> Result<String, Error> {
    if let Some(s) = key.as_str() {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    match key.kind() {
        minijinja::value::ValueKind::Number | minijinja::value::ValueKind::Bool | minijinja::value::ValueKind::None => {
            write_json(&mut out, key, &JsonStyle { ensure_ascii: false, indent: None, item_sep: String::new(), key_sep: String::new(), sort_keys: false }, 0)?
        }
        kind => return Err(json_error(format!("keys must be str, int, float, bool or None, not {kind}"))),
    }
    Ok(out)
}

fn write_container(
    out: &mut String,
    style: &JsonStyle,
    depth: usize,
    open: char,
    close: char,
    len: usize,
    mut item: impl FnMut(&mut String, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if len == 0 {
        out.push(close);
        return Ok(());
    }
    let newline = |out: &mut String, level: usize| {
        if let Some(indent) = &style.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    };
    for k in 0..len {
        if k > 0 {
            out.push_str(&style.item_sep);
        }
        newline(out, depth + 1);
        item(out, k)?;
    }
    newline(out, depth);
    out.push(close);
    Ok(())
}

/// A JSON string as Python's `json` writes it: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
/// other control characters as `\u00XX`; with `ensure_ascii`, everything outside ' '..'~' as
/// `\uXXXX` (UTF-16 surrogate pairs above U+FFFF).
fn write_json_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::frame::TextTrain;

    fn render(source: &str, context: &str) -> Result<String, TemplateError> {
        JinjaTemplate::new(source)?.render_json(context)
    }

    #[test]
    fn tojson_writes_what_python_json_dumps_writes() {
        let ctx = r#"{"v": {"b": 1, "a": [1.5, null, true, "x\"<\n\u00e9\u0001"], "c": {}, "d": []}}"#;
        // Default: ", " and ": ", key order kept, no HTML escaping, non-ASCII as is.
        assert_eq!(
            render("{{ v | tojson }}", ctx).unwrap(),
            r#"{"b": 1, "a": [1.5, null, true, "x\"<\né\u0001"], "c": {}, "d": []}"#
        );
        assert_eq!(
            render("{{ v | tojson(indent=2, sort_keys=true) }}", ctx).unwrap(),
            "{\n  \"a\": [\n    1.5,\n    null,\n    true,\n    \"x\\\"<\\n\u{e9}\\u0001\"\n  ],\n  \"b\": 1,\n  \"c\": {},\n  \"d\": []\n}"
        );
        assert_eq!(render("{{ v.a | tojson(separators=(',', ':'), ensure_ascii=true) }}", ctx).unwrap(),
                   r#"[1.5,null,true,"x\"<\n\u00e9\u0001"]"#);
        assert_eq!(render("{{ '\u{1F600}' | tojson(true) }}", "{}").unwrap(), r#""\ud83d\ude00""#);
        assert!(render("{{ v | tojson(bogus=1) }}", ctx).is_err());
    }

    #[test]
    fn floats_print_as_python_repr() {
        let cases = [(1.0, "1.0"), (0.1, "0.1"), (1e16, "1e+16"), (1e15, "1000000000000000.0"), (1.5e-5, "1.5e-05"),
                     (0.0001, "0.0001"), (-0.0, "-0.0"), (123.456, "123.456"), (f64::INFINITY, "inf"), (2.5e300, "2.5e+300")];
        for (f, want) in cases {
            let mut s = String::new();
            py_float_repr(&mut s, f, false);
            assert_eq!(s, want, "{f}");
        }
        assert_eq!(render("{{ x }} {{ x | string }} {{ [x] | tojson }}", r#"{"x": 1e20}"#).unwrap(), "1e+20 1e+20 [1e+20]");
        assert_eq!(render("{{ none }} {{ true }} {{ 3 }} [{{ nothing }}]", "{}").unwrap(), "None True 3 []");
    }

    #[test]
    fn a_callers_container_turned_into_text_any_way_is_refused() {
        for source in ["{{ 'x' ~ m }}", "{{ [m] | join(',') }}", "{{ l ~ '' }}", "{{ m.l ~ '' }}"] {
            let e = render(source, r#"{"m": {"a": 1, "l": [1]}, "l": [1, 2]}"#).unwrap_err();
            assert!(matches!(e, TemplateError::Unsupported(_)), "{source}: {e:?}");
        }
        // Everything else about them is a map's and a list's.
        let ctx = r#"{"m": {"b": 1, "a": [1, 2, 3]}}"#;
        assert_eq!(render("{{ m.a[-1] }} {{ m['b'] }} {{ m | length }} {{ m.a | length }} {% for k in m %}{{ k }}{% endfor %} \
                           {{ m.a[1:] | join('+') }} {{ 'a' in m }} {{ m.a | reverse | join }} {{ m | dictsort | first | first }}", ctx).unwrap(),
                   "3 1 2 3 ba 2+3 True 321 a");
    }

    #[test]
    fn printing_a_container_is_refused_not_guessed() {
        let e = render("{{ m }}", r#"{"m": {"a": 1}}"#).unwrap_err();
        assert!(matches!(e, TemplateError::Unsupported(_)), "{e:?}");
        assert!(matches!(render("{{ [1] | string }}", "{}").unwrap_err(), TemplateError::Unsupported(_)));
    }

    #[test]
    fn generation_tags_become_markers_with_the_same_whitespace_control() {
        let (out, found) = rewrite_generation("a{%- generation +%}b{% endgeneration -%} c", true).unwrap();
        assert!(found);
        assert_eq!(out, "a{%- if true %}{{ \"\u{e002}\" }}{% endif +%}b{% if true %}{{ \"\u{e003}\" }}{% endif -%} c");
        // trim_blocks and lstrip_blocks act on the tag's own line as on the original tag.
        let source = "x\n  {% generation %}\nbody\n  {% endgeneration %}\ny";
        assert_eq!(render(source, "{}").unwrap(), "x\n\u{e002}body\n\u{e003}y");
        assert_eq!(JinjaTemplate::plain(source).unwrap().render_json("{}").unwrap(), "x\nbody\ny");
        assert_eq!(render("{% for i in [1, 2] %}{%- generation -%} {{ i }} {%- endgeneration %}{% endfor %}", "{}").unwrap(),
                   "\u{e002}1\u{e003}\u{e002}2\u{e003}");
        // Untouched: comments, expressions, raw blocks.
        let literal = "{# {% generation %} #}{{ '{% generation %}' }}{% raw %}{% generation %}{% endraw %}";
        assert_eq!(rewrite_generation(literal, true).unwrap(), (Cow::Borrowed(literal), false));
        assert_eq!(render(literal, "{}").unwrap(), "{% generation %}{% generation %}");
        assert!(matches!(rewrite_generation("{% generation %}", true), Err(TemplateError::Syntax { line: Some(1), .. })));
        assert!(matches!(rewrite_generation("\n{% endgeneration %}", true), Err(TemplateError::Syntax { line: Some(2), .. })));
    }

    /// A closer is found after its opener and outside string literals, as jinja2's lexer
    /// finds it: `{%}` is not a whole tag (this panicked: a fuzzer's input, kept in
    /// fuzz/regressions/chat_template), `{#}` opens a comment that runs to the next `#}`, and
    /// a `}}` or `%}` in a string closes nothing.
    #[test]
    fn an_opener_does_not_close_itself() {
        let bogus = "{%}{% generation %}";
        assert_eq!(rewrite_generation(bogus, true).unwrap(), (Cow::Borrowed(bogus), false));
        assert!(matches!(JinjaTemplate::new(bogus), Err(TemplateError::Syntax { .. })), "{:?}", JinjaTemplate::new(bogus).err());
        assert!(rewrite_generation("{%}{% generation %}x{% endgeneration %}", true).is_err());
        // All one comment, as in jinja2: nothing to rewrite, nothing rendered.
        let comment = "{#}{% generation %}{% endgeneration %}#}x";
        assert_eq!(rewrite_generation(comment, true).unwrap(), (Cow::Borrowed(comment), false));
        assert_eq!(render(comment, "{}").unwrap(), "x");
        // A closer inside a string literal closes nothing, in an expression or a tag: these
        // generation tags are text that jinja2 prints.
        let quoted = "{{ '}}{% generation %}' }}{% set s = \"%}{% endgeneration %}\" %}{{ s }}";
        assert_eq!(rewrite_generation(quoted, true).unwrap(), (Cow::Borrowed(quoted), false));
        assert_eq!(render(quoted, "{}").unwrap(), "}}{% generation %}%}{% endgeneration %}");
        let escaped = r#"{{ 'it\'s }}' }}{% generation %}{{ "a\"%}" }}{% endgeneration %}"#;
        assert!(rewrite_generation(escaped, true).unwrap().1);
        assert_eq!(render(escaped, "{}").unwrap(), "it's }}\u{e002}a\"%}\u{e003}");
        assert_eq!(JinjaTemplate::plain(escaped).unwrap().render_json("{}").unwrap(), "it's }}a\"%}");
    }

    #[test]
    fn whitespace_control_is_transformers() {
        let source = "{% for m in messages %}\n  {% if m %}\n{{ m }}\n  {% endif %}\n{% endfor %}\n";
        assert_eq!(render(source, r#"{"messages": ["a", "b"]}"#).unwrap(), "a\nb\n");
        assert_eq!(render("{%- for m in messages -%} {{ m }} {%+ endfor %}", r#"{"messages": ["a", "b"]}"#).unwrap(), "a b ");
        assert_eq!(render("{% for i in [1, 2, 3] %}{% if i == 2 %}{% continue %}{% endif %}{{ i }}{% endfor %}", "{}").unwrap(), "13");
    }

    #[test]
    fn a_render_that_runs_out_of_fuel_is_an_error() {
        let start = std::time::Instant::now();
        let e = render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "{}").unwrap_err();
        assert!(matches!(&e, TemplateError::Render { message, .. } if message.contains("out of instructions")), "{e:?}");
        // Not a timing assertion on speed: a bound that a runaway loop (10^10 iterations) misses
        // by hours and the fuel meets by a wide margin on any machine.
        assert!(start.elapsed() < std::time::Duration::from_secs(120));
    }

    #[test]
    fn render_stays_far_below_the_fuel() {
        // The published templates (tests/data/chat_templates) on 2,000 alternating turns of
        // 200 characters each, with a twentieth of the fuel: they render.
        let turn = "word ".repeat(40);
        let messages: Vec<String> = (0..2000)
            .map(|i| format!(r#"{{"role": "{}", "content": "{turn}"}}"#, ["user", "assistant"][i % 2]))
            .collect();
        let context = format!(r#"{{"messages": [{}], "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true}}"#, messages.join(", "));
        for source in [
            include_str!("../../../../tests/data/chat_templates/llama3.1.jinja"),
            include_str!("../../../../tests/data/chat_templates/qwen2.5.jinja"),
            include_str!("../../../../tests/data/chat_templates/mistral-instruct-v0.1.jinja"),
            include_str!("../../../../tests/data/chat_templates/gemma.jinja"),
            include_str!("../../../../tests/data/chat_templates/phi3.jinja"),
        ] {
            let t = JinjaTemplate::build(source, true, FUEL / 20).unwrap();
            let text = t.render_json(&context).unwrap();
            assert!(text.len() > 2000 * turn.len(), "{}", &text[..200]);
        }
    }

    const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] \
                          + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn message_local_templates_are_recognised() {
        let local = |source: &str| JinjaTemplate::new(source).unwrap().message_local;
        for source in [
            CHATML,
            include_str!("../../../../tests/data/chat_templates/phi3.jinja"),
            include_str!("../../../../tests/data/chat_templates/mistral-instruct-v0.1.jinja"),
            // State carried from message to message, the loop's index, the caller's variables.
            "{{ bos_token }}{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}\
             {{ loop.index0 }}{{ ns.n }}{% if loop.first %}F{% endif %}{{ m.content.strip() | tojson }}{% endfor %}\
             {% if add_generation_prompt %}{{ eos_token }}{% endif %}",
        ] {
            assert!(local(source), "{source}");
        }
        for source in [
            "{% if messages[0].role == 'system' %}S{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
            "{% for m in messages %}{{ m.content }}{% if loop.last %}L{% endif %}{% endfor %}",
            "{% for m in messages %}{{ loop.length }}{% endfor %}",
            "{% for m in messages %}{{ loop.nextitem }}{% endfor %}",
            "{% for m in messages %}{{ loop.cycle('a', 'b') }}{% endfor %}",
            "{% for m in messages %}{{ loop }}{% endfor %}",
            "{% for m in messages %}{{ m.content }}{% if add_generation_prompt %}G{% endif %}{% endfor %}",
            "{% for m in messages %}{{ messages | length }}{% endfor %}",
            "{% for m in messages %}{% if m.role == 'x' %}{% break %}{% endif %}{% endfor %}",
            "{% for m in messages if m.role != 'system' %}{{ m.content }}{% endfor %}",
            "{% for m in messages %}{{ m.content }}{% else %}none{% endfor %}",
            "{% for m in messages %}{{ strftime_now('%S') }}{% endfor %}",
            "{% macro f(m) %}{{ m.content }}{% endmacro %}{% for m in messages %}{{ f(m) }}{% endfor %}",
            "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = 1 %}{% endfor %}{% if add_generation_prompt %}{{ ns.n }}{% endif %}",
            "{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}{{ m }}{% endif %}",
            "{% for m in messages %}a{% endfor %}{% for m in messages %}b{% endfor %}",
            "{% set messages = [] %}{% for m in messages %}a{% endfor %}",
            "{{ add_generation_prompt }}{% for m in messages %}a{% endfor %}",
            // The published ones that read messages[0], messages[1:], loop.last (prefix renders).
            include_str!("../../../../tests/data/chat_templates/llama3.1.jinja"),
            include_str!("../../../../tests/data/chat_templates/qwen2.5.jinja"),
            include_str!("../../../../tests/data/chat_templates/gemma.jinja"),
        ] {
            assert!(!local(source), "{source}");
        }
    }

    fn message(role: &str, content: &str) -> Value {
        dict_value([(Value::from("role"), Value::from(role)), (Value::from("content"), Value::from(content))])
    }

    #[test]
    fn prompts_from_one_render_equal_the_prefix_renders() {
        let specials = Specials::new(["<|im_start|>", "<|im_end|>", "<|end|>", "<|assistant|>", "<|user|>", "<s>", "</s>"]
            .iter().enumerate().map(|(k, t)| (t.to_string(), k as u32))).unwrap();
        let eot = [1, 2, 6];
        let mask = Mask::Yes { end_of_turn: &eot, names: "<|im_end|>, <|end|>, </s>" };
        let conversations: Vec<Vec<(&str, &str)>> = vec![
            vec![("user", "hi"), ("assistant", "yo")],
            vec![("system", "be brief"), ("user", "hi"), ("assistant", "yo"), ("user", "and?"), ("assistant", "\nmore <|im_end|> é")],
            vec![("assistant", "first")],
            vec![("user", "only a question")],
            vec![("user", "a"), ("assistant", ""), ("user", "b"), ("assistant", "c")],
        ];
        let sources = [
            CHATML,
            include_str!("../../../../tests/data/chat_templates/phi3.jinja"),
            include_str!("../../../../tests/data/chat_templates/mistral-instruct-v0.1.jinja"),
            // A prompt the turns do not start with: NotPrefix, found the same way.
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}\
             {% if add_generation_prompt %}<|im_start|>assistant\n<think>{% endif %}",
            // No end of turn after an assistant message: NoEnd.
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
            // Raising after the loop with the prompt: the prefix renders' error.
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}\
             {% if add_generation_prompt %}{{ raise_exception('no prompts here') }}{% endif %}",
            // A container printed only with the prompt: handed to jinja2 either way.
            "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}{% if add_generation_prompt %}{{ tools }}{% endif %}",
        ];
        // Each outcome the prefix renders give is met: parts with trained text, and each error.
        let mut seen = std::collections::BTreeSet::new();
        for source in sources {
            let fast = JinjaTemplate::new(source).unwrap();
            assert!(fast.message_local, "{source}");
            let mut slow = JinjaTemplate::new(source).unwrap();
            slow.message_local = false;
            for turns in &conversations {
                let conversation = Conversation {
                    variables: Arc::from([
                        (Value::from("bos_token"), Value::from("<s>")),
                        (Value::from("eos_token"), Value::from("</s>")),
                        (Value::from("tools"), list_value(vec![Value::from(1)])),
                    ]),
                    messages: turns.iter().map(|(r, c)| message(r, c)).collect(),
                };
                for add_generation_prompt in [false, true] {
                    let want = slow.render_parts(&specials, &conversation, add_generation_prompt, mask);
                    let got = fast.render_parts(&specials, &conversation, add_generation_prompt, mask);
                    assert_eq!(got, want, "{source}\n{turns:?}");
                    seen.insert(match want {
                        Ok(parts) if parts.iter().any(|p| matches!(p, Part::Text { train: TextTrain::Spans(_), .. })) => "spans",
                        Ok(_) => "parts",
                        Err(RenderError::Frame(FrameError::NotPrefix(_))) => "not a prefix",
                        Err(RenderError::Frame(FrameError::NoEnd(..))) => "no end",
                        Err(RenderError::Template(TemplateError::Raised(_))) => "raised",
                        Err(RenderError::Template(TemplateError::Unsupported(_))) => "unsupported",
                        Err(_) => "other",
                    });
                }
            }
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["no end", "not a prefix", "parts", "raised", "spans", "unsupported"]);
    }

    #[test]
    fn raise_exception_and_errors_are_typed() {
        assert_eq!(render("{{ raise_exception('no system role') }}", "{}").unwrap_err(), TemplateError::Raised("no system role".into()));
        let e = render("line 1\n{% if x %}{{ raise_exception('in a block') }}{% endif %}", r#"{"x": 1}"#).unwrap_err();
        assert_eq!(e, TemplateError::Raised("in a block".into()));
        assert!(matches!(JinjaTemplate::new("\n{% for %}"), Err(TemplateError::Syntax { line: Some(2), .. })));
        assert!(matches!(render("\n\n{{ x.y.z }}", "{}"), Err(TemplateError::Render { line: Some(3), .. })));
        let deep = render("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "{}").unwrap_err();
        assert!(matches!(&deep, TemplateError::Render { message, .. } if message == "recursion too deep"), "{deep:?}");
        assert!(matches!(render("{% set ns = namespace(_x=1) %}", "{}"), Err(TemplateError::Render { .. })));
        assert!(matches!(render("{{ x }}", "[1]"), Err(TemplateError::Context(_))));
    }

    #[test]
    fn whitespace_and_line_breaks_are_pythons() {
        let ctx = r#"{"s": "\u001c\u001f\u0085\u3000 a\u200b b\u000b\u001d", "t": "a\rb\r\nc\u001ed\n"}"#;
        assert_eq!(render("{{ s | trim }}|{{ s.strip() }}|{{ s.split() | join(',') }}|{{ ' \u{1f}'.isspace() }}", ctx).unwrap(),
                   "a\u{200b} b|a\u{200b} b|a\u{200b},b|True");
        assert_eq!(render("{{ s.lstrip() | length }} {{ s.rstrip() | length }} {{ 'xaxy'.strip('xy') }} {{ 3 | trim }}", ctx).unwrap(), "6 9 a 3");
        assert_eq!(render("{{ t.splitlines() | join('|') }}/{{ t.splitlines(true) | length }}", ctx).unwrap(), "a|b|c|d/4");
    }

    #[test]
    fn python_methods_and_globals() {
        let ctx = r#"{"m": {"role": "user", "content": "  hi  "}}"#;
        assert_eq!(render("{{ m.content.strip() }}|{{ m.role.startswith('us') }}|{% for k, v in m.items() %}{{ k }};{% endfor %}", ctx).unwrap(),
                   "hi|True|role;content;");
        assert_eq!(render("{% set ns = namespace(n=0) %}{% for i in [1, 2] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "{}").unwrap(), "3");
        let year = render("{{ strftime_now('%Y') }}", "{}").unwrap();
        assert!(year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit()), "{year}");
        assert_eq!(render("{{ strftime_now('%%|%z%Z|') }}", "{}").unwrap(), "%||");
    }
}
