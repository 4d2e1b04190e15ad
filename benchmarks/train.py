"""Training speed and memory, side by side: bytepair vs rustbpe vs HF tokenizers' BpeTrainer.

    python benchmarks/train.py [--corpus-dir DIR] [--vocab-size 8192] [--big] [--repeat 1]

Each library trains in its own subprocess on the same stream of documents (one document per
line of en.txt, code.txt and de.txt from the corpus dir, $BYTEPAIR_CORPUS_DIR by default), with
the GPT-4 split pattern and all cores. Reported: wall time of the training call (best of
--repeat runs), the subprocess's peak RSS (resource.getrusage, so everything the library held
at its peak), and each peer's time and memory relative to bytepair. Missing peers are skipped
with a note.

--big adds a >= 100 MB corpus trained to vocab 32768: the same three files streamed seven
times, each time through a different text transform (as is, lower, upper, swapcase, title,
each line's words reversed, each line's characters reversed), so the distinct chunks grow with
the corpus instead of only their counts. It is generated on the fly in each subprocess, never
written to disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r'''
    import json, os, resource, sys, time
    lib, corpus_dir, vocab_size, big = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
              r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
    TRANSFORMS = [
        lambda s: s, str.lower, str.upper, str.swapcase, str.title,
        lambda s: " ".join(reversed(s.rstrip("\n").split(" "))) + "\n",
        lambda s: s.rstrip("\n")[::-1] + "\n",
    ]

    def docs():
        for t in (TRANSFORMS if big else TRANSFORMS[:1]):
            for name in ("en", "code", "de"):
                with open(os.path.join(corpus_dir, name + ".txt"), encoding="utf-8") as f:
                    for line in f:
                        yield t(line)

    if lib == "bytepair":
        import bytepair
        run = lambda: bytepair.train(docs(), vocab_size, pattern=CL100K, show_progress=False).n_vocab
    elif lib == "rustbpe":
        import rustbpe
        def run():
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(docs(), vocab_size=vocab_size, pattern=CL100K)
            return tok.vocab_size
    elif lib == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
        def run():
            tok = Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(CL100K), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ])
            trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
            tok.train_from_iterator(docs(), trainer=trainer)
            return tok.get_vocab_size()
    if lib == "bytes":
        print(json.dumps({"bytes": sum(len(d.encode()) for d in docs())}))
        sys.exit()
    t = time.perf_counter()
    n = run()
    dt = time.perf_counter() - t
    print(json.dumps({"time": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "n_vocab": n}))
''')

PEERS = [("bytepair", "bytepair", "bytepair"), ("rustbpe", "rustbpe", "rustbpe"),
         ("hf", "tokenizers", "HF tokenizers BpeTrainer")]


def installed(module: str) -> bool:
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return r.returncode == 0


def child(lib: str, corpus_dir: str, vocab_size: int, big: bool) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, lib, corpus_dir, str(vocab_size), "1" if big else "0"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{lib} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench(corpus_dir: str, vocab_size: int, big: bool, repeat: int) -> None:
    size = child("bytes", corpus_dir, vocab_size, big)["bytes"]
    print(f"\ncorpus: {'en+code+de x7 transforms' if big else 'en+code+de'} ({size / 1e6:.1f} MB), "
          f"vocab {vocab_size}, GPT-4 pattern, {os.cpu_count()} cores")
    results = {}
    for lib, module, label in PEERS:
        if not installed(module):
            print(f"  (skipped {label}: `{module}` is not installed)")
            continue
        runs = [child(lib, corpus_dir, vocab_size, big) for _ in range(repeat)]
        best = min(runs, key=lambda r: r["time"])
        best["rss_mb"] = max(r["rss_mb"] for r in runs)
        results[label] = best
    base = results.get("bytepair")
    print(f"  {'library':<26} {'time (s)':>9} {'MB/s':>7} {'peak RSS (MB)':>14} {'time / bytepair':>16} "
          f"{'RSS / bytepair':>15} {'n_vocab':>8}")
    for label, r in results.items():
        tr = f"{r['time'] / base['time']:.2f}x" if base else "-"
        mr = f"{r['rss_mb'] / base['rss_mb']:.2f}x" if base else "-"
        print(f"  {label:<26} {r['time']:>9.2f} {size / 1e6 / r['time']:>7.1f} {r['rss_mb']:>14.0f} {tr:>16} "
              f"{mr:>15} {r['n_vocab']:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus-dir", default=os.environ.get("BYTEPAIR_CORPUS_DIR"))
    ap.add_argument("--vocab-size", type=int, default=8192)
    ap.add_argument("--big", action="store_true", help="also the >= 100 MB corpus to vocab 32768")
    ap.add_argument("--big-vocab-size", type=int, default=32768)
    ap.add_argument("--repeat", type=int, default=1, help="runs per library (best time is shown)")
    args = ap.parse_args()
    if not args.corpus_dir:
        sys.exit("give --corpus-dir or set BYTEPAIR_CORPUS_DIR")
    bench(args.corpus_dir, args.vocab_size, False, args.repeat)
    if args.big:
        bench(args.corpus_dir, args.big_vocab_size, True, args.repeat)


if __name__ == "__main__":
    main()
