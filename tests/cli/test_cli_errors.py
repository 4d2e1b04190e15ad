"""Every user mistake on the command line: one line on stderr, the documented exit code
(docs/cli.md, "Exit codes"), never a traceback, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bytepair import pricing
from bytepair.cli import main
from bytepair.errors import PricesError

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
BUNDLED_TABLE = str(Path(pricing.__file__).parent / "data" / "cl100k_base.bpe2")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "notes.txt").write_text("plain text, not a vocabulary\n")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "bad_prices.json").write_text(json.dumps(
        {"gpt-4o": {"mode": "chat", "input_cost_per_token": "cheap"}}))
    (tmp_path / "not_json.json").write_text("{oops")
    (tmp_path / "dir").mkdir()
    return tmp_path


# (arguments, stdin, exit code, a phrase the one line must hold). {d} is the files folder.
CASES = [
    # usage: 2
    (["count", "{d}/missing.txt"], None, 2, "--text"),
    (["count", "-e", "o200k"], "x", 2, "did you mean o200k_base"),
    (["count", "-e", "nope"], "x", 2, "known: "),
    (["count", "-m", "gpt4o"], "x", 2, "did you mean gpt-4o"),
    (["count", "-m", "no-such-model"], "x", 2, "-e"),
    (["count", "-e", "cl100k_base", "-m", "gpt-4"], "x", 2, "not both"),
    (["count", "--vocab", "{d}/missing.tiktoken"], "x", 2, "no such file"),
    (["count", "--bogus"], None, 2, "No such option"),
    (["count", "--truncate", "3", "{d}/notes.txt", "{d}/notes.txt"], None, 2, "one input"),
    (["count", "--messages", "{d}/notes.txt"], None, 2, "-m MODEL"),
    (["nosuchcommand"], None, 2, "No such command"),
    (["decode", "abc"], None, 2, "'abc' (id number 1) is not a token id"),
    (["decode", "--", "-5"], None, 2, "negative"),
    (["show", "{d}/notes.txt", "{d}/notes.txt"], None, 2, "one input"),
    (["compare", "text", "-e", "cl100k_base"], None, 2, "two or more"),
    (["cost", "--text", "hi", "-m", "gpt4o"], None, 2, "did you mean gpt-4o"),
    (["cost", "--text", "hi"], None, 2, "-m"),
    (["inspect", "{d}/missing.json"], None, 2, "does not exist"),
    # input or output unusable: 1
    (["count", "--vocab", "{d}/notes.txt"], "x", 1, "not a known vocabulary format"),
    (["count", "{d}/latin1.txt"], None, 1, "not UTF-8 (byte 3"),
    (["count", "--messages", "{d}/not_json.json", "-m", "gpt-4o"], None, 1, "not JSON"),
    (["count", "--messages", "{d}/notes.txt", "-m", "o3"], None, 1, "not JSON"),
    (["decode", "-e", "cl100k_base", "99999999"], None, 1, "99999999 is not in the vocabulary"),
    (["inspect", "{d}/notes.txt"], None, 1, "not a known vocabulary format"),
    (["inspect", "{d}/blob.bin"], None, 1, "not a known vocabulary format"),
    (["convert", BUNDLED_TABLE, "{d}/missing/dir/out.json"], None, 1, "does not exist"),
    (["train", "{d}/notes.txt", "-n", "300", "-o", "{d}/missing/x.bpe2"], None, 1, "does not exist"),
    (["show", "{d}/blob.bin"], None, 1, "binary"),
    (["cost", "--text", "hi", "-m", "gpt-4o", "--prices", "{d}/bad_prices.json"], None, 1,
     "input_cost_per_token must be a number"),
    (["cost", "--text", "hi", "-m", "gpt-4o", "--prices", "{d}/not_json.json"], None, 1, "not JSON"),
    (["cost", "--text", "hi", "-m", "gpt-4", "--cached-tokens", "5"], None, 1,
     "no cache_read_input_token_cost"),
]


@pytest.mark.parametrize("args, stdin, code, phrase", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_mistake_is_one_line_and_an_exit_code(files, args, stdin, code, phrase):
    args = [a.replace("{d}", str(files)) for a in args]
    before = sorted(p.name for p in files.rglob("*"))
    r = CliRunner().invoke(main, args, input=stdin, catch_exceptions=False)
    assert r.exit_code == code, (r.exit_code, r.stderr, r.stdout)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("bytepair"), lines[0]
    assert phrase in lines[0], lines[0]
    assert "Traceback" not in r.output
    assert sorted(p.name for p in files.rglob("*")) == before  # nothing written, not even half


def test_prices_update_without_network_changes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path))

    def offline(url):
        raise PricesError(f"cannot download {url} (no network); the prices in use are unchanged")

    monkeypatch.setattr(pricing, "_download", offline)
    r = CliRunner().invoke(main, ["prices", "update"])
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines() == [
        f"bytepair prices update: cannot download {pricing.UPDATE_URL} (no network); the prices in "
        "use are unchanged"]
    assert list(tmp_path.iterdir()) == []


def test_partial_run_exits_3_and_names_what_it_skipped(files):
    r = CliRunner().invoke(main, ["count", str(files / "notes.txt"), str(files / "latin1.txt")])
    assert r.exit_code == 3
    assert r.stderr.strip() == f"warning: skipped {files / 'latin1.txt'}: not UTF-8 (byte 3: invalid continuation byte)"
    assert "notes.txt" in r.stdout and "total" in r.stdout


def test_internal_error_is_one_line_with_exit_70(monkeypatch):
    import bytepair.cli.encode as encode

    def broken(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(encode, "encode_text", broken)
    monkeypatch.delenv("BYTEPAIR_TRACEBACK", raising=False)
    r = CliRunner().invoke(main, ["encode", "--text", "x"])
    assert r.exit_code == 70
    assert r.stderr.strip().splitlines() == [
        "bytepair encode: internal error: ZeroDivisionError: boom (please report it; "
        "BYTEPAIR_TRACEBACK=1 shows the traceback)"]
