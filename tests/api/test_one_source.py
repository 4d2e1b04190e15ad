"""Facts written once: the split patterns and GPT-2's byte table come from the Rust core, every
writer goes through one atomic-write helper, and every exception type lives in errors.py."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

import bytepair
from bytepair import _core, atomic, errors, fetch
from bytepair.formats import bpe2, gpt2, tiktoken
from bytepair.registry import llama, openai
from bytepair.train import NANOCHAT_PATTERN, PATTERNS, RUSTBPE_GPT4_PATTERN

BYTES = {bytes([b]): b for b in range(256)}


def splitter(pattern: str) -> str:
    return _core.Tokenizer.from_ranks(BYTES, [], pattern).splitter


@pytest.mark.parametrize("name", sorted(_core.PATTERNS))
def test_every_builtin_pattern_runs_on_its_scanner(name):
    # A pattern that drifted from the one its scanner implements would run on "automata" or
    # "regex" here: correct but several times slower, and otherwise unnoticed.
    assert splitter(_core.PATTERNS[name]) == name


def test_the_python_pattern_names_are_the_cores_strings():
    named = {
        "r50k": openai.R50K_PATTERN, "cl100k": openai.CL100K_PATTERN, "o200k": openai.O200K_PATTERN,
        "llama3": llama.LLAMA3_PATTERN, "nanochat": NANOCHAT_PATTERN, "rustbpe": RUSTBPE_GPT4_PATTERN,
    }
    for name, pattern in named.items():
        assert pattern is _core.PATTERNS[name], name
    builtin = set(_core.PATTERNS.values())
    for preset, pattern in PATTERNS.items():  # the trainer's presets
        assert pattern in builtin, preset
        assert splitter(pattern) in _core.PATTERNS, preset


def test_the_registered_encodings_run_on_scanners():
    for name in ("cl100k_base", "o200k_base", "o200k_harmony"):
        assert bytepair.get_encoding(name)._core_bpe.splitter in _core.PATTERNS, name


def test_one_character_off_is_another_pattern():
    for name, pattern in _core.PATTERNS.items():
        assert splitter(pattern + "|x") not in _core.PATTERNS, name


def test_cl100k_written_as_tokenizer_json_stays_on_its_scanner(tmp_path):
    from bytepair.formats import hf

    assert hf.onig_pattern(_core.PATTERNS["cl100k"]) == _core.PATTERNS["cl100k_hf"]
    enc = bytepair.get_encoding("cl100k_base")
    enc.save(tmp_path / "t.json")
    loaded = bytepair.load(tmp_path / "t.json")
    assert loaded._pat_str == _core.PATTERNS["cl100k_hf"]
    assert splitter(loaded._pat_str) == "cl100k_hf"


def test_gpt2_byte_table():
    table = gpt2.byte_to_char()
    assert len(set(table.values())) == 256 and sorted(table) == list(range(256))
    assert table[ord("a")] == "a" and table[ord(" ")] == "\u0120" and table[0] == "\u0100"
    assert table[0xAD] == "\u0143"  # the last byte that is not printable
    order = gpt2._printable_first()
    assert order[:3] == [ord("!"), ord('"'), ord("#")] and order[-1] == 0xAD
    # The Rust readers use the same table: a GPT-2 file spelled with it reads back.
    encoder = {table[b]: rank for rank, b in enumerate(order)}
    vocab_bpe = "#version: 0.2\n" + f"{table[ord(' ')]} {table[ord('a')]}\n"
    encoder[table[ord(" ")] + table[ord("a")]] = 256
    ranks = gpt2.data_gym_to_mergeable_bpe_ranks(vocab_bpe, json.dumps(encoder))
    assert ranks[b" a"] == 256 and ranks[bytes([order[0]])] == 0


def test_every_writer_uses_the_one_atomic_helper():
    assert bpe2.write_atomic is atomic.write_atomic
    assert tiktoken.write_atomic is atomic.write_atomic


def test_write_atomic_replaces_the_file(tmp_path):
    path = tmp_path / "v.bin"
    path.write_bytes(b"old")
    atomic.write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["v.bin"]


@pytest.mark.parametrize("failure", ["write", "rename", "interrupt"])
def test_write_atomic_leaves_nothing_behind_on_failure(tmp_path, monkeypatch, failure):
    path = tmp_path / "v.bin"
    path.write_bytes(b"old")
    data: object = b"new"
    if failure == "write":
        data = "not bytes"  # TypeError from f.write, after the temporary file exists
    else:
        error = OSError("disk full") if failure == "rename" else KeyboardInterrupt()

        def replace(src, dst):
            assert os.path.exists(src)  # the temporary file, complete
            raise error

        monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises((TypeError, OSError, KeyboardInterrupt)):
        atomic.write_atomic(path, data)  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["v.bin"]


def test_write_atomic_into_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        atomic.write_atomic(tmp_path / "no" / "v.bin", b"x")
    assert os.listdir(tmp_path) == []


def test_the_download_cache_writes_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path))
    fetch._store(b"data", "key")
    assert (tmp_path / "key").read_bytes() == b"data"
    assert os.listdir(tmp_path) == ["key"]


def test_exception_types_live_in_errors_py():
    package = Path(bytepair.__file__).parent
    found = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception", "Warning")) for b in bases):
                    found.append((path.relative_to(package).as_posix(), node.name))
    assert found and all(where == "errors.py" for where, _ in found), found


def test_chat_error_is_importable_from_its_old_home():
    from bytepair.chat import ChatError

    assert ChatError is errors.ChatError and issubclass(ChatError, ValueError)
