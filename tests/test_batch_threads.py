"""Batches on threads give exactly the serial results, in order, for any thread count; errors
inside a batch reach the caller as exceptions."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import bytepair

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzztext import random_text  # noqa: E402


@pytest.fixture(scope="module")
def texts() -> list[str]:
    rnd = random.Random(5)
    docs = [random_text(rnd, 200) for _ in range(300)]
    return docs + ["", "a" * 5000, " " * 3000, "<|endoftext|> x"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_batch_equals_serial(name, threads, texts):
    enc = bytepair.get_encoding(name)
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == [enc.encode_ordinary(t) for t in texts]
    got = enc.encode_batch(texts, num_threads=threads, allowed_special="all")
    assert got == [enc.encode(t, allowed_special="all") for t in texts]


def test_batch_refuses_disallowed_special(texts):
    enc = bytepair.get_encoding("cl100k_base")
    with pytest.raises(ValueError):
        enc.encode_batch(texts, num_threads=2)
