//! BPE2 / BPZ2: the body is `bytepair_fuzz::read_bpe2` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::read_bpe2(data));
