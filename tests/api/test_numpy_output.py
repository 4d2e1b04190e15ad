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
