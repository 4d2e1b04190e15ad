"""tiktoken's API surface: the same names, values and behaviour as the real tiktoken."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bytepair


def test_properties_equal_reference(pair):
    ours, ref = pair
    assert ours.n_vocab == ref.n_vocab
    assert ours.max_token_value == ref.max_token_value
    assert ours.special_tokens_set == ref.special_tokens_set
    if "<|endoftext|>" in ref.special_tokens_set:
        assert ours.eot_token == ref.eot_token
    for t in list(ref._special_tokens.values())[:5] + [0, 1000]:
        assert ours.is_special_token(t) == ref.is_special_token(t)


def test_vocabulary_views_equal_reference(pair):
    ours, ref = pair
    assert ours.token_byte_values() == ref.token_byte_values()
    assert ours._mergeable_ranks == ref._mergeable_ranks


def test_decode_family(pair):
    ours, ref = pair
    text = "Décodé: naïve 日本 👍🏽\n<|endoftext|>"
    tokens = ref.encode(text, disallowed_special=())
    assert ours.decode(tokens) == ref.decode(tokens)
    assert ours.decode_bytes(tokens) == ref.decode_bytes(tokens)
    assert ours.decode_tokens_bytes(tokens) == ref.decode_tokens_bytes(tokens)
    assert ours.decode_with_offsets(tokens) == ref.decode_with_offsets(tokens)
    assert ours.decode_batch([tokens, tokens[:3]]) == ref.decode_batch([tokens, tokens[:3]])
    assert ours.decode_bytes_batch([tokens]) == ref.decode_bytes_batch([tokens])
    for t in tokens[:5]:
        assert ours.decode_single_token_bytes(t) == ref.decode_single_token_bytes(t)
    broken = ref.encode("日")[:1] if len(ref.encode("日")) > 1 else ref._encode_single_piece(b"\xe6")
    assert ours.decode(broken) == ref.decode(broken)
    assert ours.decode(broken, errors="ignore") == ref.decode(broken, errors="ignore")
    with pytest.raises(UnicodeDecodeError):
        ours.decode(broken, errors="strict")


def test_encode_to_numpy(pair):
    ours, ref = pair
    text = "numpy output <|endoftext|> " * 3
    arr = ours.encode_to_numpy(text, allowed_special="all")
    assert arr.dtype == np.uint32
    assert arr.tolist() == ref.encode(text, allowed_special="all")
    assert np.array_equal(arr, ref.encode_to_numpy(text, allowed_special="all"))
    with pytest.raises(ValueError):
        ours.encode_to_numpy("<|endoftext|>" if "<|endoftext|>" in ref.special_tokens_set else next(iter(ref.special_tokens_set)))


def test_pickle_by_name():
    enc = bytepair.get_encoding("cl100k_base")
    data = pickle.dumps(enc)
    assert len(data) < 200, "a registered encoding pickles as its name"
    assert pickle.loads(data) is not None
    assert pickle.loads(data).encode("hello") == enc.encode("hello")


def test_custom_encoding_matches_tiktoken(reference):
    import tiktoken

    base = reference("cl100k_base")
    ranks = {k: v for k, v in base._mergeable_ranks.items() if v < 5000}
    kwargs = dict(pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens={"<|end|>": 5000})
    ours = bytepair.Encoding("small", **kwargs)
    ref = tiktoken.Encoding("small", **kwargs)
    text = "A smaller vocabulary splits words into more pieces.<|end|> Ünïcödé 123456"
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.n_vocab == ref.n_vocab == 5001
    assert ours._mergeable_ranks is ranks
    # Not registered: pickles by value and comes back equal.
    back = pickle.loads(pickle.dumps(ours))
    assert back.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")


def test_explicit_n_vocab_is_checked(reference):
    base = reference("cl100k_base")
    ranks = {k: v for k, v in base._mergeable_ranks.items() if v < 300}
    bytepair.Encoding("ok", pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=300)
    with pytest.raises(ValueError, match="explicit_n_vocab"):
        bytepair.Encoding("bad", pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=301)


def test_count_matches_encode(pair):
    ours, _ = pair
    text = "count me <|endoftext|> please " * 10
    assert ours.count(text, allowed_special="all") == len(ours.encode(text, allowed_special="all"))
    assert ours.count(text, disallowed_special=()) == len(ours.encode(text, disallowed_special=()))
