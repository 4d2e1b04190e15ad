"""The README's examples run: every ```python block, and every `bytepair ...` command line."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _commands() -> list[str]:
    cmds = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("bytepair ") or line.startswith("echo "):
                cmds.append(line)
    return cmds


@pytest.mark.parametrize("code", _blocks("python"), ids=lambda c: c.splitlines()[0][:40])
def test_python_example(code):
    exec(compile(code, str(README), "exec"), {})


def test_readme_has_examples():
    assert _blocks("python") and _commands()


@pytest.mark.parametrize("line", _commands())
def test_command_example(line):
    # Run through the installed console script's module, from the repo root (README paths).
    bin_dir = Path(sys.executable).parent
    env_line = line.replace("bytepair ", f"{shlex.quote(sys.executable)} -m bytepair ")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # the tree under test, when it is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    proc = subprocess.run(env_line, shell=True, cwd=README.parent, capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), f"{line!r} printed nothing"
