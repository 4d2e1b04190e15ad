"""A long differential fuzzing run of bytepair against tiktoken (the bounded version is
tests/parity/test_fuzz_pretokenize.py).

Generated strings (tests/fuzztext.py: every character class the split patterns tell apart,
whitespace/newline mixes, contractions, random code points; and long texts of mostly plain
characters, which take the scanners' 64-byte block path; and texts of CJK runs) are encoded by both libraries over
the same ranks, for cl100k_base, o200k_base, the Llama 3 pattern (and the real Llama 3
vocabulary when llama-models is installed), the GPT-2/r50k pattern, nanochat's pattern and the
GPT-4 pattern as minbpe/rustbpe write it. Any mismatch is printed
and makes the exit status 1.

    python benchmarks/fuzz_long.py --seconds 600
    python benchmarks/fuzz_long.py --cases 1000000 --seed 5
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import tiktoken  # noqa: E402
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

import bytepair  # noqa: E402
from bytepair.registry import llama, openai  # noqa: E402
from bytepair.train import NANOCHAT_PATTERN, RUSTBPE_GPT4_PATTERN  # noqa: E402
from fuzztext import cjk_text, plain_text, random_text  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=300, help="stop after this long")
    ap.add_argument("--cases", type=int, default=None, help="stop after this many strings per pattern")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vocab-dir", type=Path, default=REPO.parent / "shared" / "vocab")
    a = ap.parse_args()

    def ranks(name):
        p = a.vocab_dir / f"{name}.tiktoken"
        return load_tiktoken_bpe(str(p)) if p.is_file() else bytepair.get_encoding(name)._core_bpe.mergeable_ranks()

    cl, o2 = ranks("cl100k_base"), ranks("o200k_base")
    sp = {"<|endoftext|>": 300_000}
    cases = {
        "cl100k_base": (cl, openai.CL100K_PATTERN, sp),
        "o200k_base": (o2, openai.O200K_PATTERN, sp),
        "llama3 pattern / cl100k ranks": (cl, llama.LLAMA3_PATTERN, sp),
        "r50k pattern / cl100k ranks": (cl, openai.R50K_PATTERN, sp),
        "nanochat pattern / cl100k ranks": (cl, NANOCHAT_PATTERN, sp),
        "rustbpe GPT-4 pattern / cl100k ranks": (cl, RUSTBPE_GPT4_PATTERN, sp),
    }
    try:
        path = llama.find_llama3_vocab()
        cases["llama3"] = (load_tiktoken_bpe(str(path)), llama.LLAMA3_PATTERN, llama.llama3_special_tokens())
    except bytepair.errors.VocabularyNotFoundError:
        print("llama-models not installed: the real Llama 3 vocabulary is left out")
    pairs = {}
    for name, (r, pat, specials) in cases.items():
        ref = tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=r, special_tokens=specials)
        ours = bytepair.Encoding(name, pat_str=pat, mergeable_ranks=r, special_tokens=specials)
        pairs[name] = (ref, ours, ours._core_bpe.splitter)

    rnd = random.Random(a.seed)
    count, chars, mismatches = 0, 0, 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < a.seconds and (a.cases is None or count < a.cases):
        # Mostly short strings (boundaries), sometimes a long document, long texts of mostly
        # plain characters (the pre-tokenizers' block path), and texts of CJK runs.
        r = rnd.random()
        if r < 0.6:
            text = random_text(rnd)
        elif r < 0.62:
            text = "".join(random_text(rnd) for _ in range(200))
        elif r < 0.85:
            text = plain_text(rnd, rnd.randrange(64, 1500))
        else:
            text = cjk_text(rnd, rnd.randrange(20, 1500))
        for name, (ref, ours, _) in pairs.items():
            want, got = ref.encode_ordinary(text), ours.encode_ordinary(text)
            if want != got:
                mismatches += 1
                print(f"MISMATCH {name}: {text!r}\n  tiktoken {want}\n  bytepair {got}", flush=True)
        count += 1
        chars += len(text)
    dt = time.monotonic() - t0
    print(f"seed {a.seed}: {count} strings ({chars} characters) x {len(pairs)} encodings "
          f"[{', '.join(f'{n} ({s})' for n, (_, _, s) in pairs.items())}] in {dt:.0f} s: {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
