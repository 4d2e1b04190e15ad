#!/usr/bin/env python3
"""Regenerates the golden files in tests/data/golden/: tiny vocabularies of our own, one per
format, and the ids each reference library gives for a few sentences.

    python tests/data/make_golden.py

Vocabularies are trained here on TEXT below (our own sentences, nothing licensed):
- tiny_sp.model      sentencepiece's trainer (BPE, byte fallback, identity normalizer, a
                     user-defined and a control symbol); expected ids from sentencepiece.
- tiny_hf.json       HF tokenizers' byte-level BPE trainer; expected ids from tokenizers.
- tiny_hf_fallback.json  HF character-level BPE with byte fallback (Metaspace); ditto.
- tiny.tiktoken      the same vocabulary as ranks (HF ids, which follow merge order);
                     expected ids from tiktoken with PATTERN.
- tiny.bpe2/.bpz2/.qtkr/.leap and gpt2/{encoder.json,vocab.bpe}: tiny.tiktoken written by
  bytepair in each format; expected ids are tiktoken's (for QTKR and LEAP, per pre-tokenized
  piece, the unit these formats promise to match), and for GPT-2 tiktoken's own
  data_gym loader reads the pair.
- tiny_sp.leap       tiny_sp.model as a llama2.c table; expected ids from sentencepiece
                     (for samples without user-defined pieces or extra spaces, which llama2.c
                     does not treat as SentencePiece does).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "golden"

PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

TEXT = """\
The quick brown fox jumps over the lazy dog. A lazy dog sleeps under the old oak tree.
Foxes and dogs are not always enemies; sometimes they share the shade on a hot afternoon.
Numbers like 12, 345 and 6789 appear in tables, and prices such as 3.50 or 19.99 in shops.
Über die Brücke gehen die Kinder nach Hause, während es regnet. Straßen glänzen im Licht.
def tokenize(text):\n    return [t for t in text.split() if t]\n
for i in range(10):\n    print(i * i)\n
She said: "It's late, we'll go." They've gone; I'm staying. You're right, it isn't far.
Emoji and symbols: ☕ 🙂 → ≠ ∑ — and CJK: 東京 大阪 京都.
"""

SAMPLES = [
    "The quick brown fox.",
    "  leading spaces and trailing  ",
    "Über Brücken: 12345 und 3.14!",
    "def f(x):\n    return x ** 2\n",
    "unseen characters: ж ψ 🙂 ☕ <tool> [INST]",
    "",
    "a",
]


def main() -> None:
    import sentencepiece as spm
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    import tokenizers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    import bytepair

    OUT.mkdir(parents=True, exist_ok=True)
    corpus = [line for line in (TEXT * 3).splitlines() if line]
    expected: dict[str, dict] = {}

    # SentencePiece BPE with byte fallback.
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_prefix=str(OUT / "tiny_sp"), model_type="bpe",
        vocab_size=420, byte_fallback=True, normalization_rule_name="identity",
        character_coverage=0.9995, user_defined_symbols=["<tool>"], control_symbols=["[INST]"],
        split_digits=True, num_threads=1, minloglevel=2)
    (OUT / "tiny_sp.vocab").unlink()
    sp = spm.SentencePieceProcessor(model_file=str(OUT / "tiny_sp.model"))
    expected["tiny_sp.model"] = {"reference": f"sentencepiece {spm.__version__}", "cases": [
        {"text": s, "bos": bos, "eos": eos, "ids": sp.encode(s, add_bos=bos, add_eos=eos)}
        for s in SAMPLES for bos, eos in ((False, False), (True, True))]}

    # HF byte-level BPE.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.save(str(OUT / "tiny_hf.json"))
    expected["tiny_hf.json"] = {"reference": f"tokenizers {tokenizers.__version__}", "cases": [
        {"text": s, "ids": tok.encode(s, add_special_tokens=False).ids} for s in SAMPLES]}

    # HF character-level BPE with byte fallback (Llama-style: Metaspace, <0xHH> tokens).
    fb = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    fb.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    fb.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                    decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    fb_specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    fb.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=700, special_tokens=fb_specials,
                                                       show_progress=False))
    fb.save(str(OUT / "tiny_hf_fallback.json"))
    expected["tiny_hf_fallback.json"] = {"reference": f"tokenizers {tokenizers.__version__}", "cases": [
        {"text": s, "ids": fb.encode(s, add_special_tokens=False).ids} for s in SAMPLES + ["x<s>y"]]}

    # The same vocabulary as ranks: byte tokens and merges in HF id order.
    from bytepair.formats.gpt2 import byte_to_char
    c2b = {c: b for b, c in byte_to_char().items()}
    vocab = json.loads((OUT / "tiny_hf.json").read_text())["model"]["vocab"]
    ranks = {bytes(c2b[c] for c in s): i for s, i in vocab.items() if s != "<|endoftext|>"}
    # Renumber densely from 0 in HF id order (the special token took an id).
    ranks = {t: r for r, (t, _) in enumerate(sorted(ranks.items(), key=lambda kv: kv[1]))}
    specials = {"<|endoftext|>": len(ranks)}
    ref = tiktoken.Encoding("tiny", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=specials)
    bytepair.formats.tiktoken.dump_tiktoken_bpe(ranks, OUT / "tiny.tiktoken")
    enc = bytepair.load(OUT / "tiny.tiktoken", pat_str=PATTERN, special_tokens=specials, name="tiny")
    for fmt in ("bpe2", "bpz2", "qtkr", "leap"):
        enc.save(OUT / f"tiny.{fmt}", format=fmt, lossy=fmt in ("qtkr", "leap"))  # those two: no pattern
    import regex
    whole = [{"text": s, "ids": ref.encode(s, allowed_special="all")} for s in SAMPLES + ["x<|endoftext|>y"]]
    per_piece = [{"text": p, "ids": ref.encode_ordinary(p)} for s in SAMPLES for p in regex.findall(PATTERN, s)]
    ref_name = f"tiktoken {tiktoken.__version__}"
    for name in ("tiny.tiktoken", "tiny.bpe2", "tiny.bpz2"):
        expected[name] = {"reference": ref_name, "pattern": PATTERN, "special_tokens": specials, "cases": whole}
    for name in ("tiny.qtkr", "tiny.leap"):
        expected[name] = {"reference": ref_name + " (per piece)", "cases": per_piece}

    # GPT-2's two files, read back by tiktoken's own loader.
    b2c = byte_to_char()
    spell = lambda t: "".join(b2c[b] for b in t)  # noqa: E731
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    gdir = OUT / "gpt2"
    gdir.mkdir(exist_ok=True)
    lines = ["#version: 0.2"]
    for token, rank in by_rank[256:]:
        cut = next(i for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks
                   and max(ranks[token[:i]], ranks[token[i:]]) < rank)
        lines.append(f"{spell(token[:cut])} {spell(token[cut:])}")
    (gdir / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
    enc_json = {spell(t): r for t, r in ranks.items()}
    (gdir / "encoder.json").write_text(json.dumps(enc_json, ensure_ascii=False), encoding="utf-8")
    gpt2_ranks = data_gym_to_mergeable_bpe_ranks(str(gdir / "vocab.bpe"), str(gdir / "encoder.json"))
    gref = tiktoken.Encoding("gpt2tiny", pat_str=PATTERN, mergeable_ranks=gpt2_ranks,
                             special_tokens={"<|endoftext|>": len(gpt2_ranks)})
    expected["gpt2/vocab.bpe"] = {"reference": ref_name + " (data_gym loader)", "pattern": PATTERN,
                                  "cases": [{"text": s, "ids": gref.encode_ordinary(s)} for s in SAMPLES]}

    # tiny_sp.model as a llama2.c table.
    bytepair.load(OUT / "tiny_sp.model").save(OUT / "tiny_sp.leap", format="leap", lossy=True)
    expected["tiny_sp.leap"] = {"reference": f"sentencepiece {spm.__version__}", "cases": [
        {"text": s, "ids": sp.encode(s)} for s in SAMPLES
        # llama2.c neither matches user-defined pieces first nor applies the model's
        # remove_extra_whitespaces: those samples differ by design.
        if "<tool>" not in s and s == s.strip(" ") and "  " not in s]}

    (OUT / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("written:", ", ".join(sorted(p.name for p in OUT.iterdir())))


if __name__ == "__main__":
    sys.exit(main())
