"""MB/s of the C path (bp_encode, from tests/capi/test_capi.c's ``bench``) against the Python
path (``Encoding.encode``) on the corpora, and the C load time. Not a test: run it by hand
after ``cargo build --release -p bytepair-capi`` (numbers go in docs/c-api.md):

    BYTEPAIR_CORPUS_DIR=corpus python tests/capi/bench_capi.py [cc-compiled test_capi]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bytepair
from bytepair.registry import openai


def _mistral_model() -> Path | None:
    """mistral-common's Mistral 7B v0.1 SentencePiece model, if installed."""
    import importlib.util

    spec = importlib.util.find_spec("mistral_common")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "tokenizer.model.v1"
    return path if path.is_file() else None

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from support import CORPORA  # noqa: E402  (the one list of corpora)
REPS = 5


def main() -> None:
    corpus_dir = Path(os.environ.get("BYTEPAIR_CORPUS_DIR", ROOT / "corpus"))
    libdir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
    with tempfile.TemporaryDirectory() as d:
        exe = sys.argv[1] if len(sys.argv) > 1 else str(Path(d) / "test_capi")
        if len(sys.argv) < 2:
            subprocess.run(["cc", "-std=c11", "-O2", "-pthread", f"-I{ROOT / 'include'}", str(ROOT / "tests/capi/test_capi.c"),
                            "-o", exe, str(libdir / "libbytepair.a"), "-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"],
                           check=True)
        print(f"{'encoding':12} {'corpus':12} {'C MB/s':>8} {'Py MB/s':>8} {'C/Py':>6} {'C load ms':>9} {'Py load ms':>10}")
        models = [(name, f"builtin:{name}", lambda name=name: getattr(openai, name)()) for name in ("cl100k_base", "o200k_base")]
        sp = _mistral_model()
        if sp is not None:
            models.append(("mistral-v1", str(sp), lambda: bytepair.load(sp)))
        for name, spec, make in models:
            t = time.perf_counter()
            enc = make()
            py_load = (time.perf_counter() - t) * 1e3
            for c in CORPORA:
                text = (corpus_dir / f"{c}.txt").read_text(encoding="utf-8")
                data = text.encode("utf-8")
                path = Path(d) / f"{c}.txt"
                path.write_bytes(data)
                out = subprocess.run([exe, "bench", spec, str(path), str(REPS)], check=True,
                                     capture_output=True, text=True).stdout.split()
                c_load, c_mbs, c_ids = float(out[1]), float(out[3]), int(out[5])
                best = float("inf")
                for _ in range(REPS):
                    t = time.perf_counter()
                    ids = enc.encode(text)
                    best = min(best, time.perf_counter() - t)
                assert len(ids) == c_ids, (name, c, len(ids), c_ids)
                py = len(data) / best / 1e6
                print(f"{name:12} {c:12} {c_mbs:8.1f} {py:8.1f} {c_mbs / py:6.2f} {c_load:9.1f} {py_load:10.1f}")


if __name__ == "__main__":
    main()
