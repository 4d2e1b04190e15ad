//! Jinja chat templates through the C API, as an inference engine drives them: compile a
//! template (any bytes, or one of the five real templates the tests carry) and render it with a
//! context (any bytes as JSON, or messages made from the input). Properties: no call returns
//! BP_ERR_PANIC; a failure is BP_ERR_TEMPLATE or BP_ERR_UTF8 and leaves `*out` NULL; a
//! buffer-too-small answer names the length that then succeeds; a render is valid UTF-8 and the
//! same every time.

use std::ffi::c_char;

use bytepair::bp_status::*;
use bytepair::*;

use crate::split2;

const OK: i32 = BP_OK as i32;

/// The templates of tests/data/chat_templates (published models' own): the fuzzer's contexts
/// reach their loops, filters and `raise_exception` branches, which random sources rarely do.
const TEMPLATES: [&[u8]; 5] = [
    include_bytes!("../../tests/data/chat_templates/llama3.1.jinja"),
    include_bytes!("../../tests/data/chat_templates/qwen2.5.jinja"),
    include_bytes!("../../tests/data/chat_templates/mistral-instruct-v0.1.jinja"),
    include_bytes!("../../tests/data/chat_templates/gemma.jinja"),
    include_bytes!("../../tests/data/chat_templates/phi3.jinja"),
];

const ROLES: [&str; 5] = ["system", "user", "assistant", "tool", "developer"];

/// [`crate::capi_body::check`] (no panic reached the boundary), and only the statuses these
/// two functions document.
fn check(code: i32, what: &str) -> i32 {
    crate::capi_body::check(code, what);
    assert!(code == OK || code == BP_ERR_TEMPLATE as i32 || code == BP_ERR_UTF8 as i32
                || code == BP_ERR_BUFFER_TOO_SMALL as i32, "{what}: unexpected status {code}");
    code
}

/// A JSON string literal for `bytes` (lossy UTF-8, every control character escaped).
fn json_string(bytes: &[u8], out: &mut String) {
    out.push('"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A context object from the input: a message per 0xFE-separated part, its role chosen by the
/// part's first byte, and the generation prompt, `bos_token` and `tools` set from `flags`.
fn messages_context(flags: u8, data: &[u8]) -> String {
    let mut out = String::from("{\"messages\": [");
    for (i, part) in data.split(|&b| b == 0xFE).take(32).enumerate() {
        let (role, content) = part.split_first().map_or((0, part), |(&r, rest)| (r as usize, rest));
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format!("{{\"role\": \"{}\", \"content\": ", ROLES[role % ROLES.len()]));
        json_string(content, &mut out);
        out.push('}');
    }
    out.push_str(&format!("], \"add_generation_prompt\": {}, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"",
                          flags & 0x10 != 0));
    if flags & 0x20 != 0 {
        out.push_str(", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}]");
    }
    out.push('}');
    out
}

/// `bp_chat_template_render` with no buffer, then with the length it names.
fn render(t: *const bp_chat_template, context: &[u8]) -> Option<Vec<u8>> {
    let mut need = usize::MAX;
    let code = check(bp_chat_template_render(t, context.as_ptr().cast::<c_char>(), context.len(),
                                             std::ptr::null_mut(), 0, &mut need), "bp_chat_template_render");
    if code != OK && code != BP_ERR_BUFFER_TOO_SMALL as i32 {
        return None;
    }
    let mut out = vec![0u8; need];
    let mut len = usize::MAX;
    let code = check(bp_chat_template_render(t, context.as_ptr().cast::<c_char>(), context.len(),
                                             out.as_mut_ptr().cast::<c_char>(), out.len(), &mut len),
                     "bp_chat_template_render");
    assert_eq!(code, OK, "the length a too-small buffer named ({need}) did not render");
    assert_eq!(len, need, "the second render's length differs from the first's");
    assert!(std::str::from_utf8(&out).is_ok(), "a render is not UTF-8");
    Some(out)
}

/// Input: a mode byte, then (mode 0) a template source, 0xFF, a context; or (modes 1-5) a
/// context for real template `mode - 1`. The context is JSON as given when bit 0x40 of the
/// mode byte is set, else messages made by [`messages_context`].
pub fn chat_template(data: &[u8]) {
    let Some((&head, rest)) = data.split_first() else { return };
    let (source, context) = match (head & 0x0F) as usize % (TEMPLATES.len() + 1) {
        0 => split2(rest),
        k => (TEMPLATES[k - 1], rest),
    };
    let context = if head & 0x40 != 0 { context.to_vec() } else { messages_context(head, context).into_bytes() };
    let mut t = std::ptr::null_mut();
    let code = check(bp_chat_template_new(source.as_ptr().cast::<c_char>(), source.len(), &mut t),
                     "bp_chat_template_new");
    if code != OK {
        assert!(t.is_null(), "a failed compile leaves *out NULL");
        assert!(std::str::from_utf8(source).is_err() || code == BP_ERR_TEMPLATE as i32);
        return;
    }
    let first = render(t, &context);
    // `strftime_now` reads the clock (`%f` is microseconds, as in Python), so only a template
    // that never names it must render the same twice (a fuzzer's input with `%f` in a format,
    // kept in fuzz/regressions/chat_template).
    let clock = b"strftime_now";
    if !source.windows(clock.len()).any(|w| w == clock) {
        assert_eq!(first, render(t, &context), "two renders of one context differ");
    }
    bp_chat_template_free(t);
}
