"""One Encoding for every model: the same methods, the same parameters, the same meaning, for a
rank vocabulary (cl100k_base), a score model (a SentencePiece model mistral-common ships, and
LEAP), and merge-list models (tokenizer.json and QTKR written from cl100k_base). What only one
model has is on ``enc.model``.

Each method is checked against the model's own single-text ``encode`` (whose parity with the
reference libraries the parity tests hold), so these tests say: every surface is the same
encoder, whatever the model.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bytepair
from bytepair.errors import UnknownTokenError
from bytepair.models import MergeModel, RankModel, ScoreModel
from support import mistral_model

TEXTS = ["hello world", "  two  spaces\nand a line", "naïve café 😀 中文", "", "x" * 300]


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, bytepair.Encoding]:
    d = tmp_path_factory.mktemp("one-encoding")
    cl100k = bytepair.get_encoding("cl100k_base")
    cl100k.save(d / "cl100k.json")
    cl100k.save(d / "cl100k.qtkr", lossy=True)
    sp = bytepair.load(mistral_model("mistral_instruct_tokenizer_240323.model.v3"))
    sp.save(d / "sp.leap", lossy=True)
    return {
        "rank": cl100k,
        "score": sp,
        "leap": bytepair.load(d / "sp.leap"),
        "tokenizer.json": bytepair.load(d / "cl100k.json"),
        "qtkr": bytepair.load(d / "cl100k.qtkr"),
    }


KINDS = ["rank", "score", "leap", "tokenizer.json", "qtkr"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_model_is_an_encoding_with_one_surface(tokenizers, kind):
    enc = tokenizers[kind]
    assert type(enc) is bytepair.Encoding
    want = [enc.encode(t) for t in TEXTS]
    assert [enc.encode_ordinary(t) for t in TEXTS] == [enc.encode(t, allowed_special=set(), disallowed_special=())
                                                       for t in TEXTS]
    assert [enc.count(t) for t in TEXTS] == [len(w) for w in want]
    assert [enc.encode_to_numpy(t).tolist() for t in TEXTS] == want
    assert all(enc.encode_to_numpy(t).dtype == np.uint32 for t in TEXTS)
    for threads in (1, 2):
        assert enc.encode_batch(TEXTS, num_threads=threads) == want
        assert enc.encode_ordinary_batch(TEXTS, num_threads=threads) == [enc.encode_ordinary(t) for t in TEXTS]
        ids, offsets = enc.encode_batch_to_numpy(TEXTS, num_threads=threads)
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(TEXTS))] == want
        ids, offsets = enc.encode_ordinary_batch_to_numpy(TEXTS, num_threads=threads)
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(TEXTS))] == [enc.encode_ordinary(t) for t in TEXTS]
        assert enc.decode_batch(want, num_threads=threads) == [enc.decode(w) for w in want]
        assert enc.decode_bytes_batch(want, num_threads=threads) == [enc.decode_bytes(w) for w in want]
    assert enc.encode_ordinary_parallel(TEXTS[2], num_threads=2) == enc.encode_ordinary(TEXTS[2])
    for w in want:
        text, offsets = enc.decode_with_offsets(w)
        assert text == enc.decode(w) and len(offsets) == len(w) and offsets == sorted(offsets)
        assert b"".join(enc.decode_tokens_bytes(w)) == b"".join(enc.decode_single_token_bytes(i) for i in w)


@pytest.mark.parametrize("kind", KINDS)
def test_bos_eos_mean_the_same_everywhere(tokenizers, kind):
    enc = tokenizers[kind]
    ids = enc.encode("hello")
    if enc.bos_id is None:
        with pytest.raises(bytepair.VocabError, match="no BOS"):
            enc.encode("hello", add_bos=True)
    else:
        assert enc.encode("hello", add_bos=True) == [enc.bos_id, *ids]
        assert enc.count("hello", add_bos=True) == len(ids) + 1
        assert enc.encode_batch(["hello"], add_bos=True) == [[enc.bos_id, *ids]]
    if enc.eos_id is not None:
        assert enc.encode("hello", add_eos=True) == [*ids, enc.eos_id]


def test_home_defaults_and_tiktoken_none(tokenizers):
    # tiktoken's rule for rank vocabularies and QTKR: a special spelling in text is refused.
    for kind in ("rank", "qtkr"):
        with pytest.raises(ValueError, match="disallowed special token"):
            tokenizers[kind].encode("<|endoftext|>")
        # tiktoken takes disallowed_special=None as "nothing disallowed".
        assert tokenizers[kind].encode("<|endoftext|>", disallowed_special=None) == \
            tokenizers[kind].encode_ordinary("<|endoftext|>")
    # HF tokenizers splits added tokens out by default.
    hf = tokenizers["tokenizer.json"]
    assert hf.encode("a<|endoftext|>") == [*hf.encode_ordinary("a"), 100257]
    # SentencePiece takes control-piece spellings as text by default.
    sp = tokenizers["score"]
    assert sp.encode("[INST]") == sp.encode_ordinary("[INST]")
    assert sp.encode("[INST]", allowed_special="all") == [sp.encode_single_token("[INST]")]


@pytest.mark.parametrize("kind", KINDS)
def test_arguments_are_checked_alike(tokenizers, kind):
    enc = tokenizers[kind]
    with pytest.raises(TypeError):
        enc.encode("x", set())  # keyword-only, as in tiktoken
    with pytest.raises(TypeError, match="unexpected keyword"):
        enc.encode("x", allowed_specials="all")
    with pytest.raises(TypeError, match="expected text as str"):
        enc.encode(b"x")
    with pytest.raises(UnknownTokenError):
        enc.decode([enc.n_vocab + 5])


@pytest.mark.parametrize("kind", KINDS)
def test_pickles(tokenizers, kind):
    enc = tokenizers[kind]
    again = pickle.loads(pickle.dumps(enc))
    assert [again.encode(t) for t in TEXTS] == [enc.encode(t) for t in TEXTS]


def test_what_only_one_model_has_is_on_model(tokenizers):
    rank, sp, hf = tokenizers["rank"].model, tokenizers["score"].model, tokenizers["tokenizer.json"].model
    assert isinstance(rank, RankModel) and rank.kind == "rank"
    assert rank.mergeable_ranks[b"hello"] == 15339 and rank.splitter == "cl100k"
    assert isinstance(sp, ScoreModel) and sp.flavor == "sentencepiece"
    assert sp.piece_type(sp.piece_to_id("[INST]")) == "control"
    assert sp.id_to_piece(sp.piece_to_id("▁the")) == "▁the"
    assert isinstance(sp.score(sp.piece_to_id("▁the")), float)
    assert isinstance(hf, MergeModel) and len(hf.merges()) > 100_000
    assert len(hf.tokens()) == tokenizers["tokenizer.json"].n_vocab
    # Asking a model for what it does not have is a TypeError naming the model.
    with pytest.raises(TypeError, match="score BPE"):
        tokenizers["score"]._core_bpe.mergeable_ranks()
