"""Long pieces against tiktoken: the merge engine for pieces over 128 bytes (a backtracking
longest-match walk, crates/core/src/encode/backtrack.rs) on the issue's worst-case inputs, on
generated long pieces, and on rank tables that are not a BPE merge order.

The reference is the real tiktoken over the same ranks (the shared .tiktoken files). Bounded:
inputs of at most a few tens of kilobytes, a few hundred generated pieces.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

from support import VOCAB_DIR, require, require_module

hypothesis = require_module("hypothesis")
tiktoken = require_module("tiktoken")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import bytepair  # noqa: E402
from bytepair.registry import openai  # noqa: E402


PATTERNS = {"cl100k_base": openai.CL100K_PATTERN, "o200k_base": openai.O200K_PATTERN}


def _ranks(name: str) -> dict[bytes, int]:
    path = VOCAB_DIR / f"{name}.tiktoken"
    require(path.is_file(), str(path))
    from tiktoken.load import load_tiktoken_bpe

    return load_tiktoken_bpe(str(path))


def _pair(name: str, ranks: dict[bytes, int]):
    pattern = PATTERNS[name]
    ref = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    ours = bytepair.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return ref, ours


@pytest.fixture(scope="module", params=list(PATTERNS))
def pair(request):
    return _pair(request.param, _ranks(request.param))


def worst_cases(n: int, seed: int = 7) -> dict[str, str]:
    """The issue's kinds of worst-case input, plus two more mixes, n characters each
    (benchmarks/encode.py builds its own inputs of the same kinds)."""
    rnd = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    rows = [{"id": i, "name": f"item{i}", "tags": ["x", "y"], "v": i * 0.5} for i in range(n // 40 + 1)]
    return {
        "a*n": "a" * n,
        "space*n": " " * n,
        "newline*n": "\n" * n,
        "caret*n": "^" * n,
        "letters": "".join(rnd.choice(letters) for _ in range(n)),
        "CJK": "".join(chr(rnd.randrange(0x4E00, 0xA000)) for _ in range(n)),
        "base64": base64.b64encode(rnd.randbytes(n)).decode()[:n],
        "json": json.dumps(rows, separators=(",", ":"))[:n],
        "digits+letters": "".join(rnd.choice("ab1") for _ in range(n)),
        "tabs and spaces": "".join(rnd.choice(" \t") for _ in range(n)),
    }


@pytest.mark.parametrize("n", [129, 1000, 20_000])
def test_worst_cases(pair, n):
    ref, ours = pair
    for label, text in worst_cases(n).items():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), label


# Alphabets whose strings are long single pieces (or long runs of a few pieces).
ALPHABETS = ["a", "ab", "abc", "aA", " ", " \n", "^", "^!", "xyzXYZ", "的一是不了人我在有他这", "\u00e9e\u0301"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_long_pieces(pair, data):
    ref, ours = pair
    alphabet = data.draw(st.sampled_from(ALPHABETS))
    text = data.draw(st.text(alphabet=alphabet, min_size=129, max_size=3000))
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece=st.binary(min_size=129, max_size=2000))
def test_raw_byte_pieces(pair, piece):
    """Any bytes as one piece: tiktoken's `_encode_single_piece`, no pre-tokenizer."""
    ref, ours = pair
    assert ours._encode_single_piece(piece) == ref._encode_single_piece(piece)


def _scrambled(ranks: dict[bytes, int], seed: int) -> dict[bytes, int]:
    """The same tokens, with the ranks of a third of the multi-byte tokens shuffled among
    themselves: a table that is not a merge order (tokens below their parts, tokens that do not
    encode to themselves), which the long-piece engine must still encode exactly."""
    rnd = random.Random(seed)
    multi = [t for t in ranks if len(t) > 1 and rnd.random() < 1 / 3]
    values = [ranks[t] for t in multi]
    rnd.shuffle(values)
    out = dict(ranks)
    out.update(zip(multi, values))
    return out


@pytest.mark.parametrize("name", list(PATTERNS))
def test_tables_that_are_not_a_merge_order(name):
    ref, ours = _pair(name, _scrambled(_ranks(name), seed=11))
    rnd = random.Random(5)
    for label, text in worst_cases(3000).items():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), label
    for _ in range(40):
        piece = bytes(rnd.choice(b"abcdefghij ,.e\xc3\xa9") for _ in range(rnd.randrange(129, 1500)))
        assert ours._encode_single_piece(piece) == ref._encode_single_piece(piece)
