"""The type stubs of the compiled module agree with it (mypy's stubtest, as pydantic-core does)."""

from __future__ import annotations

import subprocess
import sys


def test_core_stubs_match_the_compiled_module():
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "bytepair._core"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
