"""Encoding throughput of bytepair beside every installed peer, in one run.

For each encoding (cl100k_base, o200k_base), each mode (``encode_ordinary``, and ``encode``
with tiktoken's default disallowed-special check) and each input (the corpora, then the
worst-case inputs), every library encodes the same text: the libraries are interleaved
within each repetition and the best of ``--repeat`` runs is kept. Before timing, every
library's ids are compared with tiktoken's; the ``ids`` column says which differ, and a
library whose ids differ is left out of the "fastest other" ratio.

Peers are loaded offline from the reference vocabularies (``--vocab-dir``, default
``../shared/vocab`` beside the repository): tiktoken, riptoken and HF tokenizers from the
``.tiktoken`` files, wordchipper through its disk cache (pointed at those files),
bpe-openai from the tables bundled in its package. A peer that is not installed, or cannot
build an encoding offline, is skipped with a note. Then: linearity (bytepair at n=10^5 and
n=10^6 on each worst-case input) and start-up (``get_encoding("o200k_base")`` in fresh
processes, time and resident memory, against tiktoken).

    python benchmarks/encode.py --corpus-dir /work/corpus
    python benchmarks/encode.py --quick          # smaller inputs, fewer repeats
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_VOCAB = REPO.parent / "shared" / "vocab"
ENCODINGS = ["cl100k_base", "o200k_base"]
SPECIALS = {
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


def patterns() -> dict[str, str]:
    from bytepair.registry import openai

    return {"cl100k_base": openai.CL100K_PATTERN, "o200k_base": openai.O200K_PATTERN}


# ------------------------------------------------------------------------------- inputs


def worst_cases(n: int) -> dict[str, str]:
    """The issue's worst-case inputs, n characters each (deterministic)."""
    rnd = random.Random(n)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    rows = [{"id": i, "name": f"item-{i}", "tags": ["a", "b"], "score": i * 0.25, "ok": i % 3 == 0}
            for i in range(n // 40 + 2)]
    return {
        "a*n": "a" * n,
        "space*n": " " * n,
        "newline*n": "\n" * n,
        "caret*n": "^" * n,
        "letters, no spaces": "".join(rnd.choice(letters) for _ in range(n)),
        "CJK": "".join(chr(rnd.randrange(0x4E00, 0xA000)) for _ in range(n)),
        "base64 blob": base64.b64encode(rnd.randbytes(n)).decode()[:n],
        "minified JSON": json.dumps(rows, separators=(",", ":"))[:n],
    }


# The corpora that ../shared/corpus/make_corpus.py makes (the parity tests' list,
# tests/support.py CORPORA): English prose, Python, German, Chinese, Ukrainian, Turkish,
# Vietnamese.
CORPORA = ("en", "code", "de", "zh-fortunes", "uk", "tr", "vi")


def corpora(corpus_dir: Path | None, limit: int | None) -> dict[str, str]:
    out = {}
    if corpus_dir is None:
        return out
    for name in CORPORA:
        p = corpus_dir / f"{name}.txt"
        if p.exists():
            text = p.read_text(encoding="utf-8")
            out[name] = text[:limit] if limit else text
        else:
            print(f"note: {p} is missing (make_corpus.py makes it when its Debian package is installed)",
                  file=sys.stderr)
    return out


# ------------------------------------------------------------------------------- libraries


class Skip(Exception):
    pass


def lib_tiktoken(enc: str, vocab: Path):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    e = tiktoken.Encoding(enc, pat_str=patterns()[enc],
                          mergeable_ranks=load_tiktoken_bpe(str(vocab / f"{enc}.tiktoken")),
                          special_tokens=SPECIALS[enc])
    return e.encode_ordinary, e.encode


def lib_bytepair(enc: str, vocab: Path):
    import bytepair

    e = bytepair.get_encoding(enc)
    return Cold(e.encode_ordinary, e.clear_cache), Cold(e.encode, e.clear_cache)


class Cold:
    """A bytepair call timed cold: `run` calls `forget` (Encoding.clear_cache) before starting
    the clock, so no timed run reuses the pieces an earlier run of the same text merged (the
    threads keep them between calls, and these inputs are encoded over and over)."""

    def __init__(self, call, forget):
        self.call, self.forget = call, forget

    def __call__(self, text):
        return self.call(text)


_WC_CACHE: str | None = None


def lib_wordchipper(enc: str, vocab: Path):
    global _WC_CACHE
    # wordchipper reads WORDCHIPPER_CACHE_DIR/openai/<name>/<name>.tiktoken before downloading;
    # point it at the reference files so nothing is fetched (and no broken file is cached).
    if _WC_CACHE is None:
        _WC_CACHE = tempfile.mkdtemp(prefix="bench-wordchipper-")
    d = Path(_WC_CACHE) / "openai" / enc
    d.mkdir(parents=True, exist_ok=True)
    link = d / f"{enc}.tiktoken"
    if not link.exists():
        link.symlink_to((vocab / f"{enc}.tiktoken").resolve())
    os.environ["WORDCHIPPER_CACHE_DIR"] = _WC_CACHE
    from wordchipper.compat import tiktoken as wct

    e = wct.get_encoding(enc)
    if len(e.encode_ordinary("hello world")) != 2:
        raise Skip("vocabulary did not load offline")
    return e.encode_ordinary, e.encode


def lib_riptoken(enc: str, vocab: Path):
    import riptoken
    import tiktoken

    ranks = riptoken.load_tiktoken_bpe(str(vocab / f"{enc}.tiktoken"))
    core = riptoken.CoreBPE(ranks, SPECIALS[enc], patterns()[enc])
    tk = tiktoken.Encoding(enc, pat_str=patterns()[enc], mergeable_ranks=ranks, special_tokens=SPECIALS[enc])
    e = riptoken.Encoding(core, tk)
    # riptoken's encode does not raise on disallowed specials; do tiktoken's check in front
    # so the mode measures the same work.
    specials = list(SPECIALS[enc])

    def encode(text: str) -> list[int]:
        for s in specials:
            if s in text:
                raise ValueError(s)
        return e.encode(text)

    return e.encode_ordinary, encode


def lib_bpe_openai(enc: str, vocab: Path):
    from bpe_openai import _bindings, get_encoding

    backend = _bindings.tokenizer_for_encoding(enc)  # tables bundled in the package
    wrapped = get_encoding(enc)

    def encode(text: str) -> list[int]:
        return wrapped.encode(text)  # refuses texts of 10^6 characters or more

    return backend.encode, encode


def lib_hf(enc: str, vocab: Path):
    try:
        from transformers.convert_slow_tokenizer import TikTokenConverter
    except ImportError as e:
        raise Skip(f"needs transformers to convert the vocabulary ({e})") from None
    tok = TikTokenConverter(vocab_file=str(vocab / f"{enc}.tiktoken"), pattern=patterns()[enc]).converted()

    def ordinary(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    return ordinary, None  # no disallowed-special check in HF tokenizers


LIBS = {
    "tiktoken": lib_tiktoken,
    "bytepair": lib_bytepair,
    "wordchipper": lib_wordchipper,
    "riptoken": lib_riptoken,
    "bpe-openai": lib_bpe_openai,
    "HF tokenizers": lib_hf,
}
MODULE = {"tiktoken": "tiktoken", "bytepair": "bytepair", "wordchipper": "wordchipper",
          "riptoken": "riptoken", "bpe-openai": "bpe_openai", "HF tokenizers": "tokenizers"}


def load_libs(enc: str, vocab: Path, skip: set[str], notes: list[str]):
    import importlib.util

    libs = {}
    for name, make in LIBS.items():
        if name in skip:
            continue
        if importlib.util.find_spec(MODULE[name]) is None:
            notes.append(f"{name}: not installed, skipped")
            continue
        t0 = time.perf_counter()
        try:
            libs[name] = make(enc, vocab)
        except Skip as e:
            notes.append(f"{name} ({enc}): skipped: {e}")
        except Exception as e:  # a peer that cannot build this encoding offline
            notes.append(f"{name} ({enc}): skipped: {type(e).__name__}: {str(e)[:120]}")
        else:
            if time.perf_counter() - t0 > 5:
                notes.append(f"{name} ({enc}): took {time.perf_counter() - t0:.0f} s to build")
    if "tiktoken" not in libs:
        sys.exit("tiktoken is the reference and must load")
    return libs


# ------------------------------------------------------------------------------- measuring


def run(f, text):
    if isinstance(f, Cold):
        f.forget()
    gc.disable()
    try:
        t0 = time.perf_counter()
        f(text)
        return time.perf_counter() - t0
    finally:
        gc.enable()


def first_diff(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def measure(libs, mode: int, inputs: dict[str, str], repeat: int, budget: float, notes: list[str]):
    """rows: (input, MB, {lib: MB/s or None}, {lib: 'same'|'differs'|'error'})."""
    rows = []
    for label, text in inputs.items():
        nbytes = len(text.encode("utf-8"))
        fns = {n: f[mode] for n, f in libs.items() if f[mode] is not None}
        status, best = {}, {}
        ref = bytepair_ids = None
        for n, f in fns.items():  # tiktoken first: it is the reference
            try:
                t0 = time.perf_counter()
                got = f(text)
                first = time.perf_counter() - t0
            except BaseException as e:  # a peer's Rust panic arrives as PanicException
                if isinstance(e, KeyboardInterrupt):
                    raise
                status[n] = f"error: {type(e).__name__}: {str(e)[:60]}"
                continue
            got = list(got)
            if n == "tiktoken":
                ref = got
                status[n] = "same"
            elif ref is None:
                status[n] = "same?" if n == "bytepair" else ("same" if got == bytepair_ids else "differs from bytepair")
            else:
                status[n] = "same" if got == ref else f"differs at {first_diff(got, ref)}"
            if n == "bytepair":
                bytepair_ids = got
            if first * repeat > budget:
                status[n] += " (timed once)"
                best[n] = first
        live = [n for n in fns if n in status and not status[n].startswith("error")]
        for _ in range(repeat):
            for n in live:
                if "(timed once)" in status[n]:
                    continue
                t = run(fns[n], text)
                best[n] = min(best.get(n, t), t)
        speeds = {n: nbytes / best[n] / 1e6 for n in best}
        if ref is None:
            notes.append(f"tiktoken failed on {label!r} ({status['tiktoken']}): the others are compared with "
                         "bytepair there, and bytepair's ids are unchecked ('same?')")
        rows.append((label, nbytes / 1e6, speeds, status))
    return rows


def same(status: str) -> bool:
    """Ids identical to tiktoken's (possibly timed once because the library is slow)."""
    return status == "same" or status.startswith("same (")


def table(title: str, rows, libs_order: list[str]) -> str:
    cols = [n for n in libs_order if any(n in r[2] for r in rows)]
    head = ["input", "MB"] + [f"{n} MB/s" for n in cols] + ["bytepair / tiktoken", "bytepair / fastest other", "ids vs tiktoken"]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, mb, speeds, status in rows:
        cells = [label, f"{mb:.2f}"]
        for n in cols:
            if n in speeds:
                mark = "" if same(status[n]) else (" ?" if status[n] == "same?" else " ≠")
                cells.append(f"{speeds[n]:.1f}{mark}")
            else:
                cells.append("error" if status.get(n, "").startswith("error") else "n/a")
        bp, tk = speeds.get("bytepair"), speeds.get("tiktoken")
        others = [(s, n) for n, s in speeds.items() if n not in ("bytepair", "tiktoken") and same(status[n])]
        cells.append(f"{bp / tk:.1f}x" if bp and tk else "n/a")
        if bp and others:
            s, n = max(others)
            cells.append(f"{bp / s:.1f}x ({n})")
        else:
            cells.append("n/a")
        differs = [f"{n} {status[n]}" for n in status if not same(status[n])]
        cells.append("all identical" if not differs else "; ".join(differs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def keep(names, only: list[str]):
    """The names that contain one of `only` (all of them when `only` is empty)."""
    return [n for n in names if not only or any(o in n for o in only)]


def linearity(repeat: int, only: list[str] = ()) -> str:
    import bytepair

    lines = ["### Linearity: bytepair encode_ordinary, time(n=10^6) / time(n=10^5) (goal <= 12)", "",
             "| input | cl100k 10^5 ms | cl100k 10^6 ms | ratio | o200k 10^5 ms | o200k 10^6 ms | ratio |",
             "|---|---|---|---|---|---|---|"]
    small, big = worst_cases(10**5), worst_cases(10**6)
    encs = [bytepair.get_encoding(e) for e in ENCODINGS]
    for label in keep(small, only):
        cells = [label]
        for e in encs:
            # Both are short (milliseconds), so a busy moment skews one run easily: best of
            # many. The small input is timed more often: its best run is the noisier one.
            f = Cold(e.encode_ordinary, e.clear_cache)
            ts = [min(run(f, small[label]) for _ in range(8 * repeat)),
                  min(run(f, big[label]) for _ in range(3 * repeat))]
            cells += [f"{ts[0] * 1e3:.1f}", f"{ts[1] * 1e3:.1f}", f"{ts[1] / ts[0]:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def batches(corpus_dir: Path | None, vocab: Path, repeat: int) -> str:
    """encode_ordinary_batch / encode_batch on 1, 2 and 8 threads (distinct documents: those
    of mix.jsonl and the corpora cut into documents), tiktoken's batch beside it; then one long
    text split for threads."""
    import json

    import bytepair
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    mix = corpus_dir / "mix.jsonl" if corpus_dir else None
    if not mix or not mix.is_file():
        return "(batches: no mix.jsonl in the corpus directory)"
    with open(mix, encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f]
    # No document twice (bytepair's threads keep the pieces they merged, so a repeated
    # document would be cheaper the second time): the JSONL documents, then each corpus's
    # first 1.8 MB cut into documents of about 2,000 characters at paragraph breaks. The three
    # corpora of mix.jsonl only: the same batch as earlier results, and a run half as long.
    for name in ("en", "code", "de"):
        path = corpus_dir / f"{name}.txt"
        if path.is_file():
            doc = ""
            for para in path.read_text(encoding="utf-8")[:1_800_000].split("\n\n"):
                doc += para + "\n\n"
                if len(doc) >= 2000:
                    docs.append(doc)
                    doc = ""
    mb = sum(len(d.encode()) for d in docs) / 1e6
    lines = [f"### Batches: {len(docs)} distinct documents ({mb:.1f} MB: mix.jsonl, and en, code, de in "
             f"documents of ~2,000 characters); MB/s, best of {repeat}, the five set-ups interleaved, "
             "bytepair's kept pieces cleared before each timed run", "",
             "| encoding | call | tiktoken 1 thread | tiktoken 2 threads | bytepair 1 thread | bytepair 2 threads "
             "| bytepair 8 threads (on 2 cores) | bytepair 2 threads / 1 thread (best / median of rounds) |", "|---|---|---|---|---|---|---|---|"]
    for name in ENCODINGS:
        ours = bytepair.get_encoding(name)
        ref = tiktoken.Encoding(name, pat_str=patterns()[name], special_tokens=SPECIALS[name],
                                mergeable_ranks=load_tiktoken_bpe(str(vocab / f"{name}.tiktoken")))
        for call in ("encode_ordinary_batch", "encode_batch"):
            want = getattr(ref, call)(docs, num_threads=1)
            # 8 threads on a 2-core machine: more threads than cores must cost nothing (no
            # contention between them), the "no lock contention as threads grow".
            setups = [(ref, 1), (ref, 2), (ours, 1), (ours, 2), (ours, 8)]
            for lib, threads in setups:
                if getattr(lib, call)(docs, num_threads=threads) != want:
                    raise SystemExit(f"{name} {call} ({threads} threads): ids differ from tiktoken's")
            times: list[list[float]] = [[] for _ in setups]
            for _ in range(repeat):
                for k, (lib, threads) in enumerate(setups):
                    def f(t, method=getattr(lib, call), threads=threads):
                        return method(t, num_threads=threads)

                    # An untimed warm-up of the same set-up first (its threads awake, the
                    # code and tables in cache), as for every library alike; `run` then
                    # clears what bytepair's warm-up merged.
                    f(docs[:200])
                    times[k].append(run(Cold(f, ours.clear_cache) if lib is ours else f, docs))
            mbs = [mb / min(t) for t in times]
            # Each round's 1- and 2-thread runs are neighbours in time, so the median of the
            # rounds' ratios is steadier than best/best on a machine whose speed wanders.
            paired = statistics.median(a / b for a, b in zip(times[2], times[3]))
            lines.append(f"| {name} | {call} | " + " | ".join(f"{x:.1f}" for x in mbs)
                         + f" | {min(times[2]) / min(times[3]):.2f}x / {paired:.2f}x |")
    text = (corpus_dir / "en.txt").read_text(encoding="utf-8") if (corpus_dir / "en.txt").is_file() else ""
    if text:
        lines += ["", "One long text (en.txt) split at safe points, `encode_ordinary_parallel` against "
                  "`encode_ordinary`:", "", "| encoding | 1 thread MB/s | 2 threads MB/s | ratio |", "|---|---|---|---|"]
        n = len(text.encode()) / 1e6
        for name in ENCODINGS:
            enc = bytepair.get_encoding(name)
            if enc.encode_ordinary_parallel(text, num_threads=2) != enc.encode_ordinary(text):
                raise SystemExit(f"{name}: encode_ordinary_parallel differs from encode_ordinary")
            t1 = min(run(Cold(enc.encode_ordinary, enc.clear_cache), text) for _ in range(repeat))
            t2 = min(run(Cold(lambda t: enc.encode_ordinary_parallel(t, num_threads=2), enc.clear_cache), text)
                     for _ in range(repeat))
            lines.append(f"| {name} | {n / t1:.1f} | {n / t2:.1f} | {t1 / t2:.2f}x |")
    return "\n".join(lines)


STARTUP = r"""
import os, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
before = rss()
t0 = time.perf_counter()
lib, vocab = sys.argv[1], sys.argv[2]
if lib == "bytepair":
    import bytepair
    enc = bytepair.get_encoding("o200k_base")
else:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    pat = PATTERN
    enc = tiktoken.Encoding("o200k_base", pat_str=pat,
                            mergeable_ranks=load_tiktoken_bpe(vocab + "/o200k_base.tiktoken"),
                            special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018})
t1 = time.perf_counter()
after = rss()
enc.encode("hello world")
t2 = time.perf_counter()
print(t1 - t0, (after - before) / 1e6, t2 - t1, rss() / 1e6)
"""


def startup(vocab: Path, runs: int) -> str:
    code = STARTUP.replace("PATTERN", repr(patterns()["o200k_base"]))
    # Both libraries run from compiled bytecode, as installed wheels do (pip compiles them):
    # bytecode writing is allowed and an untimed first run per library writes any missing .pyc
    # (an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module
    # from source in every timed run).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = {}
    for lib in ("tiktoken", "bytepair"):
        subprocess.run([sys.executable, "-c", code, lib, str(vocab)], capture_output=True, check=True, env=env)
    for _ in range(runs):
        for lib in ("tiktoken", "bytepair"):
            out = subprocess.run([sys.executable, "-c", code, lib, str(vocab)], capture_output=True, text=True,
                                 check=True, env=env).stdout.split()
            t, mb, first, total = map(float, out)
            prev = res.get(lib)
            if prev is None or t < prev[0]:
                res[lib] = (t, mb, first, total)
    tk, bp = res["tiktoken"], res["bytepair"]
    return "\n".join([
        f"### Start-up: import + o200k_base in a fresh process, from compiled bytecode (best of {runs}; "
        "goal <= 1/10 of tiktoken, <= 25 MB)", "",
        "| library | time ms | extra RSS MB | first encode ms |", "|---|---|---|---|",
        f"| tiktoken (local .tiktoken file, no download) | {tk[0] * 1e3:.1f} | {tk[1]:.1f} | {tk[2] * 1e3:.2f} |",
        f"| bytepair get_encoding | {bp[0] * 1e3:.1f} | {bp[1]:.1f} | {bp[2] * 1e3:.2f} |",
        f"| bytepair / tiktoken | {bp[0] / tk[0]:.2f}x | {bp[1] / tk[1]:.2f}x | |",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get("BYTEPAIR_CORPUS_DIR")
    ap.add_argument("--corpus-dir", type=Path, default=Path(env) if env else None)
    ap.add_argument("--vocab-dir", type=Path, default=DEFAULT_VOCAB)
    ap.add_argument("--encodings", default=",".join(ENCODINGS))
    ap.add_argument("--repeat", type=int, default=5, help="best of this many runs")
    ap.add_argument("--worst-n", type=int, default=10**6, help="characters per worst-case input")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N characters of each corpus")
    ap.add_argument("--budget", type=float, default=30.0,
                    help="a library whose first run x repeat exceeds this many seconds is timed once")
    ap.add_argument("--skip", default="", help="comma-separated libraries to leave out")
    ap.add_argument("--no-worst", action="store_true")
    ap.add_argument("--inputs", default="",
                    help="comma-separated parts of input names to keep, e.g. 'a*n,CJK' (corpora, worst cases, linearity)")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--startup-only", action="store_true", help="only the start-up table (no corpora needed)")
    ap.add_argument("--no-linearity", action="store_true")
    ap.add_argument("--no-batch", action="store_true")
    ap.add_argument("--batch-only", action="store_true", help="only the batch table (needs the corpora)")
    ap.add_argument("--quick", action="store_true", help="1 MB of each corpus, n=10^5, 3 repeats")
    a = ap.parse_args()
    if a.quick:
        a.limit, a.worst_n, a.repeat = a.limit or 1_000_000, 10**5, min(a.repeat, 3)
    if not a.vocab_dir.exists():
        sys.exit(f"no vocabularies at {a.vocab_dir} (pass --vocab-dir)")
    if a.startup_only:
        print(f"`{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
        print(startup(a.vocab_dir, a.repeat))
        return

    if a.batch_only:
        print(f"`{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
        print(batches(a.corpus_dir, a.vocab_dir, a.repeat))
        return

    print(f"# bytepair encode benchmark\n\n`{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; single thread; MB = 10^6 bytes of UTF-8; "
          f"best of {a.repeat}, libraries interleaved. ≠ marks ids that differ from tiktoken's.\n")
    inputs = corpora(a.corpus_dir, a.limit)
    if not inputs:
        print("(no corpus directory: set BYTEPAIR_CORPUS_DIR or pass --corpus-dir; worst cases only)\n")
    if not a.no_worst:
        inputs.update(worst_cases(a.worst_n))
    only = [s.strip() for s in a.inputs.split(",") if s.strip()]
    inputs = {k: inputs[k] for k in keep(inputs, only)}
    notes: list[str] = []
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    for enc in a.encodings.split(","):
        libs = load_libs(enc, a.vocab_dir, skip, notes)
        order = list(libs)
        for mode, mname in ((0, "encode_ordinary"), (1, "encode (disallowed-special check)")):
            rows = measure(libs, mode, inputs, a.repeat, a.budget, notes)
            print(table(f"{enc}, {mname}", rows, order))
            print(flush=True)
        del libs
        gc.collect()
    if notes:
        print("Notes:\n" + "\n".join(f"- {n}" for n in dict.fromkeys(notes)) + "\n")
    if not a.no_linearity:
        print(linearity(max(3, a.repeat), only) + "\n", flush=True)
    if not a.no_batch:
        print(batches(a.corpus_dir, a.vocab_dir, a.repeat) + "\n", flush=True)
    if not a.no_startup:
        print(startup(a.vocab_dir, 5))


if __name__ == "__main__":
    main()
