"""`bytepair show` and `bytepair compare`: boundaries visible without colour, ids, partial UTF-8
characters as hex (never U+FFFD)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main

TEXTS = [
    "Hello, world!  Two spaces\tand a tab\nnext line",
    "お誕生日おめでとう",  # cl100k splits 誕 over two tokens
    "a|b\\c | pipes and backslashes \\x41 literally",
    "emoji 👋🏽 and combining é",
]


def run(*args, input=None, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, env=env, catch_exceptions=False)


def split_plain(line: str) -> list[str]:
    """The plain output back into tokens: split at unescaped |, then undo \\| and \\\\."""
    return [re.sub(r"\\([|\\])", r"\1", t) for t in re.split(r"(?<!\\)\|", re.sub(r"\\\\", "\0", line))
            for t in [t.replace("\0", "\\\\")]]


def expected_shown(piece: bytes) -> str:
    from bytepair.cli.show import runs, visible

    return "".join(visible(text, False) if is_text else text for is_text, text in runs(piece))


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("text", TEXTS)
def test_plain_output_splits_back_into_the_tokens(encoding, text):
    enc = bytepair.get_encoding(encoding)
    pieces = enc.decode_tokens_bytes(enc.encode(text))
    out = run("show", "-e", encoding, "--no-color", "--text", text).stdout
    assert "\ufffd" not in out and "\x1b[" not in out
    assert split_plain(out.rstrip("\n")) == [expected_shown(p) for p in pieces]


def test_partial_characters_are_hex_and_whitespace_is_visible():
    out = run("show", "-e", "cl100k_base", "--no-color", "--text", "お誕生日 a\tb\nc").stdout
    assert out == "お|\\xe8\\xaa|\\x95|生|日|·a|→b|↵\n|c\n"


def test_ids_mode_one_token_per_line():
    enc = bytepair.get_encoding("cl100k_base")
    text = "お誕生日 hello"
    ids = enc.encode(text)
    lines = run("show", "--ids", "-e", "cl100k_base", "--text", text).stdout.splitlines()
    assert [int(line.split("\t")[0]) for line in lines] == ids
    assert lines[1] == f"{ids[1]}\tb'\\xe8\\xaa'" and lines[0] == f"{ids[0]}\t\"お\""


def test_colour_only_when_asked_or_on_a_terminal():
    coloured = run("show", "--color", "--text", "hello world").stdout
    assert "\x1b[48;5;" in coloured  # alternating backgrounds
    assert "\x1b[" not in run("show", "--text", "hello world").stdout  # not a terminal
    assert "\x1b[" not in run("show", "--text", "hello world", env={"NO_COLOR": "1"}).stdout


def test_show_reads_a_file_and_stdin(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("file text")
    assert run("show", p).stdout == "file|·text\n"
    enc = bytepair.get_encoding("o200k_base")
    want = "|".join(expected_shown(p) for p in enc.decode_tokens_bytes(enc.encode("piped text")))
    assert run("show", input="piped text").stdout == want + "\n"


def test_compare_counts_and_where_boundaries_differ():
    text = "antidisestablishmentarianism"
    out = run("compare", text, "-e", "cl100k_base", "-e", "o200k_base").stdout.splitlines()
    for name in ("cl100k_base", "o200k_base"):
        enc = bytepair.get_encoding(name)
        row = next(line for line in out if line.startswith(name)).split()
        assert row[1] == str(enc.count(text)) and row[2] == f"{len(text) / enc.count(text):.2f}"
    diff_lines = [line.strip() for line in out if line.startswith("  ")]
    assert diff_lines, out
    for name, line in zip(("cl100k_base", "o200k_base"), diff_lines):
        enc = bytepair.get_encoding(name)
        assert line.split()[0] == name
        # Each line is a stretch of the text, split where that encoding splits it.
        assert "".join(split_plain(line.split(None, 1)[1])) in text


def test_compare_same_boundaries():
    out = run("compare", "hello", "-e", "cl100k_base", "-m", "gpt-4").stdout
    assert "the boundaries are the same everywhere" in out
