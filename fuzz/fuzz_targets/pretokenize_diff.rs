//! hand-written scanners vs the general regex: the body is `bytepair_fuzz::pretokenize_diff` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::pretokenize_diff(data));
