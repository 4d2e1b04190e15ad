"""Resource limits: arguments and inputs that would exhaust the machine get a clear error.

Each test here failed before its fix (an abort, an internal error, an OS error or a
TypeError where tiktoken accepts the call).
"""

from __future__ import annotations

import pytest

import bytepair
from support import REPO

GOLDEN = REPO / "tests" / "data" / "golden"
DOCS = ["low lower lowest newer wider"] * 20


@pytest.mark.parametrize("n", [2**31, 2**62, 10**4, 1025, 0, -1])
def test_train_num_threads_out_of_range_is_value_error(n):
    # 2**31 aborted the process, 2**62 raised an internal error, 10**4 an OSError.
    with pytest.raises(ValueError, match="num_threads must be an int from 1 to 1024"):
        bytepair.train(DOCS, vocab_size=270, num_threads=n)


def test_train_num_threads_none_and_bounds_work():
    ids = bytepair.train(DOCS, vocab_size=270, num_threads=1).encode_ordinary(DOCS[0])
    assert bytepair.train(DOCS, vocab_size=270, num_threads=None).encode_ordinary(DOCS[0]) == ids
    assert bytepair.train(DOCS, vocab_size=270, num_threads=1024).encode_ordinary(DOCS[0]) == ids


@pytest.mark.parametrize("name", ["tiny.bpe2", "tiny_hf.json", "tiny_sp.model"])
def test_batch_num_threads_none_as_tiktoken(name):
    # tiktoken hands num_threads to ThreadPoolExecutor, which takes None; these were TypeErrors.
    enc = bytepair.load(GOLDEN / name)
    texts = ["hello world", "goodbye world"]
    ids = [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=None) == ids
    assert enc.encode_batch(texts, num_threads=None) == [enc.encode(t) for t in texts]
    assert enc.encode_ordinary_parallel(texts[0], num_threads=None) == ids[0]
    assert enc.decode_batch(ids, num_threads=None) == [enc.decode(i) for i in ids]
    assert enc.decode_bytes_batch(ids, num_threads=None) == [enc.decode_bytes(i) for i in ids]
