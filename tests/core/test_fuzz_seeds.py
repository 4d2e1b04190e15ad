"""The cargo-fuzz targets' bodies over their committed inputs, as an ordinary test: the seed
corpora (fuzz/corpus/<target>) and every input a fuzzer once failed on (fuzz/regressions/
<target>). `cargo test --no-default-features` in fuzz/ builds the bodies without libFuzzer, on
stable Rust, so CI replays them with no nightly toolchain or cargo-fuzz (docs/fuzzing.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from support import REPO, require

#: fuzz/fuzz_targets/*.rs; fuzz/tests/seeds.rs must have one test each (the count passed says so).
TARGETS = sorted(p.stem for p in (REPO / "fuzz" / "fuzz_targets").glob("*.rs"))


def test_fuzz_targets_replay_their_seeds_and_regressions():
    cargo = shutil.which("cargo")
    require(cargo is not None, "cargo (the Rust toolchain that builds bytepair)")
    assert TARGETS, "no fuzz targets found under fuzz/fuzz_targets"
    run = subprocess.run([cargo, "test", "--manifest-path", str(REPO / "fuzz" / "Cargo.toml"), "--no-default-features"],
                         cwd=REPO, capture_output=True, text=True, env=dict(os.environ))
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    assert re.search(rf"test result: ok\. {len(TARGETS)} passed", out), out[-3000:]
