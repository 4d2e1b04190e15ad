"""BPE2/BPZ2: the trailing section, zstd, verify, and tiktoken -> BPE2 -> tiktoken byte-identity
on the real cl100k_base and o200k_base files."""

from __future__ import annotations

import pytest
import tiktoken
from click.testing import CliRunner

import bytepair
from bytepair import _core
from bytepair.cli import main
from bytepair.formats import bpe2, detect


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("fmt", ["bpe2", "bpz2"])
def test_tiktoken_round_trip_is_byte_identical(tmp_path, name, fmt, vocab):
    src = vocab(f"{name}.tiktoken")
    enc = bytepair.load(src)
    enc.save(tmp_path / f"v.{fmt}")
    assert detect((tmp_path / f"v.{fmt}").read_bytes()) == fmt
    back = bytepair.load(tmp_path / f"v.{fmt}")
    assert back.name == name and back._special_tokens == enc._special_tokens
    back.save(tmp_path / "v.tiktoken")
    assert (tmp_path / "v.tiktoken").read_bytes() == src.read_bytes()
    report = bpe2.verify((tmp_path / f"v.{fmt}").read_bytes(), src.read_bytes())
    assert report.ok, report.problems


@pytest.mark.parametrize("fmt", ["bpe2", "bpz2"])
def test_loaded_table_encodes_like_tiktoken(tmp_path, fmt, docs, vocab):
    src = vocab("cl100k_base.tiktoken")
    bytepair.load(src).save(tmp_path / f"v.{fmt}")
    ours = bytepair.load(tmp_path / f"v.{fmt}")
    from tiktoken.load import load_tiktoken_bpe

    from bytepair.registry.openai import CL100K_PATTERN

    # Built from the local file: tiktoken.get_encoding would download.
    ref = tiktoken.Encoding("cl100k_base", pat_str=CL100K_PATTERN,
                            mergeable_ranks=load_tiktoken_bpe(str(src)),
                            special_tokens=dict(ours._special_tokens))
    mismatches = sum(ours.encode(d, allowed_special="all") != ref.encode(d, allowed_special="all")
                     for d in docs)
    assert mismatches == 0


def test_base_layout_reader_ignores_trailer(tmp_path):
    """A table with a trailing section starts with the bytes of the same table without one, and a
    base-layout reader (given the pattern and specials from elsewhere) reads it."""
    enc = bytepair.get_encoding("cl100k_base")
    with_trailer = enc._core_bpe.to_bpe2(bytes(32), "x")
    base = enc._core_bpe.to_bpe2(bytes(32), "x", None, False)
    assert with_trailer[: len(base)] == base and len(with_trailer) > len(base)
    head = _core.bpe2_info(with_trailer)
    assert head["has_trailer"] and head["pattern"] == enc._pat_str
    assert dict(head["special_tokens"]) == enc._special_tokens
    # The base-layout reader (given specials and a pattern from elsewhere) still works.
    core = _core.Tokenizer.from_bpe2(base, list(enc._special_tokens.items()), enc._pat_str)
    assert core.encode("hello world<|endoftext|>", allowed_special="all", disallowed_special=()) == [15339, 1917, 100257]


def test_verify_cli(tmp_path, vocab):
    cl100k, o200k = vocab("cl100k_base.tiktoken"), vocab("o200k_base.tiktoken")
    bytepair.load(cl100k).save(tmp_path / "v.bpz2")
    runner = CliRunner()
    ok = runner.invoke(main, ["verify", str(tmp_path / "v.bpz2"), str(cl100k)])
    assert ok.exit_code == 0 and "100256 tokens identical" in ok.output
    bad = runner.invoke(main, ["verify", str(tmp_path / "v.bpz2"), str(o200k)])
    assert bad.exit_code == 1 and "embedded source hash" in bad.output


def test_registry_encoding_saves_with_its_source_hash(tmp_path, vocab):
    bytepair.get_encoding("o200k_base").save(tmp_path / "o.bpz2")
    report = bpe2.verify((tmp_path / "o.bpz2").read_bytes(), vocab("o200k_base.tiktoken").read_bytes())
    assert report.ok, report.problems


def test_bundled_tables_verify(vocab):
    for name in ("cl100k_base", "o200k_base"):
        from bytepair.registry.openai import DATA
        report = bpe2.verify((DATA / f"{name}.bpe2").read_bytes(), vocab(f"{name}.tiktoken").read_bytes())
        assert report.ok, report.problems


def test_convert_and_inspect_cli(tmp_path, vocab):
    runner = CliRunner()
    src = vocab("cl100k_base.tiktoken")
    r = runner.invoke(main, ["convert", str(src), str(tmp_path / "x.out"), "--to", "bpz2"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["inspect", "--json", str(tmp_path / "x.out")])
    assert r.exit_code == 0, r.output
    import json
    info = json.loads(r.output)
    assert info["format"] == "bpz2" and info["n_vocab"] == 100277
    assert info["source_sha256"] == bytepair.registry.openai.SOURCE_SHA256["cl100k_base"]
    assert info["special_tokens"]["<|endoftext|>"] == 100257 and info["max_token_len"] == 128


def _same_core(a, b) -> bool:
    return (a.n_mergeable, a.max_rank, a.token_byte_values()) == (b.n_mergeable, b.max_rank, b.token_byte_values())


@pytest.mark.parametrize("fmt", ["bpe2", "bpz2"])
def test_from_bpe2_file_reads_like_from_bpe2(tmp_path, fmt, vocab):
    """The streaming file reader (how bundled encodings load) gives the table from_bpe2 gives,
    and the same error for every damaged file; a missing file is FileNotFoundError."""
    from bytepair.registry.openai import CL100K_PATTERN

    bytepair.load(vocab("cl100k_base.tiktoken")).save(tmp_path / f"v.{fmt}")
    data = (tmp_path / f"v.{fmt}").read_bytes()
    specials = [("<|endoftext|>", 100257)]
    a = _core.Tokenizer.from_bpe2(data, specials, CL100K_PATTERN)
    b = _core.Tokenizer.from_bpe2_file(tmp_path / f"v.{fmt}", specials, CL100K_PATTERN)
    assert _same_core(a, b)
    text = "hello <|endoftext|> world"
    assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all")
    damaged = {"short": data[:40], "cut table": data[: 64 + 8 * 1000 + 3], "cut blob": data[:-10],
               "bad span": data[:64 + 8 * 5] + b"\xff" * 8 + data[64 + 8 * 6:]}
    for what, bad in damaged.items():
        (tmp_path / "bad").write_bytes(bad)
        with pytest.raises(bytepair.FormatError) as want:
            _core.Tokenizer.from_bpe2(bad, specials, CL100K_PATTERN)
        with pytest.raises(bytepair.FormatError) as got:
            _core.Tokenizer.from_bpe2_file(tmp_path / "bad", specials, CL100K_PATTERN)
        assert str(got.value) == str(want.value), what
    with pytest.raises(FileNotFoundError):
        _core.Tokenizer.from_bpe2_file(tmp_path / "missing.bpe2", specials, CL100K_PATTERN)
