"""`bytepair inspect` and `bytepair convert` on every golden format."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
FILES = {"tiny_sp.model": "sentencepiece", "tiny_hf.json": "tokenizer.json", "tiny_hf_fallback.json": "tokenizer.json", "tiny.tiktoken": "tiktoken",
         "tiny.bpe2": "bpe2", "tiny.bpz2": "bpz2", "tiny.qtkr": "qtkr", "tiny.leap": "leap",
         "gpt2": "gpt2 (directory)", "tiny_sp.leap": "leap"}
TINY = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))["tiny.tiktoken"]
# tiny.tiktoken is no known vocabulary: its pattern and special token are given on the command line.
TINY_ARGS = ["--pattern", TINY["pattern"], *[a for s, i in TINY["special_tokens"].items() for a in ("--special", f"{s}={i}")]]


@pytest.mark.parametrize("name", sorted(FILES))
def test_inspect(name):
    r = CliRunner().invoke(main, ["inspect", "--json", str(GOLDEN / name)])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["format"] == FILES[name]
    # tiny.tiktoken records no pattern: inspect reports none, and loading it needs one.
    tok = bytepair.load(GOLDEN / name, pat_str=TINY["pattern"] if name == "tiny.tiktoken" else None)
    assert info["n_vocab"] == tok.n_vocab and info["max_token_len"] > 0
    if name == "tiny.tiktoken":
        assert info["pattern"] is None
    if (GOLDEN / name).is_file():
        assert info["sha256"] == hashlib.sha256((GOLDEN / name).read_bytes()).hexdigest()
    plain = CliRunner().invoke(main, ["inspect", str(GOLDEN / name)])
    assert plain.exit_code == 0 and "special_tokens" in plain.output


def test_inspect_sentencepiece_specials():
    info = json.loads(CliRunner().invoke(main, ["inspect", "--json", str(GOLDEN / "tiny_sp.model")]).output)
    assert info["special_tokens"]["<s>"] == 1 and info["special_tokens"]["[INST]"] > 2


@pytest.mark.parametrize("fmt,suffix,lossy", [("bpe2", "bpe2", False), ("bpz2", "bpz2", False), ("qtkr", "qtkr", True),
                                              ("leap", "bin", True), ("tokenizer.json", "json", False),
                                              ("tiktoken", "tiktoken", True)])
def test_convert_from_tiktoken(tmp_path, fmt, suffix, lossy):
    out = tmp_path / f"out.{suffix}"
    src = str(GOLDEN / "tiny.tiktoken")
    flag = ["--lossy"] if lossy else []
    r = CliRunner().invoke(main, ["convert", src, str(out), *TINY_ARGS, *flag])
    assert r.exit_code == 0, r.output
    assert bytepair.formats.detect(out.read_bytes()) == fmt
    assert ("dropped the split pattern" in r.stderr) == lossy
    r = CliRunner().invoke(main, ["convert", src, str(tmp_path / "x.weird"), "--to", fmt, *TINY_ARGS, *flag])
    assert r.exit_code == 0 and (tmp_path / "x.weird").read_bytes() == out.read_bytes()


def test_convert_sentencepiece_to_leap_and_refusals(tmp_path):
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny_sp.model"), str(tmp_path / "t.bin")])
    assert r.exit_code != 0 and "special tokens <unk>" in r.stderr and "--lossy" in r.stderr
    assert not (tmp_path / "t.bin").exists()
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny_sp.model"), str(tmp_path / "t.bin"), "--lossy"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny_sp.model"), str(tmp_path / "t.bpe2")])
    assert r.exit_code != 0 and "cannot be written as bpe2" in r.output
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny.tiktoken"), str(tmp_path / "t.unknown"), *TINY_ARGS])
    assert r.exit_code != 0 and "cannot tell the format" in r.output
    bad = tmp_path / "bad.bpe2"
    bad.write_bytes(b"BPE2" + b"\0" * 10)
    r = CliRunner().invoke(main, ["inspect", str(bad)])
    assert r.exit_code != 0 and str(bad) in r.output and "header" in r.output
