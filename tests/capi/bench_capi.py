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

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ("en", "code", "de", "zh-fortunes", "uk", "tr", "vi")
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
        print(f"{'encoding':12} {'corpus':12} {'C MB/s':>8} {'Py MB/s':>8} {'C/Py':>6} {'C load ms':>9}")
        for name in ("cl100k_base", "o200k_base"):
            enc = bytepair.get_encoding(name)
            for c in CORPORA:
                text = (corpus_dir / f"{c}.txt").read_text(encoding="utf-8")
                data = text.encode("utf-8")
                path = Path(d) / f"{c}.txt"
                path.write_bytes(data)
                out = subprocess.run([exe, "bench", f"builtin:{name}", str(path), str(REPS)], check=True,
                                     capture_output=True, text=True).stdout.split()
                c_load, c_mbs, c_ids = float(out[1]), float(out[3]), int(out[5])
                best = float("inf")
                for _ in range(REPS):
                    t = time.perf_counter()
                    ids = enc.encode(text)
                    best = min(best, time.perf_counter() - t)
                assert len(ids) == c_ids, (name, c, len(ids), c_ids)
                py = len(data) / best / 1e6
                print(f"{name:12} {c:12} {c_mbs:8.1f} {py:8.1f} {c_mbs / py:6.2f} {c_load:9.1f}")


if __name__ == "__main__":
    main()
