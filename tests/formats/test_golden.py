"""Golden files: tiny vocabularies of our own in every format (tests/data/make_golden.py), and
the ids the reference library gave for each sample when the files were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from bytepair.formats import detect

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
FORMAT_OF = {"tiny_sp.model": "sentencepiece", "tiny_hf.json": "tokenizer.json", "tiny_hf_fallback.json": "tokenizer.json", "tiny.tiktoken": "tiktoken",
             "tiny.bpe2": "bpe2", "tiny.bpz2": "bpz2", "tiny.qtkr": "qtkr", "tiny.leap": "leap",
             "gpt2/vocab.bpe": "gpt2", "tiny_sp.leap": "leap"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_ids(name):
    spec = EXPECTED[name]
    path = GOLDEN / name
    assert detect(path.read_bytes()) == FORMAT_OF[name]
    tok = bytepair.load(path, pat_str=spec.get("pattern"), special_tokens=spec.get("special_tokens"))
    for case in spec["cases"]:
        if "bos" in case:
            got = tok.encode(case["text"], add_bos=case["bos"], add_eos=case["eos"])
        elif spec.get("special_tokens"):
            got = tok.encode(case["text"], allowed_special="all")
        else:
            got = tok.encode(case["text"])
        assert got == case["ids"], (name, case["text"])


def test_every_format_has_a_golden_file():
    assert set(FORMAT_OF.values()) == set(bytepair.formats.FORMATS)


@pytest.mark.parametrize("name", ["tiny.tiktoken", "tiny.bpe2", "tiny.bpz2"])
def test_golden_conversions_round_trip(tmp_path, name):
    """Each rank-vocabulary format loads back to the same .tiktoken file and special tokens."""
    spec = EXPECTED["tiny.tiktoken"]
    src = bytepair.load(GOLDEN / "tiny.tiktoken", pat_str=spec["pattern"], special_tokens=spec["special_tokens"])
    back = bytepair.load(GOLDEN / name, pat_str=spec["pattern"], special_tokens=spec["special_tokens"])
    # A .tiktoken file holds the ranks only: tiny's pattern and special token are dropped, and
    # save says so.
    dropped = back.save(tmp_path / "x.tiktoken", lossy=True)
    assert dropped == ["split pattern", "special tokens <|endoftext|>"]
    assert (tmp_path / "x.tiktoken").read_bytes() == (GOLDEN / "tiny.tiktoken").read_bytes()
    assert back._special_tokens == src._special_tokens


def test_sentencepiece_model_round_trip(tmp_path):
    tok = bytepair.load(GOLDEN / "tiny_sp.model")
    tok.save(tmp_path / "x.model")
    assert (tmp_path / "x.model").read_bytes() == (GOLDEN / "tiny_sp.model").read_bytes()


@pytest.mark.parametrize("name", ["tiny_hf.json", "tiny_hf_fallback.json"])
def test_tokenizer_json_decode_like_tokenizers(name):
    from tokenizers import Tokenizer

    ref = Tokenizer.from_file(str(GOLDEN / name))
    ours = bytepair.load(GOLDEN / name)
    for case in EXPECTED[name]["cases"]:
        ids = case["ids"]
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False), case["text"]
