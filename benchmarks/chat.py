#!/usr/bin/env python3
"""Chat rendering throughput: bytepair against transformers' apply_chat_template, same data,
same template, identical ids (and masks) checked first.

Conversations are cut from the corpus mix (a system prompt half the time, 1-4 user/assistant
turns of 0-1500 characters). The tokenizer is cl100k with tiktoken's ChatML ids, written by
bytepair as tokenizer.json and loaded by transformers' PreTrainedTokenizerFast (offline). Timed
in --repeat rounds of every row, best round per row, with encode.py's `timed` (the collector
paused during the call and its result freed after the clock stops, for every row):

- transformers: apply_chat_template(batch, tokenize=True) on the whole list (its fastest path:
  one render per conversation, then one batched encode in Rust), with the ChatML Jinja template;
  and with return_assistant_tokens_mask on the {% generation %} version;
- bytepair, Jinja: render_many with the same template (ids and mask), 1 thread and all cores;
- bytepair, built-in chatml: render_many (ids and mask), 1 thread and all cores.

render_many renders in the calling thread and encodes in the core; with more than one thread
the encoding runs beside the rendering (see python/bytepair/chat/batch.py).

    python benchmarks/chat.py --corpus-dir corpus --n 4000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
          "+ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
CHATML_MARKED = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + '<|im_end|>' }}"
    "{% endgeneration %}{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}{{ '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def conversations(docs: list[str], n: int, seed: int = 0) -> list[list[dict]]:
    rng = random.Random(seed)

    def text():
        doc = rng.choice(docs)
        start = rng.randrange(len(doc))
        return doc[start: start + rng.choice([0, 60, 300, 1500])].replace("<|", "< |")

    out = []
    for _ in range(n):
        msgs = [{"role": "system", "content": text()}] if rng.random() < 0.5 else []
        for _ in range(rng.randint(1, 4)):
            msgs += [{"role": "user", "content": text()}, {"role": "assistant", "content": text()}]
        out.append(msgs)
    return out


def dataset(corpus_dir: str, n: int):
    """The benchmark's ``n`` conversations and encoding (cl100k with tiktoken's ChatML ids)."""
    import bytepair
    from bytepair.chat.chatml import with_chatml_tokens

    with open(Path(corpus_dir) / "mix.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f]
    return conversations(docs, n), with_chatml_tokens(bytepair.get_encoding("cl100k_base"))


def arguments(description: str) -> argparse.ArgumentParser:
    """The options the chat benchmarks share: where the corpus is, how many conversations."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-dir", default="corpus")
    ap.add_argument("--n", type=int, default=4000)
    return ap


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from bytepair.chat import ChatTemplate, render_many
    from transformers import PreTrainedTokenizerFast

    # encode.py's clock, for every row alike: the collector paused and the result freed after
    # the clock stops (freeing lists of ints is the caller's work whoever made them).
    from encode import timed

    convs, enc = dataset(args.corpus_dir, args.n)
    with tempfile.TemporaryDirectory() as tmp:
        enc.save(Path(tmp) / "tokenizer.json", format="tokenizer.json")
        tok = PreTrainedTokenizerFast(tokenizer_file=str(Path(tmp) / "tokenizer.json"))

    template = ChatTemplate(CHATML)
    # Identical ids (and masks) first.
    hf_ids = tok.apply_chat_template(convs, chat_template=CHATML, tokenize=True, return_dict=False)
    hf_masked = tok.apply_chat_template(convs, chat_template=CHATML_MARKED, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ours_jinja = render_many(enc, convs, template=template)
    ours_builtin = render_many(enc, convs, template="chatml")
    serial = render_many(enc, convs, template="chatml", num_workers=1)
    assert [ids for ids, _ in ours_jinja] == hf_ids == [ids for ids, _ in ours_builtin]
    assert serial == ours_builtin == ours_jinja
    assert [m for _, m in ours_builtin] == hf_masked["assistant_masks"]
    cores = os.cpu_count() or 1
    rows = [
        ("transformers apply_chat_template (batch, ids)",
         lambda: tok.apply_chat_template(convs, chat_template=CHATML, tokenize=True, return_dict=False)),
        ("transformers apply_chat_template (batch, ids + assistant mask)",
         lambda: tok.apply_chat_template(convs, chat_template=CHATML_MARKED, tokenize=True, return_dict=True,
                                         return_assistant_tokens_mask=True)),
        ("bytepair Jinja template, 1 thread (ids + mask)", lambda: render_many(enc, convs, template=template, num_workers=1)),
        (f"bytepair Jinja template, {cores} threads", lambda: render_many(enc, convs, template=template)),
        ("bytepair built-in chatml, 1 thread (ids + mask)", lambda: render_many(enc, convs, template="chatml", num_workers=1)),
        (f"bytepair built-in chatml, {cores} threads", lambda: render_many(enc, convs, template="chatml")),
    ]
    # Rounds: every row once per round, best of the rounds. On a shared machine a burst of
    # load then hits one round of every row, not every repeat of one row.
    times = [min(ts) for ts in zip(*([timed(f) for _, f in rows] for _ in range(args.repeat)))]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.n} conversations, {sum(len(i) for i in hf_ids):,} tokens, {cores} cores, load average "
          f"{load:.1f} at the end; ids identical, masks identical\n")
    print("| renderer | conversations/s | vs transformers (ids) |\n|---|---:|---:|")
    for (name, _), t in zip(rows, times):
        print(f"| {name} | {args.n / t:,.0f} | {times[0] / t:.2f}x |")


if __name__ == "__main__":
    main()
