"""A short coverage-guided run of every cargo-fuzz target (libFuzzer), as issue 15 asks of the
test command: each target starts from its committed seeds and regressions and mutates them for
a fixed number of executions, with the limits of docs/fuzzing.md (an input over 2 s or 2 GB
RSS is a finding).

The run is made repeatable: a fixed libFuzzer seed and a fixed count of executions, so CI
does not fail on a lucky mutation one day and pass the next; the long, random runs are
`fuzz/run.sh` (docs/fuzzing.md reports them). New inputs go to a temporary folder, never into
the committed seeds. Needs rustup's nightly toolchain and cargo-fuzz, which .ci/run installs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from support import REPO, require

FUZZ = REPO / "fuzz"
TARGETS = sorted(p.stem for p in (FUZZ / "fuzz_targets").glob("*.rs"))
# Executions per target, the seeds' first runs included: seconds for most targets; `capi`, the
# slowest (about 140 inputs a second under AddressSanitizer, cargo-fuzz's default), about 7 s.
RUNS = 1000


def _cargo_fuzz() -> list[str]:
    cargo = shutil.which("cargo")
    require(cargo is not None, "cargo (the Rust toolchain that builds bytepair)")
    toolchains = subprocess.run(["rustup", "toolchain", "list"], capture_output=True, text=True).stdout \
        if shutil.which("rustup") else ""
    require("nightly" in toolchains, "rustup's nightly toolchain (cargo-fuzz builds with it)")
    have = subprocess.run([cargo, "+nightly", "fuzz", "--version"], capture_output=True, text=True)
    require(have.returncode == 0, "cargo-fuzz (`cargo install cargo-fuzz`)")
    return [cargo, "+nightly", "fuzz"]


@pytest.fixture(scope="module")
def fuzz_build():
    """Builds every target once (the first build takes minutes: libFuzzer, sanitizer)."""
    cmd = _cargo_fuzz()
    run = subprocess.run([*cmd, "build"], cwd=FUZZ, capture_output=True, text=True)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    return cmd


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_short_run(fuzz_build, target, tmp_path):
    seeds = [str(FUZZ / "corpus" / target)]
    if (FUZZ / "regressions" / target).is_dir():
        seeds.append(str(FUZZ / "regressions" / target))
    run = subprocess.run(
        [*fuzz_build, "run", target, str(tmp_path), *seeds, "--",
         f"-runs={RUNS}", "-seed=1", "-max_len=32768", "-timeout=2", "-rss_limit_mb=2048",
         f"-artifact_prefix={tmp_path}/", "-print_final_stats=1"],
        cwd=FUZZ, capture_output=True, text=True, env=dict(os.environ))
    log = run.stderr
    assert run.returncode == 0, f"{target} failed; the input is under {tmp_path}\n" + log[-6000:]
    done = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    assert done and int(done.group(1)) >= RUNS, log[-3000:]
