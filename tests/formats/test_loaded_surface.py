"""The surface every loaded tokenizer shares with tiktoken's encodings (one Encoding class): tiktoken's special-token
policy, batches that agree with single calls, and pickling (by the bytes the tokenizer was
loaded from: a pickle loads in a fresh process with no file and no network)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair

V3 = "mistral_instruct_tokenizer_240323.model.v3"


@pytest.fixture(scope="module")
def sp_pair(mistral):
    path = mistral(V3)
    return spm.SentencePieceProcessor(model_file=str(path)), bytepair.load(path)


def sp_reference(ref, text: str, allowed: set[str]) -> list[int]:
    """What a caller of ``sentencepiece`` does to honour control tokens (mistral-common builds
    its instruct sequences so): split at each allowed spelling (leftmost, longest), encode each
    part on its own, put the control ids between."""
    out, i = [], 0
    while True:
        hits = [(text.find(s, i), -len(s), s) for s in allowed if text.find(s, i) >= 0]
        if not hits:
            return out + ref.encode(text[i:])
        at, _, s = min(hits)
        out += ref.encode(text[i:at]) + [ref.piece_to_id(s)]
        i = at + len(s)


CONTROL_FRAGMENTS = ["[INST]", "[/INST]", "<s>", "</s>", "[TOOL_CALLS]", " ", "hello", "Hi", "\n", "é", "[", "]",
                     "INST", "/", "<", "s>", "x"]


def test_sentencepiece_default_takes_control_spellings_as_text(sp_pair):
    ref, ours = sp_pair
    text = "<s>[INST] hi [/INST]</s>"
    assert ours.encode(text) == ref.encode(text)
    assert ours.special_tokens_set >= {"<s>", "</s>", "[INST]", "[/INST]", "<unk>"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CONTROL_FRAGMENTS), max_size=12).map("".join))
def test_sentencepiece_allowed_special_splits_like_part_by_part_encoding(sp_pair, text):
    ref, ours = sp_pair
    assert ours.encode(text, allowed_special={"[INST]", "[/INST]"}) == sp_reference(ref, text, {"[INST]", "[/INST]"})
    assert ours.encode(text, allowed_special="all") == sp_reference(ref, text, ours.special_tokens_set)
    assert ours.encode(text, allowed_special=set(), disallowed_special=()) == ref.encode(text)


def test_sentencepiece_disallowed_raises_naming_the_token(sp_pair):
    _, ours = sp_pair
    with pytest.raises(ValueError, match=r"\[INST\]"):
        ours.encode("a [INST] b", disallowed_special="all")
    with pytest.raises(ValueError, match="</s>"):
        ours.encode("[INST] a </s>", allowed_special={"[INST]"}, disallowed_special="all")
    with pytest.raises(ValueError, match="</s>"):
        ours.encode_batch(["ok", "</s>"], disallowed_special={"</s>"})
    assert ours.encode("a [INST] b", disallowed_special={"</s>"}) == ours.encode("a [INST] b")


def test_sentencepiece_batch_matches_single_calls(sp_pair):
    _, ours = sp_pair
    texts = ["[INST] hello [/INST]", "", "<s>x</s>", "plain text"] * 5
    for kw in ({}, {"allowed_special": "all"}, {"allowed_special": {"</s>"}, "add_bos": True}):
        assert ours.encode_batch(texts, num_threads=2, **kw) == [ours.encode(t, **kw) for t in texts]


def test_merge_list_policy(exported):
    """QTKR (from tiktoken's cl100k): tiktoken's default policy over its specials."""
    from bytepair.registry.openai import CL100K_PATTERN

    qtkr = bytepair.load(exported / "v.qtkr", pat_str=CL100K_PATTERN)
    text = "hi <|endoftext|> there"
    with pytest.raises(ValueError, match="<\\|endoftext\\|>"):
        qtkr.encode(text)
    eot = qtkr.encode_single_token("<|endoftext|>")
    assert qtkr.encode(text, allowed_special="all") == qtkr.encode("hi ") + [eot] + qtkr.encode(" there")
    assert eot not in qtkr.encode(text, disallowed_special=())
    assert qtkr.encode_batch([text], allowed_special="all") == [qtkr.encode(text, allowed_special="all")]


@pytest.fixture(scope="module")
def exported(vocab, tmp_path_factory):
    enc = bytepair.load(vocab("cl100k_base.tiktoken"))
    out = tmp_path_factory.mktemp("surface")
    for fmt, name in (("qtkr", "v.qtkr"), ("leap", "v.leap"), ("tokenizer.json", "tokenizer.json")):
        enc.save(out / name, format=fmt, lossy=True)  # QTKR and LEAP: no split pattern
    return out


def _fresh_process_ids(blob: bytes, text: str) -> list[int]:
    """Unpickle and encode in a new interpreter (no file of the original is needed there)."""
    code = ("import pickle, sys; tok = pickle.loads(sys.stdin.buffer.read()); "
            f"print(tok.encode({text!r}))")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True)
    return eval(out.stdout)  # a printed list of ints


def test_pickle_in_a_fresh_process(sp_pair, exported, tmp_path):
    text = "Hello world, [INST] this is a test 123!"
    loaded = [sp_pair[1], bytepair.load(exported / "v.leap"), bytepair.load(exported / "tokenizer.json"),
              bytepair.load(exported / "v.qtkr", pat_str=r"\w+|\s+|[^\w\s]+")]
    for tok in loaded:
        blob = pickle.dumps(tok)
        back = pickle.loads(blob)
        assert type(back) is type(tok) and back.name == tok.name and back.n_vocab == tok.n_vocab
        assert back.encode(text) == tok.encode(text)
        assert _fresh_process_ids(blob, text) == tok.encode(text)
