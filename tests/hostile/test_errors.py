"""Bad input gets a clear, typed error: never a crash, never a panic."""

from __future__ import annotations

import pytest

import bytepair


@pytest.fixture(scope="module")
def enc():
    return bytepair.get_encoding("cl100k_base")


@pytest.mark.parametrize("bad", [b"bytes", 123, None, ["list"]])
def test_non_str_text_is_type_error(enc, bad):
    for method in (enc.encode, enc.encode_ordinary, enc.count, enc.encode_to_numpy):
        with pytest.raises(TypeError, match="expected text as str"):
            method(bad)
    with pytest.raises(TypeError):
        enc.encode_batch(["fine", bad])


def test_unknown_encoding_lists_known_ones():
    with pytest.raises(ValueError) as e:
        bytepair.get_encoding("cl100k_bas")
    assert "cl100k_base" in str(e.value) and "o200k_base" in str(e.value)


def test_unknown_model_is_key_error():
    with pytest.raises(KeyError):
        bytepair.encoding_for_model("not-a-model")


# 100_261 lies inside cl100k's id range but no token has it (a hole between special tokens).
@pytest.mark.parametrize("bad", [[100_276_000], [2**31], [2**40], [-1], [100_261]])
def test_decode_out_of_range(enc, bad):
    with pytest.raises(KeyError) as e:
        enc.decode(bad)
    assert isinstance(e.value, bytepair.UnknownTokenError)
    assert str(bad[0]) in str(e.value)
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(bad[0])
    with pytest.raises(KeyError):
        enc.decode_tokens_bytes([1, bad[0]])


def test_decode_non_int(enc):
    with pytest.raises(TypeError):
        enc.decode(["a"])


def test_corrupt_tiktoken_file_names_the_line(tmp_path):
    p = tmp_path / "bad.tiktoken"
    p.write_bytes(b"YQ== 0\nYg== 1\n%%%not-base64 2\n")
    with pytest.raises(bytepair.FormatError) as e:
        bytepair.load_tiktoken_bpe(p)
    assert isinstance(e.value, ValueError)
    assert "line 3" in str(e.value) and str(p) in str(e.value)
    p.write_bytes(b"YQ== 0\nYQ== 1\n")
    with pytest.raises(bytepair.FormatError, match="appears again"):
        bytepair.load_tiktoken_bpe(p)
    p.write_bytes(b"YQ== zero\n")
    with pytest.raises(bytepair.FormatError, match="line 1: bad rank"):
        bytepair.load_tiktoken_bpe(p)


def test_hash_mismatch_names_both(tmp_path):
    p = tmp_path / "v.tiktoken"
    p.write_bytes(b"YQ== 0\n")
    with pytest.raises(ValueError) as e:
        bytepair.load_tiktoken_bpe(p, expected_hash="0" * 64)
    assert "0" * 64 in str(e.value)
    import hashlib

    assert hashlib.sha256(b"YQ== 0\n").hexdigest() in str(e.value)


def test_invalid_vocabularies_are_value_errors():
    full = {bytes([b]): b for b in range(256)}
    with pytest.raises(bytepair.VocabError, match="no rank"):
        bytepair.Encoding("x", pat_str=r"\w+", mergeable_ranks={k: v for k, v in full.items() if v != 65}, special_tokens={})
    with pytest.raises(bytepair.VocabError, match="given to both"):
        bytepair.Encoding("x", pat_str=r"\w+", mergeable_ranks={**full, b"ab": 5}, special_tokens={})
    # A special token at an ordinary id is accepted, as tiktoken accepts it (the id decodes to
    # the ordinary token): tests/api/test_tiktoken_dropin.py.
    shared = bytepair.Encoding("x", pat_str=r"\w+", mergeable_ranks=full, special_tokens={"<s>": 3})
    assert shared.decode_bytes([3]) == b"\x03"
    with pytest.raises(bytepair.VocabError, match="dense"):
        bytepair.Encoding("x", pat_str=r"\w+", mergeable_ranks={**full, b"ab": 2**30}, special_tokens={})
    with pytest.raises(bytepair.PatternError):
        bytepair.Encoding("x", pat_str=r"(unclosed", mergeable_ranks=full, special_tokens={})
    with pytest.raises(TypeError):
        bytepair.Encoding("x", pat_str=r"\w+", mergeable_ranks={"str key": 1}, special_tokens={})


def test_missing_cached_vocabulary_says_where_to_put_it(tmp_path, monkeypatch):
    import urllib.request

    def offline(*a, **k):
        raise OSError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "none"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    with pytest.raises(bytepair.VocabularyNotFoundError) as e:
        bytepair.registry.openai.r50k_base()
    assert str(tmp_path / "r50k_base.tiktoken") in str(e.value)
    assert isinstance(e.value, FileNotFoundError)
