"""Training speed and memory, side by side: bytepair vs rustbpe vs HF tokenizers' BpeTrainer.

    python benchmarks/train.py [--corpus-dir DIR] [--vocab-size 8192] [--big] [--repeat 1]

Each library trains in its own subprocess on the same files, with the GPT-4 split pattern
(tiktoken's cl100k form, the same string for all), all cores, one document per line:
en.txt, code.txt and de.txt from the corpus dir ($BYTEPAIR_CORPUS_DIR by default). Each library
is driven the way its users train on files: `bytepair.train_files(paths)`, HF's
`Tokenizer.train(paths)`, and rustbpe (which has no file API) over `open(path)` line by line.
The row "bytepair (iterator)" gets exactly rustbpe's Python stream of lines instead.

Reported: wall time of the training call (best of --repeat runs), the subprocess's peak RSS
(resource.getrusage: everything the library held at its peak, interpreter included), and each
library's time and memory relative to bytepair. Missing peers are skipped with a note.

--big adds a >= 100 MB corpus trained to vocab 32768: the three files written seven times to a
temporary directory, each time through a different text transform (as is, lower, upper,
swapcase, title, each line's words reversed, each line's characters reversed), so that the
distinct chunks grow with the corpus and not only their counts. The directory is deleted after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

CHILD = textwrap.dedent(r'''
    import json, resource, sys, time
    # The pattern comes from the parent (bytepair's cl100k pattern), so that a peer's process
    # does not import bytepair to read it.
    lib, vocab_size, CL100K, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]

    def lines():
        for p in paths:
            with open(p, encoding="utf-8") as f:
                yield from f

    if lib == "bytepair":
        import bytepair
        run = lambda: bytepair.train_files(paths, vocab_size, pattern=CL100K, show_progress=False).n_vocab
    elif lib == "bytepair-iter":
        import bytepair
        run = lambda: bytepair.train(lines(), vocab_size, pattern=CL100K, show_progress=False).n_vocab
    elif lib == "rustbpe":
        import rustbpe
        def run():
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(lines(), vocab_size=vocab_size, pattern=CL100K)
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
            tok.train(paths, trainer=trainer)
            return tok.get_vocab_size()
    t = time.perf_counter()
    n = run()
    dt = time.perf_counter() - t
    print(json.dumps({"time": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "n_vocab": n}))
''')

TRANSFORMS = [
    ("asis", lambda s: s), ("lower", str.lower), ("upper", str.upper), ("swapcase", str.swapcase),
    ("title", str.title),
    ("words-reversed", lambda s: " ".join(reversed(s.rstrip("\n").split(" "))) + "\n"),
    ("chars-reversed", lambda s: s.rstrip("\n")[::-1] + "\n"),
]


def write_big_corpus(corpus_dir: str, out_dir: str) -> list[str]:
    paths = []
    for tname, t in TRANSFORMS:
        for name in ("en", "code", "de"):
            path = os.path.join(out_dir, f"{name}-{tname}.txt")
            with open(os.path.join(corpus_dir, name + ".txt"), encoding="utf-8") as src, \
                    open(path, "w", encoding="utf-8") as dst:
                dst.writelines(t(line) for line in src)
            paths.append(path)
    return paths


PEERS = [("bytepair", "bytepair", "bytepair"), ("bytepair-iter", "bytepair", "bytepair (iterator)"),
         ("rustbpe", "rustbpe", "rustbpe"), ("hf", "tokenizers", "HF tokenizers BpeTrainer")]


def installed(module: str) -> bool:
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return r.returncode == 0


def child(lib: str, paths: list[str], vocab_size: int) -> dict:
    from bytepair import _core

    r = subprocess.run([sys.executable, "-c", CHILD, lib, str(vocab_size), _core.PATTERNS["cl100k"], *paths],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{lib} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench(title: str, paths: list[str], vocab_size: int, repeat: int) -> None:
    size = sum(os.path.getsize(p) for p in paths)
    print(f"\ncorpus: {title} ({size / 1e6:.1f} MB), vocab {vocab_size}, GPT-4 pattern, {os.cpu_count()} cores")
    results = {}
    for lib, module, label in PEERS:
        if not installed(module):
            print(f"  (skipped {label}: `{module}` is not installed)")
            continue
        runs = [child(lib, paths, vocab_size) for _ in range(repeat)]
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
    small = [os.path.join(args.corpus_dir, f"{n}.txt") for n in ("en", "code", "de")]
    bench("en+code+de", small, args.vocab_size, args.repeat)
    if args.big:
        with tempfile.TemporaryDirectory(prefix="bytepair-bench-") as tmp:
            bench("en+code+de x7 transforms", write_big_corpus(args.corpus_dir, tmp), args.big_vocab_size,
                  args.repeat)


if __name__ == "__main__":
    main()
