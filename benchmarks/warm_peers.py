#!/usr/bin/env python3
"""Warm bytepair against the fastest exact peers, one text at a time, in CPU time.

benchmarks/encode.py times everything in wall time, which a shared machine disturbs cell by
cell. This one answers one question quickly and steadily: on a warm instance (called before,
its caches kept), how does bytepair's `encode_ordinary` (list) and `encode_to_numpy` compare
with the fastest of the peers that keep state (fastokens, gigatoken, toktok-rs)?

- the peers are built with encode.py's own loaders, and each one's ids are checked against
  tiktoken's on the text first (that call is also the warm-up); a peer that differs is left out;
- pinned to one core; process CPU time; every round runs the libraries in a rotated order,
  each the best of 3 calls; the ratio is bytepair's speed over the fastest peer's in the same
  round, and the median over rounds is printed with its range and each library's best MB/s.

    python benchmarks/warm_peers.py --corpus-dir corpus --vocab-dir ../shared/vocab --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode  # noqa: E402  (this folder's benchmark: its loaders, corpora and pinning)

PEERS = ["fastokens", "gigatoken", "toktok-rs"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get("BYTEPAIR_CORPUS_DIR")
    ap.add_argument("--corpus-dir", type=Path, default=Path(env) if env else Path("corpus"))
    ap.add_argument("--vocab-dir", type=Path, default=encode.DEFAULT_VOCAB)
    ap.add_argument("--corpora", default="zh-fortunes,uk,tr,de,en")
    ap.add_argument("--encodings", default=",".join(encode.ENCODINGS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=float, default=1.5, help="MB of each corpus, as one text")
    a = ap.parse_args()
    clock = time.process_time
    print("| encoding | corpus | output | bytepair MB/s | " + " | ".join(f"{p} MB/s" for p in PEERS)
          + " | bytepair / fastest peer, median (range) |")
    print("|---|---|---|---|" + "---|" * len(PEERS) + "---|")
    for enc in a.encodings.split(","):
        notes: list[str] = []
        skip = set(encode.LIBS) - {"tiktoken", "bytepair", *PEERS}
        libs = encode.load_libs(enc, a.vocab_dir, skip, notes)
        texts = encode.corpora(a.corpus_dir, int(a.mb * 1e6))
        encode.pin(1)
        for corpus in a.corpora.split(","):
            text = texts[corpus]
            mb = len(text.encode()) / 1e6
            want = libs["tiktoken"].inst["list"](text)
            for kind in ("list", "numpy"):
                names = [n for n in ["bytepair", *PEERS] if n in libs and kind in libs[n].inst]
                names = [n for n in names if encode.as_ids(libs[n].inst[kind](text)) == want]
                if "bytepair" not in names or len(names) < 2:
                    sys.exit(f"{enc} {corpus} {kind}: bytepair or every peer gave other ids than tiktoken")
                ratios, best = [], dict.fromkeys(names, 0.0)
                for r in range(a.rounds):
                    speed = {}
                    for n in names[r % len(names):] + names[:r % len(names)]:
                        call = libs[n].inst[kind]
                        seconds = []
                        for _ in range(3):
                            start = clock()
                            call(text)
                            seconds.append(clock() - start)
                        speed[n] = mb / min(seconds)
                        best[n] = max(best[n], speed[n])
                    ratios.append(speed["bytepair"] / max(v for k, v in speed.items() if k != "bytepair"))
                cells = [f"{best[p]:.1f}" if p in best else "-" for p in PEERS]
                print(f"| {enc} | {corpus} | {kind} | {best['bytepair']:.1f} | " + " | ".join(cells)
                      + f" | {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) |", flush=True)
        encode.pin(len(encode.ALL_CPUS))
    for note in dict.fromkeys(notes):
        print(f"- {note}")


if __name__ == "__main__":
    main()
