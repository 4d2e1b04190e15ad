"""The Rust core's own tests, run from this suite so that the README's one test command covers
them: the hand-written scanners against fancy-regex (every code point's classes, edge cases,
generated text), the 64-byte block pre-tokenizer against the scalar scanners, the merge
engines against the definition on random tables, the vocabulary indexes and the file readers
(`cargo test -p bytepair-core`, crates/core/src/**/tests).

The tests that read real data get the same folders as this suite (BYTEPAIR_VOCAB_DIR,
BYTEPAIR_CORPUS_DIR); like `support.require`, they skip when it is missing here and fail in CI
(CI is passed on with the rest of the environment)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from support import CORPUS_DIR, REPO, VOCAB_DIR, require


def test_rust_core_suite():
    cargo = shutil.which("cargo")
    require(cargo is not None, "cargo (the Rust toolchain that builds bytepair)")
    env = {**os.environ, "BYTEPAIR_VOCAB_DIR": str(VOCAB_DIR), "BYTEPAIR_CORPUS_DIR": str(CORPUS_DIR)}
    run = subprocess.run([cargo, "test", "--release", "-p", "bytepair-core"], cwd=REPO,
                         capture_output=True, text=True, env=env)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", out))
    # The core has dozens of tests; a harness that found none would pass vacuously.
    assert passed >= 50, out[-3000:]
