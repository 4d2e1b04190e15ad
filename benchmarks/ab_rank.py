#!/usr/bin/env python3
"""A/B of the rank-BPE encoder alone: two builds, interleaved, `encode_ordinary` to a list.

benchmarks/ab.py times every model and the loaders; this one times only what the rank engine
changes, on every corpus, and separately:

- first: the first call in a fresh process (lazily built tables included: the walk's, the
  sealed-character table);
- cold: best of `--repeat` calls, `clear_cache` before each (no kept piece cache);
- warm: best of `--repeat` calls on one encoding (the thread's piece cache kept).

Each round runs one fresh process per build, in alternating order; a process times CPU time of
the calling thread (`time.thread_time`, the encoder runs on it with the GIL released), which
other jobs on a shared machine disturb less than wall time. Prints B's throughput over A's
(> 1: B faster), the median of the rounds with their range, and each build's best MB/s. Ids are
compared between the builds on every text each round.

    python benchmarks/ab_rank.py --a ../base/python --b python --corpus-dir corpus --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import hashlib, json, sys, time
from pathlib import Path
import bytepair
corpus_dir, repeat, corpora, names, size = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4].split(","), int(sys.argv[5])
out, digests = {}, {}
clock = time.thread_time
for name in names:
    enc = bytepair.get_encoding(name)
    for c in corpora:
        text = (corpus_dir / f"{c}.txt").read_text(encoding="utf-8")[:size]
        mb = len(text.encode()) / 1e6
        enc.clear_cache()
        s = clock(); ids = enc.encode_ordinary(text); first = clock() - s
        digests[f"{name} {c}"] = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
        cold = []
        for _ in range(repeat):
            enc.clear_cache(); s = clock(); enc.encode_ordinary(text); cold.append(clock() - s)
        warm = []
        for _ in range(repeat):
            s = clock(); enc.encode_ordinary(text); warm.append(clock() - s)
        out[f"{name} {c} first"] = mb / first
        out[f"{name} {c} cold"] = mb / min(cold)
        out[f"{name} {c} warm"] = mb / min(warm)
print(json.dumps({"mbps": out, "digests": digests}))
"""


def run(src: Path, args) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src.resolve()))
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(args.corpus_dir), str(args.repeat), args.corpora, args.encodings, str(args.size)],
        env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", type=Path, required=True)
    ap.add_argument("--b", type=Path, required=True)
    ap.add_argument("--corpus-dir", type=Path, default=Path(os.environ.get("BYTEPAIR_CORPUS_DIR", "corpus")))
    ap.add_argument("--corpora", default="en,code,de,zh-fortunes,uk,tr,vi")
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--size", type=int, default=1_500_000, help="characters of each corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ratios: dict[str, list[float]] = {}
    best: dict[str, dict[str, float]] = {"a": {}, "b": {}}
    for r in range(args.rounds):
        order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
        got = {side: run(src, args) for side, src in order}
        if got["a"]["digests"] != got["b"]["digests"]:
            sys.exit(f"round {r + 1}: the builds give different ids")
        for key, b in got["b"]["mbps"].items():
            ratios.setdefault(key, []).append(b / got["a"]["mbps"][key])
            for side in "ab":
                best[side][key] = max(best[side].get(key, 0.0), got[side]["mbps"][key])
        print(f"round {r + 1}/{args.rounds} done, ids identical", file=sys.stderr)
    print(f"B / A, CPU time, median of {args.rounds} interleaved rounds (min - max); > 1: B faster\n")
    print("| encoding corpus call | B/A median | min - max | A MB/s (best) | B MB/s (best) |\n|---|---|---|---|---|")
    for key, rs in ratios.items():
        print(f"| {key} | {statistics.median(rs):.3f} | {min(rs):.3f} - {max(rs):.3f} | {best['a'][key]:.0f} | {best['b'][key]:.0f} |")


if __name__ == "__main__":
    main()
