"""The command line, through click's runner and as a real console script."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main
from support import require


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


def test_count_file_and_stdin(run, tmp_path):
    p = tmp_path / "a.txt"
    text = "Counting tokens in a file.\n<|endoftext|> is plain text here.\n"
    p.write_text(text)
    enc = bytepair.get_encoding("cl100k_base")
    want = len(enc.encode(text, disallowed_special=()))
    assert run("count", "-e", "cl100k_base", str(p)).output.strip() == str(want)
    assert run("count", "-e", "cl100k_base", input=text).output.strip() == str(want)
    special = run("count", "-e", "cl100k_base", "--special", str(p)).output.strip()
    assert special == str(len(enc.encode(text, allowed_special="all")))


def test_count_many_files_prints_total(run, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one two three")
    b.write_text("four five")
    enc = bytepair.get_encoding("o200k_base")
    out = run("count", str(a), str(b)).output
    total = enc.count("one two three") + enc.count("four five")
    assert f"{total:,}  total (o200k_base)" in out


def test_encode_decode_round_trip(run):
    text = "Grüße aus Köln 👋"
    ids = run("encode", "-m", "gpt-4o", input=text).output.split()
    assert [int(i) for i in ids] == bytepair.get_encoding("o200k_base").encode(text)
    assert run("decode", "-m", "gpt-4o", *ids).output == text
    json_ids = run("encode", "--json", "-e", "cl100k_base", input=text).output
    assert run("decode", "-e", "cl100k_base", input=json_ids).output == text


def test_errors_are_messages_not_tracebacks(run, tmp_path):
    r = CliRunner().invoke(main, ["count", "-e", "nope", "-"], input="x")
    assert r.exit_code == 2 and "known: " in r.output and "cl100k_base" in r.output
    r = CliRunner().invoke(main, ["count", "-m", "no-such-model", "-"], input="x")
    assert r.exit_code != 0 and "no-such-model" in r.output
    r = CliRunner().invoke(main, ["decode", "-e", "cl100k_base", "99999999"])
    assert r.exit_code != 0 and "99999999" in r.output
    r = CliRunner().invoke(main, ["decode", "x1"])
    assert r.exit_code != 0 and "not a token id" in r.output
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    r = CliRunner().invoke(main, ["count", str(bad)])
    assert r.exit_code != 0 and "not UTF-8" in r.output and "byte 3" in r.output
    r = CliRunner().invoke(main, ["count", str(tmp_path / "missing.txt")])
    assert r.exit_code != 0
    r = CliRunner().invoke(main, ["count", "-e", "cl100k_base", "-m", "gpt-4", "-"], input="x")
    assert r.exit_code != 0 and "not both" in r.output


def test_list(run):
    out = run("list").output.split()
    assert "cl100k_base" in out and "llama3" in out


def test_console_script_installed():
    exe = shutil.which("bytepair")
    require(exe is not None, "the bytepair console script on PATH (pip install -e .)")
    proc = subprocess.run([exe, "count", "-e", "cl100k_base", "-"], input="hello world",
                          capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "2"
