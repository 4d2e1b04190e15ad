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


# ------------------------------------------------------------- uneven batches, against tiktoken
# Who encodes which text depends on the texts' sizes (claims are sized by bytes and shrink as the
# batch runs out; for a flat batch the calling thread writes the first texts straight into the
# buffer and the workers' runs are appended after them), so these batches vary exactly that.


def uneven_batches(corpus_texts) -> dict[str, list[str]]:
    """Real documents (~4 KB, cut at line breaks as benchmarks/encode.py cuts them), with empty
    texts, one whole corpus (MBs) among them at the front, the middle or the end, and tiny
    batches."""
    docs = []
    for text in corpus_texts.values():
        doc = ""
        for line in text[:60_000].splitlines(keepends=True):
            doc += line
            if len(doc.encode()) >= 4000:
                docs.append(doc)
                doc = ""
    huge = corpus_texts["de"]
    return {
        "documents": docs,
        "empties": ["", *docs[:50], "", "", *docs[50:60], ""],
        "huge first": [huge, *docs[:40]],
        "huge middle": [*docs[:40], huge, *docs[40:80]],
        "huge last": [*docs[:40], huge],
        "two": docs[:2],
        "one": docs[:1],
        "none": [],
        "only empties": [""] * 7,
    }


def test_uneven_batches_equal_the_reference(pair, corpus_texts):
    enc, ref = pair
    for shape, batch in uneven_batches(corpus_texts).items():
        want = [ref.encode_ordinary(t) for t in batch]
        for threads in (1, 2, 4):
            assert enc.encode_ordinary_batch(batch, num_threads=threads) == want, (shape, threads)
            ids, offsets = enc.encode_ordinary_batch_to_numpy(batch, num_threads=threads)
            assert offsets.tolist()[0] == 0 and len(offsets) == len(batch) + 1, (shape, threads)
            assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(batch))] == want, (shape, threads)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_batches_report_the_lowest_failing_text_wherever_it_is(corpus_texts, threads):
    """Failing texts at either end, side by side, at the meeting point of the two sides, and
    behind one huge text: the error raised is the one a serial loop meets first (each failing
    text holds a different special token, so the message tells which one was raised)."""
    enc = bytepair.get_encoding("cl100k_base")
    docs = uneven_batches(corpus_texts)["documents"][:120]
    assert len(docs) == 120
    specials = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    for bad in ([0, 119], [119], [118, 119], [59, 60], [60, 61, 62], [1, 2], [5, 100]):
        batch = list(docs)
        for k, i in enumerate(bad):
            batch[i] = f"text {i} {specials[k % len(specials)]} more"
        for huge_at in (None, 0, 119):
            if huge_at is not None and huge_at not in bad:
                batch[huge_at] = corpus_texts["en"]
            with pytest.raises(ValueError) as want:
                enc.encode(batch[bad[0]])
            for call in (enc.encode_batch, enc.encode_batch_to_numpy):
                with pytest.raises(ValueError) as got:
                    call(batch, num_threads=threads)
                assert str(got.value) == str(want.value), (bad, huge_at, call.__name__)
