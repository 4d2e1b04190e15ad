//! score and merge-list models: encode/decode: the body is `bytepair_fuzz::model_roundtrip` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::model_roundtrip(data));
