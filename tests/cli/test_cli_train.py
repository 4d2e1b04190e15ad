"""`bytepair train` and the file/result surface of bytepair.train_files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main
from bytepair.formats.tiktoken import load_tiktoken_bpe
from bytepair.train_reference import train_reference
from support import require_module

TEXT = "the cat sat on the mat\nthe dog sat on the log\n\nthe end  \n" * 3


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


def test_cli_writes_the_tiktoken_file_train_files_returns(tmp_path, corpus):
    out = tmp_path / "tok.tiktoken"
    r = CliRunner().invoke(main, ["train", str(corpus), "--vocab-size", "270", "--special", "<|bos|>",
                                  "--special", "<|eos|>", "-o", str(out), "--lossy"])
    assert r.exit_code == 0, r.output
    assert "<|bos|>=" in r.output
    assert "dropped the split pattern; the special tokens <|bos|>, <|eos|>" in r.stderr
    enc = bytepair.train_files([corpus], 270, special_tokens=["<|bos|>", "<|eos|>"])
    assert load_tiktoken_bpe(out) == enc._mergeable_ranks
    assert enc._special_tokens == {"<|bos|>": 268, "<|eos|>": 269}


def test_plain_text_files_are_one_document_per_line(corpus):
    lines = TEXT.splitlines(keepends=True)
    ranks, _ = train_reference(lines, 300)
    assert bytepair.train_files(corpus, 300)._mergeable_ranks == ranks


def test_jsonl_text_field(tmp_path):
    docs = ["first document, with words", "second document\nwith two lines", "third"]
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": i, "body": d}) + "\n" for i, d in enumerate(docs)))
    ranks, _ = train_reference(docs, 300, pattern="o200k")
    assert bytepair.train_files([p], 300, text_field="body", pattern="o200k")._mergeable_ranks == ranks


def test_cli_failure_writes_nothing(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    out = tmp_path / "tok.bpe2"
    r = CliRunner().invoke(main, ["train", str(bad), "--vocab-size", "300", "-o", str(out)])
    assert r.exit_code != 0
    assert "bad.txt" in r.output and "byte 3" in r.output
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]
    r = CliRunner().invoke(main, ["train", str(bad), "--vocab-size", "10", "-o", str(out)])
    assert r.exit_code != 0 and "too small" in r.output
    assert not out.exists()


def test_cli_pattern_presets_and_errors_replace(tmp_path):
    p = tmp_path / "c.txt"
    p.write_bytes(b"12345 67890 12345\xff\n" * 4)
    out = tmp_path / "o.tiktoken"
    r = CliRunner().invoke(main, ["train", str(p), "-n", "280", "-p", "nanochat", "--errors", "replace",
                                  "-o", str(out), "--lossy"])
    assert r.exit_code == 0, r.output
    ranks = load_tiktoken_bpe(out)
    assert b"123" not in ranks and b"12" in ranks  # nanochat splits digits 1-2 at a time


def test_trained_encoding_surface(corpus, tmp_path):
    enc = bytepair.train_files([corpus], 270, special_tokens=["<|endoftext|>"])
    assert enc.decode(enc.encode(TEXT)) == TEXT
    tb = enc.token_bytes()
    assert tb.dtype == np.int32 and len(tb) == enc.n_vocab == 270
    assert tb[enc.eot_token] == 0
    assert all(tb[i] == len(enc.decode_single_token_bytes(i)) for i in range(269))
    assert enc.save(tmp_path / "x.tiktoken", lossy=True) == ["split pattern", "special tokens <|endoftext|>"]
    assert load_tiktoken_bpe(tmp_path / "x.tiktoken") == enc._mergeable_ranks
    assert len(enc.merges) == 269 - 256
    import pickle

    again = pickle.loads(pickle.dumps(enc))
    assert again.encode(TEXT) == enc.encode(TEXT)
    assert again.merges == enc.merges and again._special_tokens == enc._special_tokens


def test_progress_bar_and_logging(corpus, capsys, caplog):
    require_module("tqdm")
    with caplog.at_level("INFO", logger="bytepair.train"):
        bytepair.train_files([corpus], 270, show_progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "merging" in err
    assert any("distinct" in r.getMessage() for r in caplog.records)
    bytepair.train([TEXT], 270, show_progress=False)
    assert "merging" not in capsys.readouterr().err


def test_cli_help_lists_the_presets():
    r = CliRunner().invoke(main, ["train", "--help"])
    assert r.exit_code == 0 and "nanochat" in r.output and "--vocab-size" in r.output
