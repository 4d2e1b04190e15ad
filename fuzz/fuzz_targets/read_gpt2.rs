//! GPT-2 encoder.json + vocab.bpe: the body is `bytepair_fuzz::read_gpt2` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::read_gpt2(data));
