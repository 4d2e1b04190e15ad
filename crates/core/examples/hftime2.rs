use std::time::Instant;
fn main() {
    let data = std::fs::read("/tmp/fmt/cl100k.json").unwrap();
    let v: serde_json::Value = serde_json::from_slice(&data).unwrap();
    let vocab: Vec<(String, u32)> = v["model"]["vocab"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap() as u32)).collect();
    let merges: Vec<(String, String)> = v["model"]["merges"].as_array().unwrap().iter().map(|m| { let s = m.as_str().unwrap(); let (a, b) = s.split_once(' ').unwrap(); (a.to_string(), b.to_string()) }).collect();
    for _ in 0..3 {
        let t = Instant::now();
        let mut idx: hashbrown::HashMap<&str, u32, foldhash::fast::FixedState> = hashbrown::HashMap::with_capacity_and_hasher(vocab.len(), Default::default());
        for (k, v) in &vocab { idx.insert(k.as_str(), *v); }
        let t0 = t.elapsed();
        let t = Instant::now();
        let mut j = String::new();
        let mut sum = 0u64;
        for (a, b) in &merges {
            j.clear(); j.push_str(a); j.push_str(b);
            sum += (idx[a.as_str()] + idx[b.as_str()] + idx[j.as_str()]) as u64;
        }
        let t1 = t.elapsed();
        let t = Instant::now();
        let mut idx2: std::collections::HashMap<&str, u32> = std::collections::HashMap::with_capacity(vocab.len());
        for (k, v) in &vocab { idx2.insert(k.as_str(), *v); }
        for (a, b) in &merges {
            j.clear(); j.push_str(a); j.push_str(b);
            sum += (idx2[a.as_str()] + idx2[b.as_str()] + idx2[j.as_str()]) as u64;
        }
        let t2 = t.elapsed();
        println!("build {t0:?} lookups {t1:?} std {t2:?} {sum}");
    }
}
