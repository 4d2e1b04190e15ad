#!/usr/bin/env python3
"""The flat-batch cells of encode.py alone, with many more rounds: bytepair's
``encode_ordinary_batch_to_numpy`` and its list of lists beside the peers that return one flat
array (gigatoken, toktok-rs, quicktok-v1, fastokens), warm, on 1 and 2 threads.

encode.py keeps the best of a few runs per cell, which on a machine other jobs share swings by
a third between runs. Here every round runs each library once (the order rotated each round),
and what is reported is the median over rounds of each library's time over bytepair's in the
same round (> 1: bytepair faster), beside best and median MB/s. The libraries, pinning and id
checks are encode.py's (``LIBS``, ``pin``, ``documents``): every library's ids are compared with
tiktoken's before timing.

    python benchmarks/flat_batch.py --corpus-dir corpus --corpora en,de --rounds 21
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode as bench  # noqa: E402  (the loaders and pinning of encode.py)

PEERS = ("gigatoken", "toktok-rs", "quicktok-v1", "fastokens")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get("BYTEPAIR_CORPUS_DIR")
    ap.add_argument("--corpus-dir", type=Path, default=Path(env) if env else None, required=env is None)
    ap.add_argument("--vocab-dir", type=Path, default=bench.DEFAULT_VOCAB)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--corpora", default="en")
    ap.add_argument("--batch-mb", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=21)
    a = ap.parse_args()
    notes: list[str] = []
    print(f"`{' '.join(['python'] + sys.argv)}`\n")
    print("| encoding | corpus | threads | library | best MB/s | median MB/s | its time / bytepair flat's (median of rounds) |")
    print("|---|---|---|---|---|---|---|")
    for enc in a.encodings.split(","):
        skip = set(bench.LIBS) - {"tiktoken", "bytepair", *PEERS}
        libs = bench.load_libs(enc, a.vocab_dir, skip, notes)
        for corpus in a.corpora.split(","):
            text = (a.corpus_dir / f"{corpus}.txt").read_text(encoding="utf-8")
            docs = bench.documents(text.encode()[: int(a.batch_mb * 1e6)].decode("utf-8", errors="ignore"))
            nbytes = sum(len(d.encode()) for d in docs)
            cells = {"bytepair flat": libs["bytepair"].inst["flat"], "bytepair list of lists": libs["bytepair"].inst["batch"]}
            cells.update({f"{n} flat": libs[n].inst["flat"] for n in PEERS if n in libs})
            for threads in (1, 2):
                bench.pin(threads)
                ref = bench.as_ids(libs["tiktoken"].inst["batch"](docs, threads))
                live = {}
                for name, f in cells.items():
                    if bench.as_ids(f(docs, threads)) == ref:  # also the warm-up
                        live[name] = f
                    else:
                        notes.append(f"{name} ({enc} {corpus}): ids differ from tiktoken's, left out")
                times: dict[str, list[float]] = {n: [] for n in live}
                names = list(live)
                for r in range(a.rounds):
                    for n in names[r % len(names):] + names[: r % len(names)]:
                        # encode.py's `timed`: the result is freed after the clock stops.
                        times[n].append(bench.timed(live[n], docs, threads))
                ours = times["bytepair flat"]
                for n, t in times.items():
                    ratio = statistics.median(x / y for x, y in zip(t, ours))
                    print(f"| {enc} | {corpus} | {threads} | {n} | {nbytes / min(t) / 1e6:.1f} | "
                          f"{nbytes / statistics.median(t) / 1e6:.1f} | {ratio:.2f} |", flush=True)
            bench.pin(len(bench.ALL_CPUS))
        del libs
        gc.collect()
    notes.append(f"1-minute load average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("\n" + "\n".join(f"- {n}" for n in dict.fromkeys(notes)))


if __name__ == "__main__":
    main()
