//! the trainer on small inputs: the body is `bytepair_fuzz::train_small` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::train_small(data));
