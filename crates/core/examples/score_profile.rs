//! Ad-hoc timing of score BPE in the core alone, one document per call, with the segment cache
//! cold (a new tokenizer) and warm (a second pass). Not a benchmark of record: the side-by-side
//! figures are benchmarks/formats.py's.
//! Usage: [MB=4] [REPS=5] cargo run --release --example score_profile -- <model.model> <text file>
use bytepair_core::formats::sentencepiece;
use bytepair_core::models::score::ScoreTokenizer;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).unwrap();
    let m = sentencepiece::read(&data).unwrap();
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let mb_env: usize = std::env::var("MB").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let mut end = (mb_env * 1_000_000).min(text.len());
    while !text.is_char_boundary(end) { end -= 1; }
    let text = &text[..end];
    let sep = if args[2].ends_with("en.txt") { "\n" } else { "\n\n" };
    let docs: Vec<&str> = text.split(sep).filter(|d| !d.is_empty()).collect();
    let mb = text.len() as f64 / 1e6;
    let (mut cold, mut warm) = (f64::MAX, f64::MAX);
    let reps: usize = std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    for _ in 0..reps {
        let t = ScoreTokenizer::from_sentencepiece(&m).unwrap();
        let t0 = Instant::now();
        let n: usize = docs.iter().map(|d| t.encode(d, false, false).len()).sum();
        cold = cold.min(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        let n2: usize = docs.iter().map(|d| t.encode(d, false, false).len()).sum();
        warm = warm.min(t0.elapsed().as_secs_f64());
        assert_eq!(n, n2);
    }
    println!("{} cold {:.1} MB/s warm {:.1} MB/s", args[2], mb / cold, mb / warm);
}
