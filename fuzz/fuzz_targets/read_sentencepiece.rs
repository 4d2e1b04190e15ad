//! SentencePiece .model (protobuf): the body is `bytepair_fuzz::read_sentencepiece` (src/lib.rs), replayed by tests/seeds.rs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bytepair_fuzz::read_sentencepiece(data));
