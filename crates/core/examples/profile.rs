//! Ad-hoc timing of the encoder's stages on a file (not a benchmark of record; see benchmarks/).
//! Usage: cargo run --release --example profile -- <table.bpe2> <o200k|cl100k> <text file>...
use bytepair_core::formats::bpe2;
use bytepair_core::pretokenize::Pretokenizer;
use bytepair_core::Encoder;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).unwrap();
    let pattern = match args[2].as_str() {
        "o200k" => bytepair_core::pretokenize::o200k::O200K_PATTERN,
        _ => bytepair_core::pretokenize::cl100k::CL100K_PATTERN,
    };
    if std::env::var("ONLY_LOAD").is_ok() {
        for _ in 0..50 {
            let t0 = Instant::now();
            let b = bpe2::read(&data).unwrap();
            let t1 = t0.elapsed();
            let v = b.into_vocab(&[]).unwrap();
            println!("read {:?} vocab {:?}", t1, t0.elapsed() - t1);
            drop(v);
        }
        return;
    }
    let t0 = Instant::now();
    let vocab = bpe2::read(&data).unwrap().into_vocab(&[]).unwrap();
    println!("load {:?}", t0.elapsed());
    let enc = Encoder::new(vocab, pattern, vec![]).unwrap();
    let pre = Pretokenizer::new(pattern).unwrap();
    for path in &args[3..] {
        let text = std::fs::read_to_string(path).unwrap();
        let mb = text.len() as f64 / 1e6;
        if std::env::var("ONLY_SPLIT").is_ok() {
            for _ in 0..10 { let mut n = 0usize; pre.for_each_piece(&text, |p| n += p.len()).unwrap(); assert!(n > 0); }
            continue;
        }
        if std::env::var("ONLY_ENCODE").is_ok() {
            for _ in 0..3 { assert!(!enc.encode_ordinary(&text).unwrap().is_empty()); }
            continue;
        }
        let best = |f: &dyn Fn()| (0..10).map(|_| { let t = Instant::now(); f(); t.elapsed().as_secs_f64() }).fold(f64::MAX, f64::min);
        let tp = best(&|| { let mut n = 0usize; pre.for_each_piece(&text, |p| n += p.len()).unwrap(); assert!(n > 0); });
        let tl = best(&|| { let mut n = 0u64; pre.for_each_piece(&text, |p| n += enc.vocab().rank(p.as_bytes()).unwrap_or(1) as u64).unwrap(); assert!(n > 0); });
        let te = best(&|| { let v = enc.encode_ordinary(&text).unwrap(); assert!(!v.is_empty()); });
        let mut hit = 0; let mut miss = 0; let mut missb = 0;
        pre.for_each_piece(&text, |p| if enc.vocab().rank(p.as_bytes()).is_some() || p.len() == 1 { hit += 1 } else { miss += 1; missb += p.len() }).unwrap();
        println!("{path}: split {:.0} MB/s, split+lookup {:.0} MB/s, encode {:.1} MB/s; pieces hit {hit} miss {miss} (avg miss len {:.1})", mb / tp, mb / tl, mb / te, missb as f64 / miss as f64);
    }
}
