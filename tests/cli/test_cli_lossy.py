"""The command line never writes a vocabulary that encodes differently from its source without
being told to (issue 13's two scenarios): a refusal is one line on stderr and a non-zero exit,
``--lossy`` writes and says what was dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main
from bytepair.registry import openai

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
TEXT = "the cat sat on the mat\nthe dog sat on the log\n  12345 it's done\n" * 3


def _one_line_error(r) -> str:
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit), r.exception  # no traceback
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("bytepair convert: ", "bytepair train: ")), r.stderr
    return lines[0]


def test_convert_bundled_cl100k_to_tokenizer_json_is_cl100k(tmp_path, reference, corpus_texts):
    """`bytepair convert python/bytepair/data/cl100k_base.bpe2 t.json` (main wrote o200k's pattern
    and no special tokens): the file encodes as tiktoken's cl100k_base, in HF tokenizers too."""
    from tokenizers import Tokenizer

    out = tmp_path / "t.json"
    r = CliRunner().invoke(main, ["convert", str(openai.DATA / "cl100k_base.bpe2"), str(out)])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # nothing dropped
    ref = reference("cl100k_base")
    ours, hf = bytepair.load(out), Tokenizer.from_file(str(out))
    assert ours._special_tokens == openai.CL100K_SPECIALS
    for text in [t[:100_000] for t in corpus_texts.values()] + ["a<|endoftext|>b<|fim_middle|>c"]:
        want = ref.encode(text, allowed_special="all")
        assert ours.encode(text) == want  # tokenizer.json's default: every special allowed (HF's)
        assert hf.encode(text, add_special_tokens=False).ids == want


def test_convert_refusal_is_one_line_and_lossy_writes(tmp_path):
    out = tmp_path / "t.qtkr"
    r = CliRunner().invoke(main, ["convert", str(openai.DATA / "cl100k_base.bpe2"), str(out)])
    line = _one_line_error(r)
    assert f"{out}: qtkr cannot carry the split pattern; the special tokens <|fim_prefix|>" in line
    assert str(out.with_suffix(".bpe2")) in line and "--lossy" in line
    assert not out.exists()
    r = CliRunner().invoke(main, ["convert", str(openai.DATA / "cl100k_base.bpe2"), str(out), "--lossy"])
    assert r.exit_code == 0, r.output
    assert r.stderr.strip() == (f"{out}: dropped the split pattern; the special tokens <|fim_prefix|>, "
                                "<|fim_middle|>, <|fim_suffix|>, <|endofprompt|>")
    q = bytepair.load(out, pat_str=openai.CL100K_PATTERN)
    assert q.encode("hello world") == [15339, 1917]


def test_convert_unknown_tiktoken_asks_for_the_pattern(tmp_path):
    """A .tiktoken file with no known hash has no pattern to convert with (main used o200k's):
    one line asking for it; --pattern (a preset or a regex) supplies it."""
    out = tmp_path / "t.bpe2"
    line = _one_line_error(CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny.tiktoken"), str(out)]))
    assert "records no split pattern" in line and "--pattern" in line
    assert not out.exists()
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny.tiktoken"), str(out), "--pattern", "gpt2",
                                  "--special", "<|endoftext|>=565"])
    assert r.exit_code == 0, r.output
    back = bytepair.load(out)
    assert back._pat_str == openai.R50K_PATTERN and back._special_tokens == {"<|endoftext|>": 565}
    r = CliRunner().invoke(main, ["convert", str(GOLDEN / "tiny.tiktoken"), str(out), "--pattern", "gpt2",
                                  "--special", "oops"])
    assert r.exit_code == 2 and "TOKEN=ID" in r.stderr


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


def test_train_refuses_a_tiktoken_output_that_drops_specials_and_pattern(tmp_path, corpus):
    """`bytepair train ... --special '<|bos|>' -o tok.tiktoken` (main wrote the ranks and dropped
    the rest): refused before training, one line that names what would be lost and a format
    that keeps it; --lossy writes it and says so."""
    out = tmp_path / "tok.tiktoken"
    args = ["train", str(corpus), "--vocab-size", "280", "--special", "<|bos|>", "-o", str(out)]
    line = _one_line_error(CliRunner().invoke(main, args))
    assert "tiktoken cannot carry the split pattern; the special tokens <|bos|>" in line
    assert str(tmp_path / "tok.bpe2") in line and "--lossy" in line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]
    r = CliRunner().invoke(main, [*args, "--lossy"])
    assert r.exit_code == 0, r.output
    assert "dropped the split pattern; the special tokens <|bos|>" in r.stderr
    assert out.is_file()


def test_train_default_output_keeps_everything(tmp_path, corpus):
    """An output name with no known suffix is written as BPE2, which loads back as the trained
    tokenizer: same pattern (nanochat's here), same specials, same ids."""
    out = tmp_path / "tok"
    r = CliRunner().invoke(main, ["train", str(corpus), "-n", "280", "-p", "nanochat", "--special", "<|bos|>",
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert bytepair.formats.detect(out.read_bytes()) == "bpe2"
    want = bytepair.train_files([corpus], 280, pattern="nanochat", special_tokens=["<|bos|>"])
    back = bytepair.load(out)
    assert (back._pat_str, back._special_tokens) == (want.pat_str, want.special_tokens)
    assert back._mergeable_ranks == want._mergeable_ranks
    assert back.encode(TEXT + "<|bos|>", allowed_special="all") == want.encode(TEXT + "<|bos|>", allowed_special="all")
