"""Bad input to the trainer: each a ValueError subclass with a clear message, nothing written."""

from __future__ import annotations

import _thread
import importlib
import threading

import pytest

import bytepair
from bytepair.errors import FormatError, PatternError, TrainingError, VocabError
from support import SIGINT_HANDLED

# The module (the package attribute `bytepair.train` is the function).
train_module = importlib.import_module("bytepair.train")


def test_vocab_size_too_small_for_bytes():
    with pytest.raises(VocabError, match="vocab_size 255 is too small.*at least 256"):
        bytepair.train(["hello"], 255)


def test_vocab_size_too_small_for_specials():
    with pytest.raises(VocabError, match="2 special tokens need at least 258"):
        bytepair.train(["hello"], 257, special_tokens=["<|a|>", "<|b|>"])


def test_duplicate_special_tokens():
    with pytest.raises(VocabError, match="given twice"):
        bytepair.train(["hello"], 300, special_tokens=["<|a|>", "<|b|>", "<|a|>"])


@pytest.mark.parametrize("corpus", [[], [""], ["", ""]])
def test_empty_corpus(corpus):
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train(corpus, 300)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    with pytest.raises(TrainingError, match="empty.txt is empty"):
        bytepair.train_files([p], 300)


@pytest.mark.parametrize("pattern", ["(", "[a-", r"\p{Nope}", "a{2,1}"])
def test_invalid_regex(pattern):
    with pytest.raises(PatternError, match="invalid split pattern"):
        bytepair.train(["hello"], 300, pattern=pattern)


def test_errors_are_value_errors():
    for cls in (VocabError, PatternError, TrainingError, FormatError):
        assert issubclass(cls, ValueError)


def test_non_utf8_file_names_file_and_offset(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"good line\nsecond \xff line\n")
    with pytest.raises(FormatError) as e:
        bytepair.train_files([p], 300)
    assert str(p) in str(e.value) and "byte 17" in str(e.value)


def test_non_utf8_file_offset_past_the_first_block(tmp_path, monkeypatch):
    p = tmp_path / "bad.txt"
    good = b"x" * 99 + b"\n"
    p.write_bytes(good * 50 + b"\xc3(" + b"\n")
    real = train_module._count_text_file
    monkeypatch.setattr(train_module, "_count_text_file", lambda *a: real(*a, block=64))
    with pytest.raises(FormatError, match="byte 5000"):
        bytepair.train_files([p], 300)


def test_non_utf8_jsonl(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"text": "ok"}\n{"text": "\xfe"}\n')
    with pytest.raises(FormatError, match="byte 25"):
        bytepair.train_files([p], 300)


def test_errors_replace_reads_u_fffd(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"ab\xffab\xffab\xff\n")
    enc = bytepair.train_files([p], 300, errors="replace")
    assert "\ufffd".encode() in enc._mergeable_ranks or "ab\ufffd".encode() in enc._mergeable_ranks


def test_jsonl_missing_field_and_bad_json(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"text": "ok"}\n{"body": "x"}\n')
    with pytest.raises(FormatError, match="line 2.*no 'text' field"):
        bytepair.train_files([p], 300)
    p.write_text('{"text": "ok"}\n{"text": \n')
    with pytest.raises(FormatError, match="line 2.*not JSON"):
        bytepair.train_files([p], 300)
    p.write_text('{"text": 5}\n')
    with pytest.raises(FormatError, match="is int, not a string"):
        bytepair.train_files([p], 300)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        bytepair.train_files(["/nonexistent/nope.txt"], 300)


def test_non_str_documents():
    with pytest.raises(TypeError, match="must be str, got bytes"):
        bytepair.train([b"hello"], 300)
    with pytest.raises(TypeError, match="not a single str"):
        bytepair.train("one long text", 300)


def test_lone_surrogates_are_counted_as_replacement_character():
    enc = bytepair.train(["a\ud800b a\ud800b"], 300, pattern=r"\S+|\s+")
    assert "a\ufffdb".encode() in enc._mergeable_ranks


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_min_frequency_and_threads(bad):
    with pytest.raises((ValueError, TypeError)):
        bytepair.train(["hello"], 300, min_frequency=bad)
    with pytest.raises((ValueError, TypeError)):
        bytepair.train(["hello"], 300, num_threads=bad)


def test_keyboard_interrupt_while_reading_propagates():
    def docs():
        yield "hello world"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bytepair.train(docs(), 300)


def test_keyboard_interrupt_during_merges_stops_between_slices(monkeypatch):
    # A signal arriving while Rust merges is handled when the slice returns to Python.
    calls = []
    real = train_module._core.Trainer

    class Interrupting:
        def __init__(self, *a):
            self._t = real(*a)

        def __getattr__(self, name):
            return getattr(self._t, name)

        def merge(self, *a):
            calls.append(a)
            if len(calls) == 2:
                _thread.interrupt_main()
            return self._t.merge(*a)

    monkeypatch.setattr(train_module._core, "Trainer", Interrupting)
    monkeypatch.setattr(train_module, "_MERGE_SLICE", 1)
    texts = ["the quick brown fox jumps over the lazy dog " * 20] * 5
    with pytest.raises(KeyboardInterrupt):
        bytepair.train(texts, 400)
    assert 2 <= len(calls) < 10
    assert threading.main_thread().is_alive()


HOSTILE_BYTES = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xe2\x82", b"\xc0\xaf", b"\xf5\x80\x80\x80"]


def test_errors_replace_matches_python_decoding(tmp_path):
    # Rust reads plain text files; its U+FFFD substitution must be Python's errors="replace".
    data = b"".join(b"ok " + h + b" ok" + h + b"\n" for h in HOSTILE_BYTES) + b"tail \xe2\x82"
    p = tmp_path / "hostile.txt"
    p.write_bytes(data)
    text = data.decode("utf-8", "replace")
    expected = bytepair.train(text.splitlines(keepends=True), 320, pattern=r"\S+|\s+")
    got = bytepair.train_files([p], 320, pattern=r"\S+|\s+", errors="replace")
    assert got._mergeable_ranks == expected._mergeable_ranks


def test_sigint_in_a_real_process_stops_cleanly(tmp_path):
    # A real SIGINT while the stream is being counted (a batch may be in flight on the worker
    # thread): the process ends with KeyboardInterrupt and writes nothing.
    import signal
    import subprocess
    import sys

    out = tmp_path / "never.tiktoken"
    script = SIGINT_HANDLED + f"""
import sys, time, bytepair
def docs():
    for i in range(10**9):
        if i == 200_000:
            print("ready", flush=True)
        if i > 200_000:
            time.sleep(0.0005)
        yield f"document {{i}} with some words in it\\n"
enc = bytepair.train(docs(), 1000, show_progress=False)
enc.save({str(out)!r})
"""
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode != 0
    assert "KeyboardInterrupt" in err
    assert not out.exists()
