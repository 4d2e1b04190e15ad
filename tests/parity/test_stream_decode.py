"""StreamDecoder: what it gives out, id by id, joins to the reference library's decode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.stream import StreamDecoder
from support import mistral_model

# Text with many characters that byte-level BPE splits across tokens.
TEXT = st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    ["naïve café", "日本語のテキスト", "😀👍🏽 emoji", "\u0301\u0301a", "Ελληνικά"])


def _stream(dec: StreamDecoder, ids: list[int], cuts: list[int]) -> str:
    """Feed ids in the chunks `cuts` gives, the one-id `step` for chunks of one."""
    out, i = [], 0
    for c in cuts:
        chunk = ids[i: i + c]
        out.append(dec.step(chunk[0]) if len(chunk) == 1 else dec.feed(chunk))
        i += c
    out.append(dec.feed(ids[i:]))
    return "".join(out) + dec.flush()


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(text=TEXT, cuts=st.lists(st.integers(1, 4), max_size=30))
def test_text_round_trips_through_the_stream(reference, name, text, cuts):
    enc = bytepair.get_encoding(name)
    ids = reference(name).encode(text, disallowed_special=())
    assert _stream(StreamDecoder(enc), ids, cuts) == text


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(1, 3), max_size=30))
def test_any_ids_decode_as_tiktoken_decodes(reference, name, data, cuts):
    ref = reference(name)
    # Byte tokens and the ids just above them are where UTF-8 sequences get cut.
    ids = data.draw(st.lists(st.integers(0, 1200) | st.integers(0, len(ref._mergeable_ranks) - 1), max_size=40))
    enc = bytepair.get_encoding(name)
    dec = StreamDecoder(enc)
    streamed = _stream(dec, ids, cuts)
    assert streamed == ref.decode(ids, errors="replace")
    # What it gives out is a prefix of the whole at every step (nothing is taken back).
    dec, seen = StreamDecoder(enc), ""
    for i, t in enumerate(ids):
        seen += dec.step(t)
        assert ref.decode(ids[: i + 1], errors="replace").startswith(seen.rstrip("\ufffd"))


def test_flush_starts_over():
    enc = bytepair.get_encoding("cl100k_base")
    dec = StreamDecoder(enc)
    (first,) = enc.encode("😀")[:1]
    assert dec.step(first) == ""  # the first byte tokens of an emoji complete nothing yet
    assert dec.flush() == "\ufffd"
    assert _stream(dec, enc.encode("ok"), []) == "ok"


def test_bad_id_is_a_key_error():
    dec = StreamDecoder(bytepair.get_encoding("cl100k_base"))
    with pytest.raises(KeyError, match="10000000"):
        dec.step(10_000_000)


@pytest.mark.parametrize("model", ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(1, 3), max_size=30))
def test_sentencepiece_stream_decodes_as_sentencepiece(model, data, cuts):
    import sentencepiece as spm

    path = mistral_model(model)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    enc = bytepair.load(path)
    # Byte pieces (<0xHH>, ids 3..258) mixed with ordinary pieces and controls.
    ids = data.draw(st.lists(st.integers(0, 300) | st.integers(0, ref.vocab_size() - 1), max_size=40))
    assert _stream(StreamDecoder(enc), ids, cuts) == ref.decode(ids)
