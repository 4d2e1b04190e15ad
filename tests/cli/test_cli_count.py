"""`bytepair count`: files, directory trees under .gitignore/.ignore, stdin, --text, --json,
--by ext, --truncate, skipped files."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main

O200K = bytepair.get_encoding("o200k_base")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


@pytest.fixture
def repo(tmp_path):
    """A small git work tree: ignored files at several depths, a re-included one, binaries."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")  # never counted: .git is not entered
    (root / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    (root / "a.py").write_text("print('hello world')\n")
    (root / "b.md").write_text("# Title\n\nSome prose.\n")
    (root / "debug.log").write_text("ignored by *.log\n")
    (root / "keep.log").write_text("re-included by !keep.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("ignored by build/\n")
    (root / "src").mkdir()
    (root / "src" / ".ignore").write_text("generated.py\n")
    (root / "src" / "main.py").write_text("def main():\n    return 42\n")
    (root / "src" / "generated.py").write_text("ignored by src/.ignore\n")
    (root / "src" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    return root


# The ignore files themselves are part of the tree, as git lists them.
COUNTED = [".gitignore", "a.py", "b.md", "keep.log", "src/.ignore", "src/main.py"]


def expected(root, names):
    return {n: O200K.count((root / n).read_text()) for n in names}


def test_directory_honours_ignore_files_and_skips_binaries(repo):
    r = run("count", "--json", repo)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    got = {os.path.relpath(f["path"], repo): f["tokens"] for f in out["files"]}
    assert got == expected(repo, COUNTED)
    assert out["total"] == sum(got.values())
    assert out["encoding"] == "o200k_base"
    assert [os.path.relpath(s["path"], repo) for s in out["skipped"]] == ["src/image.png"]
    assert out["skipped"][0]["reason"].startswith("binary")
    assert "skipped 1 binary file" in r.stderr


def test_subdirectory_inside_a_repository_uses_the_root_gitignore(repo):
    (repo / "src" / "trace.log").write_text("ignored by the root's *.log\n")
    out = json.loads(run("count", "--json", repo / "src").stdout)
    assert [os.path.basename(f["path"]) for f in out["files"]] == [".ignore", "main.py"]


def test_a_file_named_on_the_command_line_is_counted_even_if_ignored(repo):
    r = run("count", repo / "debug.log")
    assert r.stdout.strip() == str(O200K.count((repo / "debug.log").read_text()))


def test_table_and_total_for_several_inputs(repo):
    r = run("count", repo / "a.py", repo / "b.md")
    want = expected(repo, ["a.py", "b.md"])
    lines = r.stdout.splitlines()
    assert lines[0].split() == [f"{want['a.py']:,}", str(repo / "a.py")]
    assert lines[-1].split() == [f"{sum(want.values()):,}", "total", "(o200k_base)"]


def test_by_extension(repo):
    r = run("count", "--by", "ext", "--json", repo)
    by = json.loads(r.stdout)["by_ext"]
    want = expected(repo, COUNTED)
    assert by[".py"] == {"files": 2, "tokens": want["a.py"] + want["src/main.py"]}
    assert by[".md"] == {"files": 1, "tokens": want["b.md"]}
    table = run("count", "--by", "ext", repo).stdout.splitlines()
    assert any(line.split()[1:] == [".py", "(2", "files)"] for line in table)


def test_many_files_in_parallel_equal_serial_counts(tmp_path, corpus_texts):
    texts = {}
    for name, text in corpus_texts.items():
        for i in range(4):
            part = text[i * 20_000:(i + 1) * 20_000]
            (tmp_path / f"{name}-{i}.txt").write_text(part, encoding="utf-8")
            texts[f"{name}-{i}.txt"] = part
    for encoding in ("o200k_base", "cl100k_base"):
        enc = bytepair.get_encoding(encoding)
        out = json.loads(run("count", "--json", "-e", encoding, tmp_path).stdout)
        got = {os.path.basename(f["path"]): f["tokens"] for f in out["files"]}
        assert got == {n: enc.count(t, disallowed_special=()) for n, t in texts.items()}


def test_stdin_text_and_vocab(vocab_dir):
    text = "Counting tokens from stdin, <|endoftext|> as text."
    enc = bytepair.get_encoding("cl100k_base")
    want = str(enc.count(text, disallowed_special=()))
    assert run("count", "-e", "cl100k_base", input=text).stdout.strip() == want
    assert run("count", "-e", "cl100k_base", "-", input=text).stdout.strip() == want
    assert run("count", "-e", "cl100k_base", "--text", text).stdout.strip() == want
    assert run("count", "--vocab", vocab_dir / "cl100k_base.tiktoken", "--text", text).stdout.strip() == want


def test_a_model_without_a_bytepair_tokenizer_is_counted_with_a_named_stand_in():
    r = run("count", "-m", "claude-sonnet-4-5", "--text", "hello world")
    assert r.exit_code == 0
    assert r.stdout.strip() == str(O200K.count("hello world"))
    assert "o200k_base as a stand-in" in r.stderr and "estimate" in r.stderr
    out = json.loads(run("count", "-m", "claude-sonnet-4-5", "--text", "hello world", "--json").stdout)
    assert out["estimate"] is True and out["encoding"] == "o200k_base"
    assert "estimate" not in json.loads(run("count", "-m", "gpt-4o", "--text", "hi", "--json").stdout)


def test_not_utf8_and_unreadable_are_named_and_skipped(tmp_path):
    (tmp_path / "good.txt").write_text("fine")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 au lait")
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    try:
        r = run("count", "--json", tmp_path)
    finally:
        locked.chmod(0o644)
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    assert [os.path.basename(f["path"]) for f in out["files"]] == ["good.txt"] + (
        ["locked.txt"] if os.geteuid() == 0 else [])  # root reads any file
    reasons = {os.path.basename(s["path"]): s["reason"] for s in out["skipped"]}
    assert reasons["latin1.txt"] == "not UTF-8 (byte 3: invalid continuation byte)"
    if os.geteuid() != 0:
        assert reasons["locked.txt"].startswith("cannot read")
    assert "skipped" in r.stderr and "latin1.txt" in r.stderr


def test_truncate_cuts_on_a_token_boundary_and_never_inside_a_character():
    enc = bytepair.get_encoding("cl100k_base")
    text = "Hello 世界, お誕生日おめでとう and more words after it."
    ids = enc.encode(text)
    for n in range(len(ids) + 2):
        out = run("count", "-e", "cl100k_base", "--truncate", n, "--text", text).stdout
        assert text.startswith(out) and "\ufffd" not in out
        k = len(enc.encode(out))
        assert k <= n and enc.decode(ids[:k]) == out  # a prefix of the tokens, at most n
    # The text has cuts inside a character (cl100k splits 誕 over two tokens): there the output
    # stops at the token before.
    inside = [n for n in range(len(ids)) if not _utf8(enc.decode_bytes(ids[:n]))]
    assert inside
    for n in inside:
        out = run("count", "-e", "cl100k_base", "--truncate", n, "--text", text).stdout
        assert out == enc.decode(ids[:n - 1]) or not _utf8(enc.decode_bytes(ids[:n - 1]))


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_progress_bar_goes_to_stderr_only(tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text("x y z")
    r = run("count", "--progress", tmp_path)
    assert r.stdout.splitlines()[-1].split()[0] == str(3 * O200K.count("x y z"))
    assert "file" in r.stderr  # tqdm's unit
    quiet = run("count", "--no-progress", tmp_path)
    assert quiet.stderr == "" and quiet.stdout == r.stdout


def test_price_per_million_is_exact():
    text = "The price of tokens, per million. " * 50
    n = O200K.count(text)
    from decimal import Decimal

    out = run("count", "--price", "2.5", "--text", text).stdout.split()
    assert out == [str(n), f"${(Decimal(n) * Decimal('2.5') / 10**6).quantize(Decimal('0.000001')):,}"]


def test_a_directory_named_on_the_command_line_is_read_even_if_its_repository_ignores_it(repo):
    (repo / "build" / ".gitignore").write_text("*.tmp\n")
    (repo / "build" / "scratch.tmp").write_text("ignored by build/.gitignore\n")
    (repo / "build" / "debug.log").write_text("the root's *.log gives way too\n")
    out = json.loads(run("count", "--json", repo / "build").stdout)
    assert sorted(os.path.basename(f["path"]) for f in out["files"]) == [".gitignore", "debug.log", "out.txt"]


def test_a_folder_that_cannot_be_listed_is_named_and_skipped(tmp_path, monkeypatch):
    (tmp_path / "ok.txt").write_text("fine")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path):
        # chmod 0 would not stop root (the tests may run as root), so the refusal is simulated.
        if os.path.basename(str(path)) == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    r = run("count", "--json", tmp_path)
    assert r.exit_code == 3
    [skipped] = json.loads(r.stdout)["skipped"]
    assert skipped == {"path": str(locked), "reason": "cannot list folder (Permission denied)"}
