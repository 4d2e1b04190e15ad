//! Runs one stage of the encoder many times over a file, for perf / cachegrind (not a benchmark
//! of record; see benchmarks/). Usage:
//! cargo run --release --example stage -- <table.bpe2> <pattern name: o200k, cl100k, r50k, llama3, ...> <mode> <file> [reps] [max bytes]
//! Modes: split, lookup (split + whole-piece lookup), encode, count; `all` runs the four
//! interleaved and prints the time each stage adds; `stats` prints piece lengths, hits and misses.
//! `stage <table.bpe2> <enc> load [reps]` times reading the table and building its index.
//! Every timed run starts with no kept piece cache unless STAGE_WARM is set.
//! STAGE_GAP_MS=n sleeps n ms before each timed run: the tables are then partly out of the
//! CPU's caches, as when a call follows other work (benchmarks/encode.py interleaves libraries).
//! STAGE_EVICT_MB=n writes n MB before each timed run, emptying the caches as other libraries'
//! work does between our calls in the benchmark (a pause alone leaves most lines in place).
use bytepair_core::formats::bpe2;
use bytepair_core::pretokenize::{patterns, Pretokenizer};
use bytepair_core::{Encoder, SpecialFilter};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).unwrap();
    let pattern = bytepair_core::pretokenize::patterns::named(&args[2]).map_or(patterns::CL100K, |b| b.pattern);
    if args[3] == "load" {
        let (mut read, mut index) = (f64::MAX, f64::MAX);
        for _ in 0..args.get(4).map_or(20, |s| s.parse().unwrap()) {
            let t = Instant::now();
            let file = bpe2::read(&data).unwrap();
            let r = t.elapsed().as_secs_f64();
            let vocab = std::hint::black_box(file.into_vocab(&[]).unwrap());
            read = read.min(r);
            index = index.min(t.elapsed().as_secs_f64() - r);
            drop(vocab);
        }
        println!("{}: read {:.2} ms, vocab and index {:.2} ms (best of each)", args[1], read * 1e3, index * 1e3);
        return;
    }
    let vocab = bpe2::read(&data).unwrap().into_vocab(&[]).unwrap();
    let enc = Encoder::new(vocab, pattern, vec![]).unwrap();
    let pre = Pretokenizer::new(pattern).unwrap();
    let mut text = std::fs::read_to_string(&args[4]).unwrap();
    let reps: usize = args.get(5).map_or(10, |s| s.parse().unwrap());
    // STAGE_WARM=1 lets each run reuse the pieces the thread kept from the one before (a
    // stream of documents); by default every run starts cold, as a single text would.
    let cold = std::env::var_os("STAGE_WARM").is_none();
    let mut gap = Gap::from_env();
    if let Some(max) = args.get(6).map(|s| s.parse::<usize>().unwrap()) {
        let mut m = max.min(text.len());
        while !text.is_char_boundary(m) {
            m -= 1;
        }
        text.truncate(m);
    }
    if args[3] == "all" {
        // Every stage, interleaved, best of `reps` each: a breakdown that shares the noise.
        let modes = ["split", "lookup", "count", "encode"];
        let mut best = [f64::MAX; 4];
        let mut sink = 0u64;
        for _ in 0..reps {
            for (k, m) in modes.iter().enumerate() {
                if cold {
                    enc.vocab().forget_cached();
                }
                gap.pause();
                let t = Instant::now();
                match *m {
                    "split" => pre.for_each_piece(&text, |p| sink += p.len() as u64).unwrap(),
                    "lookup" => pre.for_each_piece(&text, |p| sink += enc.vocab().rank(p.as_bytes()).unwrap_or(1) as u64).unwrap(),
                    "count" => sink += enc.count(&text, &SpecialFilter::None).unwrap() as u64,
                    _ => sink += enc.encode_ordinary(&text).unwrap().len() as u64,
                }
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
        }
        let mb = text.len() as f64 / 1e6;
        let per = |k: usize| best[k] / mb * 1e3;
        println!("{} {}: split {:.2} ms/MB, +lookup {:.2}, count (+merge) {:.2}, encode (+vec) {:.2}  [MB/s {:.0} {:.0} {:.0} {:.0}] ({sink})", args[2], args[4],
            per(0), per(1) - per(0), per(2) - per(1), per(3) - per(2), mb / best[0], mb / best[1], mb / best[2], mb / best[3]);
        return;
    }
    let mut best = f64::MAX;
    let mut sink = 0u64;
    for _ in 0..reps {
        // As the module docs say: cold unless STAGE_WARM (this loop used to keep the cache, so
        // its `encode` and `count` runs after the first were warm).
        if cold {
            enc.vocab().forget_cached();
        }
        gap.pause();
        let t = Instant::now();
        match args[3].as_str() {
            "split" => pre.for_each_piece(&text, |p| sink += p.len() as u64).unwrap(),
            "lookup" => pre.for_each_piece(&text, |p| sink += enc.vocab().rank(p.as_bytes()).unwrap_or(1) as u64).unwrap(),
            "encode" => sink += enc.encode_ordinary(&text).unwrap().len() as u64,
            "stats" => {
                let mut hist = [[0usize; 3]; 33];
                pre.for_each_piece(&text, |p| {
                    let b = p.as_bytes();
                    let l = b.len().min(32);
                    let k = if b.len() == 1 || enc.vocab().rank(b).is_some() { 0 } else { 1 };
                    hist[l][k] += 1;
                    hist[l][2] += b.len();
                })
                .unwrap();
                let mut distinct = std::collections::HashMap::new();
                pre.for_each_piece(&text, |p| {
                    let b = p.as_bytes();
                    if b.len() > 1 && enc.vocab().rank(b).is_none() {
                        *distinct.entry(b).or_insert(0usize) += 1;
                    }
                })
                .unwrap();
                let ntok: usize = distinct.keys().map(|k| enc.encode_single_piece(k).len()).sum();
                let ntok_w: usize = distinct.iter().map(|(k, c)| c * enc.encode_single_piece(k).len()).sum();
                let total: usize = distinct.values().sum();
                let le15 = distinct.iter().filter(|(k, _)| k.len() <= 15).map(|(_, c)| c).sum::<usize>();
                let le4t = distinct.iter().filter(|(k, _)| k.len() <= 15 && enc.encode_single_piece(k).len() <= 4).map(|(_, c)| c).sum::<usize>();
                println!("misses {total}, distinct {} (avg {:.2} tokens each, {:.2} weighted); <=15 bytes: {le15}, <=15 bytes and <=4 tokens {le4t}", distinct.len(), ntok as f64 / distinct.len() as f64, ntok_w as f64 / total as f64);
                for (l, h) in hist.iter().enumerate() {
                    if h[0] + h[1] > 0 {
                        println!("len {l:2}: hit {:8} miss {:8} bytes {:9}", h[0], h[1], h[2]);
                    }
                }
                return;
            }
            "count" => sink += enc.count(&text, &SpecialFilter::None).unwrap() as u64,
            m => panic!("mode {m}"),
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{} {} {}: best {:.1} MB/s ({sink})", args[2], args[3], args[4], text.len() as f64 / 1e6 / best);
}

/// What happens before each timed run: a pause (`STAGE_GAP_MS`) and writes that push the tables
/// out of the caches (`STAGE_EVICT_MB`), neither by default.
struct Gap(Option<std::time::Duration>, Vec<u8>);

impl Gap {
    fn from_env() -> Self {
        let mb: usize = std::env::var("STAGE_EVICT_MB").map_or(0, |s| s.parse().unwrap());
        Gap(std::env::var("STAGE_GAP_MS").ok().map(|s| std::time::Duration::from_millis(s.parse().unwrap())), vec![0; mb << 20])
    }

    fn pause(&mut self) {
        if let Some(d) = self.0 {
            std::thread::sleep(d);
        }
        for (i, line) in self.1.chunks_mut(64).enumerate() {
            line[0] = line[0].wrapping_add(i as u8);
        }
        std::hint::black_box(&self.1);
    }
}
