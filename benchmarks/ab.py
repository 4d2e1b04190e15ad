#!/usr/bin/env python3
"""A/B: the same measurements on two builds of bytepair, interleaved, as ratios.

Each build is a `python/` source folder holding its compiled `_core` (an editable install's
folder, or a worktree of another commit built with `maturin develop`/`cargo build`). Every
round runs one fresh process per build, in alternating order (A B, then B A, ...), so drift
on a shared machine falls on both alike. A process measures, best of `--repeat`:

- rank BPE: `encode_ordinary` and `encode` (specials as text) of each corpus, whole text, on
  cl100k_base and o200k_base, each call on a cold tokenizer (`clear_cache` first);
- score BPE: `encode` of each corpus with a SentencePiece model mistral-common ships;
- merge-list BPE: `encode` of each corpus with cl100k_base written as tokenizer.json;
  (these two warm: the best of `--repeat` calls on one tokenizer, since builds before the
  one-pipeline change could not clear their caches, and a cold B against a warm A measures
  the cache, not the build);
- load: `get_encoding` in a fresh process (the registry's cache cleared), and the two files.

    python benchmarks/ab.py --a ../old/python --b python --corpus-dir corpus --rounds 5

Prints, per measurement, B's throughput over A's (> 1: B is faster) as the median over rounds,
with the lowest and highest round. Every round first checks that both builds give the same ids
on each corpus (the ids' SHA-256), and stops if they do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

# Runs in the child process, against one build (PYTHONPATH); prints one JSON object.
CHILD = r"""
import hashlib, json, sys, tempfile, time, importlib.util
from pathlib import Path
import bytepair
from bytepair import registry

corpus_dir, repeat, corpora = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
texts = {c: (corpus_dir / f"{c}.txt").read_text(encoding="utf-8") for c in corpora}
out, digests = {}, {}

def best(f, before=None):
    t = []
    for _ in range(repeat):
        if before: before()
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    return min(t)

def record(key, enc, call, text, cold):
    ids = call(text)
    digests[key] = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
    forget = enc.clear_cache if cold else None
    out[key] = len(text.encode()) / best(lambda: call(text), forget) / 1e6

for name in ("cl100k_base", "o200k_base"):
    enc = bytepair.get_encoding(name)
    for c, t in texts.items():
        record(f"rank {name} encode_ordinary {c}", enc, enc.encode_ordinary, t, True)
        record(f"rank {name} encode {c}", enc, lambda s: enc.encode(s, disallowed_special=()), t, True)

spec = importlib.util.find_spec("mistral_common")
sp = Path(next(iter(spec.submodule_search_locations))) / "data" / "mistral_instruct_tokenizer_240323.model.v3"
score = bytepair.load(sp)
for c, t in texts.items():
    record(f"score sentencepiece-v3 encode {c}", score, score.encode, t, False)

with tempfile.TemporaryDirectory() as d:
    path = Path(d) / "cl100k.json"
    bytepair.get_encoding("cl100k_base").save(path)
    merge = bytepair.load(path)
    for c, t in texts.items():
        record(f"merge tokenizer.json-cl100k encode {c}", merge, merge.encode, t, False)
    out["load tokenizer.json-cl100k"] = 1 / best(lambda: bytepair.load(path))
out["load sentencepiece-v3"] = 1 / best(lambda: bytepair.load(sp))

def fresh():
    registry._cache.clear()
out["load get_encoding o200k_base"] = 1 / best(lambda: bytepair.get_encoding("o200k_base"), fresh)
print(json.dumps({"mbps": out, "digests": digests}))
"""


def run(src: Path, corpus_dir: Path, repeat: int, corpora: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(corpus_dir), str(repeat), ",".join(corpora)],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{src}: the child process failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", type=Path, required=True, help="python/ folder of build A (the baseline)")
    ap.add_argument("--b", type=Path, required=True, help="python/ folder of build B")
    ap.add_argument("--corpus-dir", type=Path, default=Path(os.environ.get("BYTEPAIR_CORPUS_DIR", "corpus")))
    ap.add_argument("--corpora", default="en,code,de")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    corpora = args.corpora.split(",")
    ratios: dict[str, list[float]] = {}
    for r in range(args.rounds):
        order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
        got = {side: run(src, args.corpus_dir, args.repeat, corpora) for side, src in order}
        if got["a"]["digests"] != got["b"]["digests"]:
            bad = [k for k in got["a"]["digests"] if got["a"]["digests"][k] != got["b"]["digests"].get(k)]
            sys.exit(f"round {r + 1}: the builds give different ids for {bad}")
        for key, b in got["b"]["mbps"].items():
            ratios.setdefault(key, []).append(b / got["a"]["mbps"][key])
        print(f"round {r + 1}/{args.rounds} done, ids identical", file=sys.stderr)
    print(f"B / A throughput, median of {args.rounds} interleaved rounds (min - max); > 1: B faster\n")
    print("| measurement | B/A median | min - max |\n|---|---|---|")
    for key, rs in ratios.items():
        print(f"| {key} | {statistics.median(rs):.3f} | {min(rs):.3f} - {max(rs):.3f} |")


if __name__ == "__main__":
    main()
