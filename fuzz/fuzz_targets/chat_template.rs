//! Jinja chat templates through the C API: the body is `bytepair_fuzz::chat_template`
//! (src/chat_body.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::chat_template(data));
