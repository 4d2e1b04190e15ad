"""encode_to_numpy: the ids are encoded into a buffer of their own (``_core.IdBuffer``) that the
array wraps without a copy. These tests hold what that must keep: the same ids as ``encode``,
a writable uint32 array, the buffer alive as long as the array and released with it, and no
export left behind by a call that fails."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import bytepair

TEXTS = ["hello world", "", "naïve café 😀 中文\n" * 50, "x" * 5000, "<|endoftext|> as text"]


@pytest.fixture(scope="module")
def enc() -> bytepair.Encoding:
    return bytepair.get_encoding("cl100k_base")


@pytest.mark.parametrize("text", TEXTS)
def test_same_ids_as_encode(enc, text):
    arr = enc.encode_to_numpy(text, disallowed_special=())
    assert arr.dtype == np.uint32 and arr.ndim == 1 and arr.flags.c_contiguous
    assert arr.tolist() == enc.encode(text, disallowed_special=())


def test_options_reach_the_core(enc):
    text = "a<|endoftext|>b"
    assert enc.encode_to_numpy(text, allowed_special="all").tolist() == enc.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_to_numpy(text)


def test_array_is_writable_and_owns_its_ids(enc):
    # Each call has its own buffer: writing to one array changes no other, and a later call
    # does not reuse the memory of an array still alive.
    a = enc.encode_to_numpy("hello world")
    b = enc.encode_to_numpy("hello world")
    a[0] = 7
    assert a.flags.writeable and a.tolist() == [7, 1917] and b.tolist() == [15339, 1917]


def test_buffer_outlives_the_call_and_is_released_with_the_array(enc):
    buf = enc._core_bpe.encode_to_buffer("hello world " * 1000)
    base = sys.getrefcount(buf)
    view = memoryview(buf)
    assert view.format == "I" and view.itemsize == 4 and view.shape == (len(buf),) and not view.readonly
    arr = np.frombuffer(buf, np.uint32)
    assert sys.getrefcount(buf) > base  # the exports hold the buffer
    view.release()
    del arr
    gc.collect()
    assert sys.getrefcount(buf) == base  # and give it back: nothing left exported
    arr = enc.encode_to_numpy("hello world " * 1000)
    del buf
    gc.collect()
    assert arr.tolist() == enc.encode("hello world " * 1000)  # its own buffer, still alive


def test_failed_call_leaves_nothing_exported(enc):
    # A failing call builds no buffer: afterwards the calls before and after it still work
    # and hold exactly their own references.
    before = enc._core_bpe.encode_to_buffer("hello world")
    base = sys.getrefcount(before)
    for _ in range(100):
        with pytest.raises(ValueError):
            enc.encode_to_numpy("<|endoftext|>")
        with pytest.raises(TypeError):
            enc.encode_to_numpy(b"bytes are not text")  # type: ignore[arg-type]
    assert sys.getrefcount(before) == base
    assert np.frombuffer(before, np.uint32).tolist() == [15339, 1917]


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_arrays_of_short_texts_hold_their_ids_not_their_reservation(enc):
    # Each call reserves one id per byte of text (4 bytes per byte). A short text's buffer is
    # shrunk to its ids before numpy wraps it: without that, holding many arrays of short
    # documents held about twice their ids (431 MB for 199 MB of ids over 50,000 arrays of a
    # 4 KB English text; 226 MB with the shrink).
    doc = "The quick brown fox jumps over the lazy dog, again and again. " * 64  # 4 KB
    enc.encode_to_numpy(doc)
    gc.collect()
    before = _resident_bytes()
    kept = [enc.encode_to_numpy(doc) for _ in range(20_000)]
    grown = _resident_bytes() - before
    ids = sum(a.nbytes for a in kept)
    assert ids > 0 and grown < 1.5 * ids, (grown, ids)


# ------------------------------------------------------------------------- flat batches
#
# encode_ordinary_batch_to_numpy / encode_batch_to_numpy: (ids uint32, offsets int64), text i's
# ids at ids[offsets[i]:offsets[i + 1]] (Arrow's list layout). Parity on real corpora is in
# tests/parity/test_corpora.py; here, the layout and the edges.

BATCH = ["hello world", "", "naïve café 😀 中文\n" * 50, "", "x" * 5000, "<|endoftext|> as text", ""]


def split(ids, offsets) -> list[list[int]]:
    return [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_flat_batch_layout(enc, threads):
    ids, offsets = enc.encode_ordinary_batch_to_numpy(BATCH * 20, num_threads=threads)
    assert ids.dtype == np.uint32 and ids.ndim == 1 and ids.flags.c_contiguous and ids.flags.writeable
    assert offsets.dtype == np.int64 and offsets.ndim == 1 and offsets.flags.c_contiguous
    assert len(offsets) == len(BATCH) * 20 + 1 and offsets[0] == 0 and offsets[-1] == len(ids)
    assert (np.diff(offsets) >= 0).all()
    assert split(ids, offsets) == enc.encode_ordinary_batch(BATCH * 20)


def test_flat_batch_is_an_arrow_large_list_as_it_is(enc):
    """What the docstring promises: ``LargeListArray.from_arrays(offsets, ids)`` takes the
    output without a copy of the ids and gives the batch back, text by text."""
    import pyarrow as pa

    ids, offsets = enc.encode_ordinary_batch_to_numpy(BATCH * 20, num_threads=2)
    array = pa.LargeListArray.from_arrays(offsets, ids)
    assert array.type == pa.large_list(pa.uint32())
    assert array.to_pylist() == enc.encode_ordinary_batch(BATCH * 20)
    assert array.values.buffers()[1].address == ids.ctypes.data  # the ids' own memory


@pytest.mark.parametrize("threads", [1, 2])
def test_empty_batch_and_empty_texts(enc, threads):
    for call in (enc.encode_ordinary_batch_to_numpy, enc.encode_batch_to_numpy):
        ids, offsets = call([], num_threads=threads)
        assert ids.dtype == np.uint32 and ids.tolist() == []
        assert offsets.dtype == np.int64 and offsets.tolist() == [0]
        ids, offsets = call(["", "", ""], num_threads=threads)
        assert ids.tolist() == [] and offsets.tolist() == [0, 0, 0, 0]
        ids, offsets = call(iter(["", "hi", ""]), num_threads=threads)  # any iterable of str
        assert ids.tolist() == enc.encode("hi") and offsets.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("threads", [1, 2])
def test_flat_batch_options_reach_the_core(enc, threads):
    texts = ["a<|endoftext|>b", "plain", "<|endoftext|>"] * 10
    for kw in ({"allowed_special": "all"}, {"disallowed_special": ()}, {"allowed_special": {"<|endoftext|>"}}):
        ids, offsets = enc.encode_batch_to_numpy(texts, num_threads=threads, **kw)
        assert split(ids, offsets) == enc.encode_batch(texts, **kw)


@pytest.mark.parametrize("threads", [1, 2])
def test_flat_batch_raises_the_first_bad_texts_error(enc, threads):
    # Texts are checked where they are encoded, on any thread: the error raised is the one a
    # serial loop meets first.
    texts = ["fine"] * 300 + ["x <|fim_prefix|>"] + ["fine"] * 300 + ["<|endoftext|>"]
    with pytest.raises(ValueError, match="fim_prefix"):
        enc.encode_batch_to_numpy(texts, num_threads=threads)


def test_flat_batch_repairs_lone_surrogates_as_encode_does(enc):
    texts = ["a\ud800b", "\udfff", "ok"]
    ids, offsets = enc.encode_ordinary_batch_to_numpy(texts, num_threads=2)
    assert split(ids, offsets) == [enc.encode_ordinary(t) for t in texts]


@pytest.mark.parametrize("bad", ["a str, not a list of them", [b"bytes"], ["ok", 3], 5, None, [None]])
def test_flat_batch_bad_input_is_type_error(enc, bad):
    with pytest.raises(TypeError):
        enc.encode_ordinary_batch_to_numpy(bad)
    with pytest.raises(TypeError):
        enc.encode_batch_to_numpy(bad, num_threads=2)


@pytest.mark.parametrize("threads", ["2", 1.5, -1])
def test_flat_batch_bad_thread_count_is_an_error(enc, threads):
    with pytest.raises((TypeError, OverflowError)):
        enc.encode_ordinary_batch_to_numpy(["hi"], num_threads=threads)


def test_flat_batch_buffers_are_released_with_their_arrays(enc):
    ids_buf, offsets_buf = enc._core_bpe.encode_ordinary_batch_to_buffers(["hello world"] * 100, 2)
    for buf, fmt, size in ((ids_buf, "I", 4), (offsets_buf, "q", 8)):
        base = sys.getrefcount(buf)
        view = memoryview(buf)
        assert view.format == fmt and view.itemsize == size and view.shape == (len(buf),)
        arr = np.frombuffer(buf, np.uint32 if fmt == "I" else np.int64)
        assert sys.getrefcount(buf) > base
        view.release()
        del arr
        gc.collect()
        assert sys.getrefcount(buf) == base
    assert np.frombuffer(offsets_buf, np.int64).tolist() == list(range(0, 201, 2))
