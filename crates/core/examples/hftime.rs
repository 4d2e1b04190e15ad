use std::time::Instant;
fn main() {
    let data = std::fs::read("/tmp/fmt/cl100k.json").unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        let v: serde_json::Value = serde_json::from_slice(&data).unwrap();
        let t1 = t.elapsed();
        drop(v);
        let t = Instant::now();
        let m = bytepair_core::formats::hf::read(&data).unwrap();
        let t2 = t.elapsed();
        let t = Instant::now();
        let specials: Vec<(String, u32)> = m.added.iter().map(|t| (t.content.clone(), t.id)).collect();
        let inner = bytepair_core::merged::MergeTokenizer::new(&m.tokens, &m.merges, m.char_level, m.ignore_merges, m.pattern.as_deref(), m.pattern.is_some(), specials).unwrap();
        let t3 = t.elapsed();
        let t = Instant::now();
        let p = bytepair_core::pretokenize::Pretokenizer::new(m.pattern.as_deref().unwrap()).unwrap();
        let t4 = t.elapsed();
        let t = Instant::now();
        let mm = bytepair_core::encode::merges::Merges::new(&m.merges).unwrap();
        let t5 = t.elapsed();
        drop((inner, p, mm));
        println!("value {t1:?} read {t2:?} new {t3:?} pretok {t4:?} merges {t5:?}");
    }
}
