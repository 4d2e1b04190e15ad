"""Batches on threads give exactly the serial results, in order, for any thread count; errors
inside a batch reach the caller as exceptions."""

from __future__ import annotations

import random

import pytest

import bytepair

from fuzztext import random_text


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
    # The flat batch: the same ids, text i's at ids[offsets[i]:offsets[i + 1]].
    ids, offsets = enc.encode_batch_to_numpy(texts, num_threads=threads, allowed_special="all")
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == got


def test_batch_refuses_disallowed_special(texts):
    enc = bytepair.get_encoding("cl100k_base")
    with pytest.raises(ValueError):
        enc.encode_batch(texts, num_threads=2)
    with pytest.raises(ValueError):
        enc.encode_batch_to_numpy(texts, num_threads=2)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_parallel_long_text_equals_serial(name):
    """One text over 1 MB, cut at safe points and encoded on threads: the serial ids."""
    enc = bytepair.get_encoding(name)
    rnd = random.Random(9)
    lines = [random_text(rnd, 60) + rnd.choice(["\n", "\nword ", " \n\nAbc", "\r\nx", "  \n"]) for _ in range(14000)]
    text = "".join(lines)
    assert len(text.encode()) > 1 << 20
    assert enc.encode_ordinary_parallel(text, num_threads=4) == enc.encode_ordinary(text)
    # No safe point at all: serial fallback, same ids.
    flat = "a b " * 300_000
    assert enc.encode_ordinary_parallel(flat, num_threads=2) == enc.encode_ordinary(flat)


def test_parallel_long_corpus_equals_serial(corpus_texts):
    enc = bytepair.get_encoding("cl100k_base")
    for name, text in corpus_texts.items():
        assert enc.encode_ordinary_parallel(text, num_threads=2) == enc.encode_ordinary(text), name


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_batch_raises_the_first_bad_texts_error(texts, threads):
    """Texts are checked on the worker threads, in any order; the error raised is the one a
    serial loop meets first, whatever thread finds it first."""
    enc = bytepair.get_encoding("cl100k_base")
    batch = [t for t in texts if "<|" not in t]
    batch[40] = "early <|fim_prefix|> text"
    batch[len(batch) - 3] = "late <|endoftext|> text"
    with pytest.raises(ValueError) as want:
        enc.encode(batch[40])
    with pytest.raises(ValueError) as got:
        enc.encode_batch(batch, num_threads=threads)
    assert str(got.value) == str(want.value)
    assert "<|fim_prefix|>" in str(got.value)
    with pytest.raises(ValueError) as got:
        enc.encode_batch_to_numpy(batch, num_threads=threads)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("enabled", [True, False])
def test_batch_leaves_the_garbage_collector_as_it_found_it(texts, enabled):
    """A batch pauses Python's cyclic collector while it builds lists; it must come back in the
    state the caller had, after success and after an error alike."""
    import gc

    enc = bytepair.get_encoding("cl100k_base")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        enc.encode_ordinary_batch(texts, num_threads=2)
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError):
            enc.encode_batch(texts, num_threads=2)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
