"""A file bytepair writes, bytepair can read: save refuses what a format cannot hold.

Before the fix a trained tokenizer whose special token spells an ordinary token was written
as tokenizer.json without complaint and then either failed to load ("byte 0x68 has no
single-byte token", a space that is no ByteLevel character) or loaded to other ids (the
special's vocabulary key overwrote the ordinary token's); as QTKR (lossy=True) it wrote the
same bytes twice and failed to load.
"""

from __future__ import annotations

import pytest

import bytepair

DOCS = ["hello world hello world lo lo he he"] * 30
TEXT = "he hello world h lo"


def _trained(special):
    return bytepair.train(DOCS, vocab_size=270, special_tokens={special: 269})


@pytest.mark.parametrize("fmt", ["tokenizer.json", "qtkr"])
@pytest.mark.parametrize("special", ["he", "h", "hello", " world"])
def test_special_spelling_an_ordinary_token(tmp_path, fmt, special):
    enc = _trained(special)
    assert enc.encode(special, allowed_special="all") == [enc.special_tokens[special]]
    path = tmp_path / f"out.{fmt}"
    with pytest.raises(bytepair.LossyFormatError) as e:
        enc.save(path, format=fmt)
    assert repr(special) in str(e.value) or special in str(e.value)
    assert not path.exists()
    dropped = enc.save(path, format=fmt, lossy=True)
    assert any(special in d for d in dropped), dropped
    back = bytepair.load(path)
    # Everything the file kept encodes as before: all ordinary text.
    assert back.encode_ordinary(TEXT) == enc.encode_ordinary(TEXT)
    assert [back.decode_single_token_bytes(i) for i in enc.encode_ordinary(TEXT)] == \
        [enc.decode_single_token_bytes(i) for i in enc.encode_ordinary(TEXT)]


def test_special_that_fits_round_trips_as_tokenizer_json(tmp_path):
    enc = _trained("<|x|>")
    path = tmp_path / "out.json"
    enc.save(path, format="tokenizer.json")
    back = bytepair.load(path)
    text = TEXT + "<|x|>" + TEXT
    assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert back.special_tokens == enc.special_tokens
