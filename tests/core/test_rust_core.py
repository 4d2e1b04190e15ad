"""The Rust core's own tests, run from this suite so that the README's one test command covers
them: the hand-written scanners against fancy-regex (every code point's classes, edge cases,
generated text), the 64-byte block pre-tokenizer against the scalar scanners, the merge
engines against the definition on random tables, the vocabulary indexes and the file readers
(`cargo test -p bytepair-core`, crates/core/src/**/tests)."""

from __future__ import annotations

import re
import shutil
import subprocess

from support import REPO, require


def test_rust_core_suite():
    cargo = shutil.which("cargo")
    require(cargo is not None, "cargo (the Rust toolchain that builds bytepair)")
    run = subprocess.run([cargo, "test", "--release", "-p", "bytepair-core"], cwd=REPO,
                         capture_output=True, text=True)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", out))
    # The core has dozens of tests; a harness that found none would pass vacuously.
    assert passed >= 50, out[-3000:]
