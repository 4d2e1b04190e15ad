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
- load: `get_encoding` in a fresh process (the registry's cache cleared), and the two files;
- numpy (`--parts numpy`): `encode_to_numpy` of each corpus, whole text, cold and warm, beside
  `encode_ordinary` to a list;
- batch (`--parts batch`): `encode_ordinary_batch` of each corpus's first MB in ~4 KB
  documents, cold and warm, on 1 thread (the process pinned to one core) and on 2 (pinned to
  two), and the ratio of the two as its own measurement ("2t / 1t": B/A > 1, B scales better).

    python benchmarks/ab.py --a ../old/python --b python --corpus-dir corpus --rounds 5
    python benchmarks/ab.py --a ../old/python --b python --parts numpy,batch --corpora en,zh-fortunes
    python benchmarks/ab.py --a ../old/python --b python --clock cpu   # a machine other jobs share

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
import hashlib, json, os, sys, tempfile, time, importlib.util
from pathlib import Path
import bytepair
from bytepair import registry

corpus_dir, repeat, corpora, parts = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4].split(",")
# One thread's work is timed by the clock asked for: the calling thread's CPU time stays put
# when other jobs share the machine, wall time does not. Batches (several threads) are always
# timed by the wall clock.
CLOCK = time.thread_time if sys.argv[5] == "cpu" else time.perf_counter
texts = {c: (corpus_dir / f"{c}.txt").read_text(encoding="utf-8") for c in corpora}
out, digests = {}, {}

def best(f, before=None, clock=None):
    clock = clock or CLOCK
    t = []
    for _ in range(repeat):
        if before: before()
        s = clock(); f(); t.append(clock() - s)
    return min(t)

def record(key, enc, call, text, cold):
    ids = call(text)
    digests[key] = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
    forget = enc.clear_cache if cold else None
    out[key] = len(text.encode()) / best(lambda: call(text), forget) / 1e6

def as_list(ids):
    if not isinstance(ids, list):
        return ids.tolist()  # a numpy array
    return [i for x in ids for i in x] if ids and isinstance(ids[0], list) else ids

def record_both(key, enc, call, arg, nbytes, clock=None):
    # `call(arg)` timed cold (clear_cache first) and warm (after an untimed call).
    digests[key] = hashlib.sha256(json.dumps(as_list(call(arg))).encode()).hexdigest()
    out[key + " cold"] = nbytes / best(lambda: call(arg), enc.clear_cache, clock) / 1e6
    call(arg)
    out[key + " warm"] = nbytes / best(lambda: call(arg), None, clock) / 1e6

def pin(n):
    cpus = set(sorted(ALL)[:n])
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass

ALL = os.sched_getaffinity(0)
for name in ("cl100k_base", "o200k_base"):
    enc = bytepair.get_encoding(name)
    # The pool built before any pinning: bytepair reads the cores it may use once, and a
    # first batch call pinned to one core would leave every later one on one thread.
    enc.encode_ordinary_batch(["hello world"] * 64, num_threads=2)
    for c, t in texts.items():
        if "rank" in parts:
            record(f"rank {name} encode_ordinary {c}", enc, enc.encode_ordinary, t, True)
            record(f"rank {name} encode {c}", enc, lambda s: enc.encode(s, disallowed_special=()), t, True)
        if "numpy" in parts:
            pin(1)
            record_both(f"numpy {name} encode_ordinary (list) {c}", enc, enc.encode_ordinary, t, len(t.encode()))
            record_both(f"numpy {name} encode_to_numpy {c}", enc, lambda s: enc.encode_to_numpy(s, disallowed_special=()), t, len(t.encode()))
            pin(len(ALL))
        if "batch" in parts:
            first = t.encode()[:1_000_000].decode("utf-8", errors="ignore")
            docs, doc = [], ""
            for line in first.splitlines(keepends=True):
                doc += line
                if len(doc.encode()) >= 4000:
                    docs.append(doc)
                    doc = ""
            docs += [doc] if doc else []
            for n in (1, 2):
                pin(n)
                record_both(f"batch {name} {c} {n}t", enc, lambda d: enc.encode_ordinary_batch(d, num_threads=n), docs, len(first.encode()),
                            time.perf_counter)
            pin(len(ALL))
            for temp in ("cold", "warm"):
                out[f"batch {name} {c} 2t / 1t {temp}"] = out[f"batch {name} {c} 2t {temp}"] / out[f"batch {name} {c} 1t {temp}"]

if "score" in parts or "merge" in parts or "load" in parts:
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


def run(src: Path, corpus_dir: Path, repeat: int, corpora: list[str], parts: str, clock: str) -> dict:
    # OpenBLAS's threads (numpy's) spin after import: one is enough, and fewer to pin.
    env = {**os.environ, "PYTHONPATH": str(src.resolve()), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(corpus_dir), str(repeat), ",".join(corpora), parts, clock],
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
    ap.add_argument("--parts", default="rank,score,merge,load",
                    help="comma-separated: rank, score, merge, load, numpy, batch")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="what times one thread's work: wall time, or the thread's CPU time (steadier on "
                         "a machine other jobs share); batches are always wall time")
    args = ap.parse_args()
    corpora = args.corpora.split(",")
    ratios: dict[str, list[float]] = {}
    values: dict[str, tuple[list[float], list[float]]] = {}
    loads = []
    for r in range(args.rounds):
        order = [("a", args.a), ("b", args.b)] if r % 2 == 0 else [("b", args.b), ("a", args.a)]
        got = {side: run(src, args.corpus_dir, args.repeat, corpora, args.parts, args.clock) for side, src in order}
        if got["a"]["digests"] != got["b"]["digests"]:
            bad = [k for k in got["a"]["digests"] if got["a"]["digests"][k] != got["b"]["digests"].get(k)]
            sys.exit(f"round {r + 1}: the builds give different ids for {bad}")
        loads.append(os.getloadavg()[0])
        for key, b in got["b"]["mbps"].items():
            ratios.setdefault(key, []).append(b / got["a"]["mbps"][key])
            values.setdefault(key, ([], []))[0].append(got["a"]["mbps"][key])
            values[key][1].append(b)
        print(f"round {r + 1}/{args.rounds} done, ids identical", file=sys.stderr)
    print(f"Clock: {args.clock} ({'CPU time of the calling thread' if args.clock == 'cpu' else 'wall time'}"
          f"{'; batches: wall time' if 'batch' in args.parts else ''})")
    print(f"B / A throughput, median of {args.rounds} interleaved rounds (min - max); > 1: B faster. "
          f"A and B: median of the rounds (MB/s, or the ratio for '2t / 1t'). 1-minute load average "
          f"after each round: {', '.join(f'{x:.1f}' for x in loads)} (2 cores: above 2, the rounds shared the machine)\n")
    print("| measurement | A | B | B/A median | min - max |\n|---|---|---|---|---|")
    for key, rs in ratios.items():
        a, b = values[key]
        print(f"| {key} | {statistics.median(a):.2f} | {statistics.median(b):.2f} | {statistics.median(rs):.3f} | {min(rs):.3f} - {max(rs):.3f} |")


if __name__ == "__main__":
    main()
