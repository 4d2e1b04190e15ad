"""Encoding throughput of bytepair beside every installed exact peer, in one run.

For each encoding (cl100k_base, o200k_base) and each corpus (tests/support.py CORPORA: English,
Python, German, Chinese, Ukrainian, Turkish, Vietnamese, Japanese, Russian), every library
encodes the same input:

- single texts (the first ``--text-mb`` MB of the corpus), list output and numpy output;
- batches of ~4 KB documents (the same text cut at line breaks), on 1 and on 2 threads, as a
  list of lists and as one flat array (ids, with offsets where a library gives them).

Each is timed cold and warm, reported in separate tables. Cold: bytepair's kept pieces are
cleared (``Encoding.clear_cache``) before the run, and a peer that keeps state between calls
is timed on a fresh instance (built, untimed, before the run; which peers those are is in
``Peer.keeps_state``, from their documentation and source). Warm: the best of ``--repeat``
runs after a first, untimed one on the same instance. Libraries are interleaved within each
repetition, and the best run is kept; batch cells take more runs (``BATCH_RUNS`` says why).

Fairness: single texts run with the whole process pinned to one core; batches run pinned to
one core for the 1-thread column and to two for the 2-thread column (every thread of the
process, the peers' own pools included, see ``pin``), and each library is asked for that
many threads where it takes a number. Before timing, every library's ids are compared with
tiktoken's; ``≠`` marks a library whose ids differ, and it is left out of the ratios.

Peers are loaded offline: tiktoken, riptoken, gigatoken, fastokens and HF tokenizers from the
``.tiktoken`` files in ``--vocab-dir`` (default ``../shared/vocab``), wordchipper through its
disk cache pointed at those files, bpe-openai, toktok-rs and quicktok-v1 from the tables
compiled into or shipped with their wheels (they take no ``.tiktoken`` file; their ids are
checked against tiktoken's from the local file like everyone's). A peer that is not installed,
or cannot build an encoding offline, is skipped with a note. Then: linearity (bytepair at
n=10^5 and n=10^6 on each worst-case input), one long text on two threads, and start-up.

    python benchmarks/encode.py --corpus-dir /work/corpus
    python benchmarks/encode.py --quick          # 0.3 MB texts, 2 repeats
    pip install -e '.[bench]'                     # the peers
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# numpy's OpenBLAS starts a spinning thread per core at import; none of this needs it, and on a
# core shared with the library being timed it only takes turns (every library alike).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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


# The corpora that ../shared/corpus/make_corpus.py and scripts/more_corpora.py make (the
# parity tests' list, tests/support.py CORPORA): English prose, Python, German, Chinese,
# Ukrainian, Turkish, Vietnamese, Japanese, Russian.


def corpora(corpus_dir: Path | None, nbytes: int) -> dict[str, str]:
    """The first `nbytes` bytes (at a character boundary) of each corpus of the parity tests'
    list (tests/support.py CORPORA, the one place that names them)."""
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from support import CORPORA
    finally:
        sys.path.pop(0)
    out = {}
    if corpus_dir is None:
        return out
    for name in CORPORA:
        p = corpus_dir / f"{name}.txt"
        if p.exists():
            out[name] = p.read_bytes()[:nbytes].decode("utf-8", errors="ignore")
        else:
            print(f"note: {p} is missing (make_corpus.py or scripts/more_corpora.py makes it when its Debian package is installed)",
                  file=sys.stderr)
    return out


def documents(text: str, size: int = 4000) -> list[str]:
    """`text` cut into documents of about `size` bytes at line breaks (a line longer than that
    is a document of its own)."""
    docs, doc, n = [], [], 0
    for line in text.splitlines(keepends=True):
        doc.append(line)
        n += len(line.encode())
        if n >= size:
            docs.append("".join(doc))
            doc, n = [], 0
    if doc:
        docs.append("".join(doc))
    return docs


def pin(ncores: int) -> None:
    """Every thread of this process (the peers' pools included) to the first `ncores` cores;
    threads started later inherit it from the thread that starts them."""
    cpus = set(sorted(os.sched_getaffinity(0) | ALL_CPUS)[:ncores])
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:  # a thread that ended meanwhile
            pass


ALL_CPUS = set(os.sched_getaffinity(0))


# ------------------------------------------------------------------------------- libraries


class Skip(Exception):
    pass


class Peer:
    """One library on one encoding. `make()` builds an instance: a dict with any of
    'list' (text -> list[int]), 'numpy' (text -> array of ids), 'batch' ((docs, threads) ->
    list[list[int]]), 'flat' ((docs, threads) -> flat ids, the batch as one array).
    `keeps_state`: whether a cold run needs a fresh instance; `forget`: how to clear the state
    in place instead (bytepair, HF tokenizers)."""

    def __init__(self, make, keeps_state: bool, forget=None):
        self.make, self.keeps_state, self.forget = make, keeps_state, forget
        self.inst = make()

    def cold(self, kind: str):
        """The callable for a cold run: on a fresh instance when the library keeps state."""
        if self.forget is not None:
            self.forget(self.inst)
            return self.inst[kind]
        if self.keeps_state:
            self.inst = None
            gc.collect()
            self.inst = self.make()
        return self.inst[kind]


def lib_tiktoken(enc: str, vocab: Path) -> Peer:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(vocab / f"{enc}.tiktoken"))

    def make():
        e = tiktoken.Encoding(enc, pat_str=patterns()[enc], mergeable_ranks=ranks, special_tokens=SPECIALS[enc])
        return {"list": e.encode_ordinary, "numpy": lambda t: e.encode_to_numpy(t, disallowed_special=()),
                "batch": lambda d, n: e.encode_ordinary_batch(d, num_threads=n)}

    return Peer(make, keeps_state=False)  # its CoreBPE keeps nothing between calls


def lib_bytepair(enc: str, vocab: Path) -> Peer:
    import bytepair

    def make():
        e = bytepair.get_encoding(enc)
        return {"list": e.encode_ordinary, "numpy": lambda t: e.encode_to_numpy(t, disallowed_special=()),
                "batch": lambda d, n: e.encode_ordinary_batch(d, num_threads=n),
                # the ids array; the offsets come with it, as toktok-rs's and quicktok's do
                "flat": lambda d, n: e.encode_ordinary_batch_to_numpy(d, num_threads=n)[0], "enc": e}

    return Peer(make, keeps_state=True, forget=lambda inst: inst["enc"].clear_cache())


_WC_CACHE: str | None = None


def lib_wordchipper(enc: str, vocab: Path) -> Peer:
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

    def make():
        e = wct.get_encoding(enc)
        if len(e.encode_ordinary("hello world")) != 2:
            raise Skip("vocabulary did not load offline")
        # no thread count: its batch runs on its own pool, held to the cores by `pin`
        return {"list": e.encode_ordinary, "batch": lambda d, n: e.encode_ordinary_batch(d)}

    return Peer(make, keeps_state=False)


def lib_riptoken(enc: str, vocab: Path) -> Peer:
    import riptoken
    import tiktoken

    ranks = riptoken.load_tiktoken_bpe(str(vocab / f"{enc}.tiktoken"))

    def make():
        core = riptoken.CoreBPE(ranks, SPECIALS[enc], patterns()[enc])
        tk = tiktoken.Encoding(enc, pat_str=patterns()[enc], mergeable_ranks=ranks, special_tokens=SPECIALS[enc])
        e = riptoken.Encoding(core, tk)
        # no thread count: its batch runs on its own pool, held to the cores by `pin`
        return {"list": e.encode_ordinary, "batch": lambda d, n: e.encode_ordinary_batch(d)}

    return Peer(make, keeps_state=False)


def lib_bpe_openai(enc: str, vocab: Path) -> Peer:
    from bpe_openai import _bindings

    def make():
        backend = _bindings.tokenizer_for_encoding(enc)  # tables bundled in the package
        return {"list": backend.encode}

    return Peer(make, keeps_state=False)


def lib_hf(enc: str, vocab: Path) -> Peer:
    try:
        from transformers.convert_slow_tokenizer import TikTokenConverter
    except ImportError as e:
        raise Skip(f"needs transformers to convert the vocabulary ({e})") from None
    tok = TikTokenConverter(vocab_file=str(vocab / f"{enc}.tiktoken"), pattern=patterns()[enc]).converted()

    def make():
        return {"list": lambda t: tok.encode(t, add_special_tokens=False).ids,
                # its pool is sized by the cores it may use (`pin`)
                "batch": lambda d, n: [x.ids for x in tok.encode_batch(d, add_special_tokens=False)], "tok": tok}

    # BPE keeps a word cache; the model clears it in place
    return Peer(make, keeps_state=True, forget=lambda inst: inst["tok"].model._clear_cache())


def lib_fastokens(enc: str, vocab: Path) -> Peer:
    import numpy as np
    import fastokens

    path = str(vocab / f"{enc}.tiktoken")

    def make():
        e = fastokens.Tokenizer.from_tiktoken(path, pattern=patterns()[enc], special_tokens=SPECIALS[enc])

        def flat(d, n):
            ids, _ = e.encode_batch_flat(d)
            return np.frombuffer(ids, dtype="<u4")

        return {"list": lambda t: e.encode_ordinary(t).ids,
                "numpy": lambda t: np.frombuffer(e.encode_batch_flat([t])[0], dtype="<u4"),
                "batch": lambda d, n: [x.ids for x in e.encode_batch(d)], "flat": flat}

    # Its segment cache is off unless enabled (FASTOKENS_SEGMENT_CACHE), so a fresh
    # instance anyway: nothing else it keeps is documented.
    return Peer(make, keeps_state=True)


def lib_gigatoken(enc: str, vocab: Path) -> Peer:
    import gigatoken
    import numpy as np

    path = str(vocab / f"{enc}.tiktoken")

    def make():
        t = gigatoken.Tokenizer.from_tiktoken(path)  # pattern and specials from the file's name
        b = t._backend

        def flat(d, n):
            return np.asarray(b.encode_batch(d, parallel=n > 1).layout.content.data)

        return {"list": lambda s: b.encode(s).tolist(), "numpy": b.encode,
                "batch": lambda d, n: b.encode_batch_list(d, parallel=n > 1), "flat": flat}

    return Peer(make, keeps_state=True)  # a piece cache across calls


def lib_toktok(enc: str, vocab: Path) -> Peer:
    import toktok

    def make():
        # Takes only its own .vocab format (a data_dir of cl100k.vocab ...): the tables
        # compiled into the wheel.
        e = toktok._Tokenizer(enc, "")
        return {"list": e.encode_ordinary, "numpy": e.encode_to_numpy,
                "flat": lambda d, n: e.encode_batch_to_numpy(d, n)[0]}

    return Peer(make, keeps_state=True)  # a piece cache (pcache) across calls


def lib_quicktok(enc: str, vocab: Path) -> Peer:
    import quicktok

    def make():
        # Takes only its own .vocab format: the files shipped in the wheel.
        e = quicktok.Tokenizer(enc, "")
        return {"list": e.encode_ordinary, "numpy": lambda t: e.encode_batch([t], 1)[0],
                "flat": lambda d, n: e.encode_batch(d, n)[0]}

    return Peer(make, keeps_state=True)  # nothing documented either way: fresh, to be safe


LIBS = {
    "tiktoken": lib_tiktoken,
    "bytepair": lib_bytepair,
    "fastokens": lib_fastokens,
    "toktok-rs": lib_toktok,
    "gigatoken": lib_gigatoken,
    "quicktok-v1": lib_quicktok,
    "wordchipper": lib_wordchipper,
    "riptoken": lib_riptoken,
    "bpe-openai": lib_bpe_openai,
    "HF tokenizers": lib_hf,
}
MODULE = {"tiktoken": "tiktoken", "bytepair": "bytepair", "wordchipper": "wordchipper",
          "riptoken": "riptoken", "bpe-openai": "bpe_openai", "HF tokenizers": "tokenizers",
          "fastokens": "fastokens", "toktok-rs": "toktok", "gigatoken": "gigatoken", "quicktok-v1": "quicktok"}


def load_libs(enc: str, vocab: Path, skip: set[str], notes: list[str]) -> dict[str, Peer]:
    import importlib.util

    libs = {}
    for name, make in LIBS.items():
        if name in skip:
            continue
        if importlib.util.find_spec(MODULE[name]) is None:
            notes.append(f"{name}: not installed, skipped (pip install -e '.[bench]')")
            continue
        try:
            libs[name] = make(enc, vocab)
            libs[name].inst["list"]("hello world")
            # Each library's thread pool is built now, on every core: a pool built lazily
            # while `pin` holds the process to one core is sized for one core for good
            # (rayon and bytepair read the cores they may use once), and its two-thread runs
            # would be one-thread runs.
            for kind in ("batch", "flat"):
                if kind in libs[name].inst:
                    libs[name].inst[kind](["hello world"] * 64, 2)
        except Skip as e:
            notes.append(f"{name} ({enc}): skipped: {e}")
            libs.pop(name, None)
        except Exception as e:  # a peer that cannot build this encoding offline
            notes.append(f"{name} ({enc}): skipped: {type(e).__name__}: {str(e)[:120]}")
            libs.pop(name, None)
    if "tiktoken" not in libs:
        sys.exit("tiktoken is the reference and must load")
    return libs


# ------------------------------------------------------------------------------- measuring


def timed(f, *args) -> float:
    """Seconds of one call of `f`. The result is freed after the clock stops: freeing a list of
    lists is the caller's work when it drops it, on one thread whatever the call's threads
    (perf: `list_dealloc` 4.9% of a loop of one-thread batches of lists, o200k English), and
    timed here that serial share alone caps any library's two threads at about 1.9x one."""
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = f(*args)
        t = time.perf_counter() - t0
        del out
        return t
    finally:
        gc.enable()


def as_ids(out) -> list[int]:
    """A list, an array, or a batch's list of lists as one flat list."""
    if isinstance(out, list) and out and isinstance(out[0], list):
        return [i for ids in out for i in ids]
    return [int(i) for i in out] if not isinstance(out, list) else out


def first_diff(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


# A cell: (kind, threads). kind: list / numpy (one text), batch / flat (the documents).
CELLS = [("list", 1), ("numpy", 1), ("batch", 1), ("batch", 2), ("flat", 1), ("flat", 2)]

# Batch cells take the best of at least this many runs, cold and warm. Why: a batch of 1 MB is
# 1-6 ms of bytepair's time, and on this kind of 2-core VM a pool thread woken for it waited
# runnable 1.5-4.2 ms (about a scheduler tick) in 15 of 28 calls that followed the other
# libraries' work (schedstat read around each call), none of 4 of our calls back to back;
# fastokens' worker waited the same. A best of 2 or 3 still caught a late run often enough to
# put a two-thread row below its one-thread row (docs/engine-experiments.md, eighteenth pass).
BATCH_RUNS = (3, 5)


def measure(libs: dict[str, Peer], text: str, docs: list[str], repeat: int, cold_repeat: int,
            notes: list[str]) -> dict:
    """{(kind, threads): {lib: (status, cold MB/s, warm MB/s)}} for one corpus."""
    nbytes = len(text.encode("utf-8"))
    out = {}
    for kind, threads in CELLS:
        arg = (text,) if kind in ("list", "numpy") else (docs, threads)
        pin(threads)
        names = [n for n, p in libs.items() if kind in p.inst]
        status, cold, warm = {}, {}, {}
        ref = None
        for n in names:  # tiktoken first: it is the reference
            try:
                got = as_ids(libs[n].inst[kind](*arg))
            except BaseException as e:  # a peer's Rust panic arrives as PanicException
                if isinstance(e, KeyboardInterrupt):
                    raise
                status[n] = f"error: {type(e).__name__}: {str(e)[:60]}"
                continue
            if ref is None:
                ref = got if n == "tiktoken" else as_ids(libs["tiktoken"].inst["list" if kind in ("list", "numpy") else "batch"](*arg))
            status[n] = "same" if got == ref else f"differs at {first_diff(got, ref)}"
        live = [n for n in names if status.get(n) == "same" or status.get(n, "").startswith("differs")]
        cold_runs, warm_runs = (cold_repeat, repeat) if kind in ("list", "numpy") else \
            (max(cold_repeat, BATCH_RUNS[0]), max(repeat, BATCH_RUNS[1]))
        for _ in range(cold_runs):
            for n in live:
                f = libs[n].cold(kind)
                t = timed(f, *arg)
                cold[n] = min(cold.get(n, t), t)
        for n in live:  # the warm-up of the warm runs: the instance the last cold run used
            libs[n].inst[kind](*arg)
        for _ in range(warm_runs):
            for n in live:
                t = timed(libs[n].inst[kind], *arg)
                warm[n] = min(warm.get(n, t), t)
        out[(kind, threads)] = {n: (status[n], nbytes / cold[n] / 1e6 if n in cold else None,
                                    nbytes / warm[n] / 1e6 if n in warm else None) for n in status}
    pin(len(ALL_CPUS))
    return out


def tables(enc: str, results: dict[str, dict], order: list[str]) -> str:
    """Per output kind and cold/warm, one table: a row per corpus (and thread count), a column
    per library, then bytepair over the fastest peer whose ids are tiktoken's."""
    sections = [("list", "one text, `encode_ordinary` to a list"), ("numpy", "one text, to a numpy array"),
                ("batch", "batch of ~4 KB documents, a list of lists"),
                ("flat", "batch of ~4 KB documents, one flat array (bytepair: "
                         "`encode_ordinary_batch_to_numpy`, ids and offsets)")]
    parts = []
    for kind, title in sections:
        merged: dict = {}
        for corpus, r in results.items():
            for (kind_, threads), v in r.items():
                if kind_ == kind:
                    merged.setdefault((corpus, threads), {}).update(v)
        cols = [n for n in order if any(n in v for v in merged.values())]
        if len(cols) < 2:
            continue
        batch = kind in ("batch", "flat")
        for temp, k in (("cold", 1), ("warm", 2)):
            head = ["corpus"] + (["threads"] if batch else []) + cols + ["bytepair / fastest exact peer", "ids vs tiktoken"]
            lines = [f"#### {enc}, {title}, {temp} (MB/s)", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for (corpus, threads), v in merged.items():
                cells = [corpus] + ([str(threads)] if batch else [])
                speeds = {}
                for n in cols:
                    st, *mbs = v.get(n, ("n/a", None, None))
                    s = mbs[k - 1]
                    if s is None:
                        cells.append("error" if st.startswith("error") else "n/a")
                        continue
                    cells.append(f"{s:.1f}" + ("" if st == "same" else " ≠"))
                    speeds[n] = (s, st)
                bp = speeds.get("bytepair")
                others = [(s, n) for n, (s, st) in speeds.items() if n != "bytepair" and st == "same"]
                if bp and others:
                    s, n = max(others)
                    cells.append(f"{bp[0] / s:.2f}x ({n})")
                else:
                    cells.append("n/a")
                differs = [f"{n} {x[0]}" for n, x in v.items() if x[0] != "same"]
                cells.append("all identical" if not differs else "; ".join(differs))
                lines.append("| " + " | ".join(cells) + " |")
            if kind == "batch":
                ratios = []
                for (corpus, threads), v in merged.items():
                    one, two = v.get("bytepair"), merged.get((corpus, 2), {}).get("bytepair")
                    if threads == 1 and one and two and one[k] and two[k]:
                        ratios.append(f"{corpus} {two[k] / one[k]:.2f}x")
                if ratios:
                    lines += ["", "bytepair, 2 threads / 1 thread: " + ", ".join(ratios)]
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def keep(names, only: list[str]):
    """The names that contain one of `only` (all of them when `only` is empty)."""
    return [n for n in names if not only or any(o in n for o in only)]


def linearity(repeat: int) -> str:
    import bytepair

    lines = ["### Linearity: bytepair encode_ordinary, time(n=10^6) / time(n=10^5) (goal <= 12)", "",
             "| input | cl100k 10^5 ms | cl100k 10^6 ms | ratio | o200k 10^5 ms | o200k 10^6 ms | ratio |",
             "|---|---|---|---|---|---|---|"]
    small, big = worst_cases(10**5), worst_cases(10**6)
    encs = [bytepair.get_encoding(e) for e in ENCODINGS]
    for label in small:
        cells = [label]
        for e in encs:
            # Both are short (milliseconds), so a busy moment skews one run easily: best of
            # many. The small input is timed more often: its best run is the noisier one.
            def cold(text, e=e):
                e.clear_cache()
                return timed(e.encode_ordinary, text)

            ts = [min(cold(small[label]) for _ in range(8 * repeat)),
                  min(cold(big[label]) for _ in range(3 * repeat))]
            cells += [f"{ts[0] * 1e3:.1f}", f"{ts[1] * 1e3:.1f}", f"{ts[1] / ts[0]:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
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


def parallel_text(corpus_dir: Path | None, repeat: int) -> str:
    """One long text (en.txt) split at safe points, `encode_ordinary_parallel` on 2 threads
    against `encode_ordinary` on one."""
    import bytepair

    path = corpus_dir / "en.txt" if corpus_dir else None
    if not path or not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    lines = ["### One long text (en.txt) split at safe points, `encode_ordinary_parallel` against "
             "`encode_ordinary`, cold", "", "| encoding | 1 thread MB/s | 2 threads MB/s | ratio |", "|---|---|---|---|"]
    n = len(text.encode()) / 1e6
    for name in ENCODINGS:
        enc = bytepair.get_encoding(name)
        if enc.encode_ordinary_parallel(text, num_threads=2) != enc.encode_ordinary(text):
            raise SystemExit(f"{name}: encode_ordinary_parallel differs from encode_ordinary")
        t1 = t2 = float("inf")
        for _ in range(repeat):
            pin(1)
            enc.clear_cache()
            t1 = min(t1, timed(enc.encode_ordinary, text))
            pin(2)
            enc.clear_cache()
            t2 = min(t2, timed(lambda t: enc.encode_ordinary_parallel(t, num_threads=2), text))
        lines.append(f"| {name} | {n / t1:.1f} | {n / t2:.1f} | {t1 / t2:.2f}x |")
    pin(len(ALL_CPUS))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get("BYTEPAIR_CORPUS_DIR")
    ap.add_argument("--corpus-dir", type=Path, default=Path(env) if env else None)
    ap.add_argument("--vocab-dir", type=Path, default=DEFAULT_VOCAB)
    ap.add_argument("--encodings", default=",".join(ENCODINGS))
    ap.add_argument("--repeat", type=int, default=3, help="warm: best of this many runs")
    ap.add_argument("--cold-repeat", type=int, default=2,
                    help="cold: best of this many runs (each on a fresh instance of a peer that keeps state)")
    ap.add_argument("--text-mb", type=float, default=1.5, help="MB of each corpus encoded as one text")
    ap.add_argument("--batch-mb", type=float, default=1.0, help="MB of each corpus cut into ~4 KB documents")
    ap.add_argument("--skip", default="", help="comma-separated libraries to leave out")
    ap.add_argument("--inputs", default="", help="comma-separated parts of corpus names to keep, e.g. 'en,zh'")
    ap.add_argument("--text", action="append", default=[], metavar="NAME=PATH",
                    help="one more text to measure under NAME, e.g. one of benchmarks/wordlist_text.py's")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--startup-only", action="store_true", help="only the start-up table (no corpora needed)")
    ap.add_argument("--no-linearity", action="store_true")
    ap.add_argument("--quick", action="store_true", help="0.3 MB texts and batches, 2 repeats")
    a = ap.parse_args()
    if a.quick:
        a.text_mb, a.batch_mb, a.repeat, a.cold_repeat = 0.3, 0.3, 2, 1
    if not a.vocab_dir.exists():
        sys.exit(f"no vocabularies at {a.vocab_dir} (pass --vocab-dir)")
    print(f"# bytepair encode benchmark\n\n`{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
    if a.startup_only:
        print(startup(a.vocab_dir, 5))
        return
    import numpy

    print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, {os.cpu_count()} cpus. MB = 10^6 bytes "
          f"of UTF-8. One text: the first {a.text_mb} MB of each corpus, pinned to one core. Batches: the first "
          f"{a.batch_mb} MB cut into ~4 KB documents, pinned to as many cores as threads. Cold: best of "
          f"{a.cold_repeat}, warm: best of {a.repeat} (batches: at least {BATCH_RUNS[0]} and {BATCH_RUNS[1]}, "
          "see `BATCH_RUNS`); libraries interleaved. ≠ marks ids that differ from "
          "tiktoken's.\n")
    only = [s.strip() for s in a.inputs.split(",") if s.strip()]
    texts = corpora(a.corpus_dir, int(a.text_mb * 1e6))
    for spec in a.text:
        name, sep, path = spec.partition("=")
        if not sep or not name or not Path(path).is_file():
            sys.exit(f"--text {spec!r}: expected NAME=PATH of an existing file")
        texts[name] = Path(path).read_bytes()[: int(a.text_mb * 1e6)].decode("utf-8", errors="ignore")
    texts = {k: v for k, v in texts.items() if k in keep(texts, only)}
    if not texts:
        sys.exit("no corpora: set BYTEPAIR_CORPUS_DIR or pass --corpus-dir")
    docs = {k: documents(v.encode()[: int(a.batch_mb * 1e6)].decode("utf-8", errors="ignore")) for k, v in texts.items()}
    notes: list[str] = []
    loads: list[float] = []
    t_start = time.perf_counter()
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    for enc in a.encodings.split(","):
        libs = load_libs(enc, a.vocab_dir, skip, notes)
        results = {}
        for corpus, text in texts.items():
            loads.append(os.getloadavg()[0])
            results[corpus] = measure(libs, text, docs[corpus], a.repeat, a.cold_repeat, notes)
            print(f"({enc} {corpus} done, {time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
        print(f"### {enc}\n\n" + tables(enc, results, list(libs)) + "\n", flush=True)
        del libs
        gc.collect()
    notes.append("keeps state between calls, so timed cold on a fresh instance: "
                 + ", ".join(n for n in LIBS if n not in ("tiktoken", "wordchipper", "riptoken", "bpe-openai", "bytepair", "HF tokenizers"))
                 + "; cleared in place: bytepair (`clear_cache`), HF tokenizers (`model._clear_cache`); "
                 "no state, cold = warm instance: tiktoken, wordchipper, riptoken, bpe-openai")
    notes.append("toktok-rs, quicktok-v1 and bpe-openai take no .tiktoken file: their own tables, shipped in "
                 "their wheels, are used (ids checked against tiktoken's from the local file)")
    loads.append(os.getloadavg()[0])
    notes.append(f"1-minute load average at each corpus's start: {', '.join(f'{x:.1f}' for x in loads)} "
                 f"(this machine has {os.cpu_count()} cores: above that, other work shared them and the "
                 "two-thread rows in particular are low)")
    print("Notes:\n" + "\n".join(f"- {n}" for n in dict.fromkeys(notes)) + "\n")
    if not a.no_linearity:
        print(linearity(max(3, a.repeat)) + "\n", flush=True)
    print(parallel_text(a.corpus_dir, a.repeat) + "\n", flush=True)
    if not a.no_startup:
        print(startup(a.vocab_dir, 5))


if __name__ == "__main__":
    main()
