//! rank BPE vs a plain reference merge, round trip: the body is `bytepair_fuzz::rank_encode` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::rank_encode(data));
