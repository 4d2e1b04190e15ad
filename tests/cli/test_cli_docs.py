"""docs/cli.md and `--help` keep up with the commands: every command is documented, every help
text ends with an example, every exit code is in the table, and what the CLI and the README's
examples import is a dependency of `pip install .`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bytepair.cli import app, main

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def commands(group=main, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        path = prefix + (name,)
        yield path
        if isinstance(cmd, click.Group):
            yield from commands(cmd, path)


@pytest.mark.parametrize("path", list(commands()), ids=" ".join)
def test_help_shows_an_example(path):
    r = CliRunner().invoke(main, [*path, "--help"])
    assert r.exit_code == 0
    assert re.search(r"Examples?:\n +(\S+ .*\| )?bytepair ", r.stdout), r.stdout


@pytest.mark.parametrize("path", list(commands()), ids=" ".join)
def test_every_command_is_in_docs(path):
    assert f"bytepair {' '.join(path)}" in DOC


def test_every_exit_code_is_documented():
    codes = {v for k, v in vars(app).items() if k.startswith("EXIT_")}
    assert codes == {0, 1, 2, 3, 70, 130}
    for code in codes:
        assert re.search(rf"^\| {code} \|", DOC, flags=re.M), code


def test_runtime_imports_are_dependencies():
    """The README's install is `pip install .`: its examples (token_bytes needs numpy) and the
    CLI (pathspec walks directories, tqdm draws progress) must run with only the dependencies."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", d)[0].lower() for d in deps}
    assert {"click", "numpy", "pathspec", "tqdm"} <= names
