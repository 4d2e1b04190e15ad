//! Replays every committed fuzz input through the fuzz targets' bodies, as a plain test:
//! `fuzz/corpus/<target>/*` (the seeds) and `fuzz/regressions/<target>/*` (inputs a fuzzer once
//! failed on, kept after the fix). Runs on stable Rust without libFuzzer:
//! `cargo test --manifest-path fuzz/Cargo.toml --no-default-features` (tests/core/test_fuzz_seeds.py
//! runs it from the pytest suite, so CI replays them).

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).unwrap();
            // A failing input names itself before the assertion's message.
            eprintln!("{target}: {}", path.display());
            body(&data);
            n += 1;
        }
    }
    // A target with no inputs would pass without running its body.
    assert!(n > 0, "{target}: no seed inputs under fuzz/corpus/{target}");
}

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { replay(stringify!($name), bytepair_fuzz::$name); })*
    };
}

targets!(
    read_tiktoken, read_bpe2, read_qtkr, read_leap, read_tokenizer_json, read_sentencepiece, read_gpt2,
    pretokenize_diff, rank_encode, model_roundtrip, train_small, capi, chat_template,
);
