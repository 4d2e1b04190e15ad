"""SentencePiece BPE models: ids and decoded text identical to the `sentencepiece` library on the
real corpora and on Hypothesis text, for the two real models mistral-common ships."""

from __future__ import annotations

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair

MODELS = ["tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"]


@pytest.fixture(scope="module", params=MODELS)
def pair(request, mistral):
    path = mistral(request.param)
    return spm.SentencePieceProcessor(model_file=str(path)), bytepair.load(path)


def test_corpus_ids_with_and_without_bos_eos(pair, docs):
    ref, ours = pair
    mismatches = sum(ref.encode(d) != ours.encode(d) for d in docs)
    mismatches += sum(ref.encode(d, add_bos=True, add_eos=True) != ours.encode(d, add_bos=True, add_eos=True)
                      for d in docs)
    assert mismatches == 0


def test_corpus_decode(pair, docs):
    ref, ours = pair
    ids = [ref.encode(d) for d in docs]
    assert sum(ref.decode(i) != ours.decode(i) for i in ids) == 0


def test_whole_corpus_file_as_one_text(pair, corpus_text):
    """One long input: SentencePiece merges across the whole text, we by segments."""
    ref, ours = pair
    assert ref.encode(corpus_text) == ours.encode(corpus_text)


def test_vocabulary_surface(pair):
    ref, ours = pair
    assert ours.n_vocab == ref.get_piece_size()
    assert (ours.bos_id, ours.eos_id, ours.model.unk_id) == (ref.bos_id(), ref.eos_id(), ref.unk_id())
    for i in range(0, ours.n_vocab, 97):
        assert ours.model.id_to_piece(i) == ref.id_to_piece(i)
        assert ours.model.score(i) == ref.get_score(i)
        assert ours.model.piece_to_id(ref.id_to_piece(i)) == i
    assert ours.model.piece_to_id("no such piece \x00") == ref.piece_to_id("no such piece \x00")


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_hypothesis_text(pair, text):
    ref, ours = pair
    assert ours.encode(text, add_bos=True) == ref.encode(text, add_bos=True)
    ids = ref.encode(text)
    assert ours.decode(ids) == ref.decode(ids)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.integers(min_value=0, max_value=31999), max_size=30))
def test_decode_any_ids(pair, ids):
    """Arbitrary ids (byte pieces that are not UTF-8, control pieces, unknown) decode alike."""
    ref, ours = pair
    assert ours.decode(ids) == ref.decode(ids)


def test_user_defined_and_control_pieces(mistral):
    """v3 has user-defined pieces (matched whole, before BPE) and [INST]-style control pieces
    (plain text when they appear in input, as in SentencePiece)."""
    path = mistral("mistral_instruct_tokenizer_240323.model.v3")
    ref, ours = spm.SentencePieceProcessor(model_file=str(path)), bytepair.load(path)
    user = [ref.id_to_piece(i) for i in range(ref.get_piece_size()) if ref.is_unknown(i) is False
            and ours.model.piece_type(i) == "user_defined"]
    control = [ref.id_to_piece(i) for i in range(ref.get_piece_size()) if ref.is_control(i)]
    assert user and control
    text = " ".join(user[:10] + control[:10]) + "x".join(user[10:])
    assert ours.encode(text) == ref.encode(text)


@pytest.mark.parametrize("num_threads", [1, 2])
def test_batch_matches_sentencepiece(pair, docs, num_threads):
    """The threaded batch gives sentencepiece's own batch result, in order."""
    ref, ours = pair
    batch = docs[:3000]
    assert ours.encode_batch(batch, num_threads=num_threads) == ref.encode(batch)
    assert (ours.encode_batch(batch, add_bos=True, add_eos=True, num_threads=num_threads)
            == ref.encode(batch, add_bos=True, add_eos=True))


def test_lone_surrogates_become_replacement_characters(pair):
    """Text that cannot be UTF-8 is repaired as `Encoding` does (each lone surrogate becomes
    U+FFFD, a split pair is joined), then encoded as sentencepiece encodes the repaired text."""
    ref, ours = pair
    cases = {"a\ud800b": "a\ufffdb", "x \udfff": "x \ufffd", "\ud83d\ude00 ok": "\U0001f600 ok"}
    for bad, repaired in cases.items():
        assert ours.encode(bad) == ref.encode(repaired)
    assert ours.encode_batch(list(cases), num_threads=2) == ref.encode(list(cases.values()))


@pytest.mark.parametrize("bad", [b"bytes", 123, None])
def test_non_str_is_type_error(pair, bad):
    _, ours = pair
    with pytest.raises(TypeError, match="expected text as str"):
        ours.encode(bad)
    with pytest.raises(TypeError, match="expected text as str"):
        ours.encode_batch(["fine", bad])
    with pytest.raises(TypeError):
        ours.encode_batch("a single str")
