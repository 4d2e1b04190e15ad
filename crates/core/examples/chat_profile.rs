// Scratch (not committed): time render_parts with and without the mask.
use bytepair_core::chat::frame::Specials;
use bytepair_core::chat::jinja::{dict_value, Conversation, JinjaTemplate, Mask, Value};
use std::time::Instant;

const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

fn main() {
    let text = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let chars: Vec<char> = text.chars().collect();
    let mode = std::env::args().nth(2).unwrap();
    let t = JinjaTemplate::new(CHATML).unwrap();
    let specials = Specials::new(vec![("<|im_start|>".to_string(), 100264), ("<|im_end|>".to_string(), 100265), ("<|endoftext|>".to_string(), 100257)]).unwrap();
    let mut seed = 1u64;
    let mut rnd = |n: usize| { seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((seed >> 33) as usize) % n };
    let mut convs = Vec::new();
    for _ in 0..2000 {
        let mut msgs = Vec::new();
        let turns = 1 + rnd(4);
        if rnd(2) == 0 { let s = rnd(chars.len() - 2000); let l = [0, 60, 300, 1500][rnd(4)]; msgs.push(dict_value([(Value::from("role"), Value::from("system")), (Value::from("content"), Value::from(chars[s..s + l].iter().collect::<String>()))])); }
        for _ in 0..turns {
            for role in ["user", "assistant"] {
                let s = rnd(chars.len() - 2000); let l = [0, 60, 300, 1500][rnd(4)];
                msgs.push(dict_value([(Value::from("role"), Value::from(role)), (Value::from("content"), Value::from(chars[s..s + l].iter().collect::<String>().replace("<|", "< |")))]));
            }
        }
        convs.push(Conversation { variables: std::sync::Arc::from([]), messages: msgs });
    }
    let eot = [100265u32];
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0;
        for c in &convs {
            let mask = if mode == "mask" { Mask::Yes { end_of_turn: &eot, names: "<|im_end|>" } } else { Mask::No };
            n += t.render_parts(&specials, c, false, mask).unwrap().len();
        }
        println!("{mode}: {:.2} us/conv ({n})", start.elapsed().as_secs_f64() * 1e6 / convs.len() as f64);
    }
}
