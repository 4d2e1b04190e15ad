"""16 and 32 threads give the ids one thread gives, for every model type.

Two ways of sharing: the batch calls' own worker threads (`num_threads=16/32`, more than this
machine's cores, so workers are oversubscribed and finish in any order), and 16 or 32 Python
threads calling the same Encoding at once (each call releases the GIL while it encodes, so
they really run together, sharing the model's piece caches and the binding's per-thread id
vectors).
"""

from __future__ import annotations

import random
import threading

import pytest

import bytepair
from fuzztext import random_text
from support import REPO

GOLDEN = REPO / "tests" / "data" / "golden"
MODELS = ["cl100k_base", "tiny_sp.model", "tiny.leap", "tiny_hf.json", "tiny_hf_fallback.json", "tiny.qtkr"]


def _encoding(name: str) -> bytepair.Encoding:
    return bytepair.get_encoding(name) if name.endswith("_base") else bytepair.load(GOLDEN / name)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    rnd = random.Random(16)
    return [random_text(rnd, 120) for _ in range(400)] + ["", "a" * 3000, "日本語 " * 200, " \n" * 100]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("threads", [16, 32])
def test_batch_calls_on_many_threads_equal_one_thread(name, threads, texts):
    enc = _encoding(name)
    one = enc.encode_ordinary_batch(texts, num_threads=1)
    assert one == [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == one
    want = enc.encode_batch(texts, num_threads=1, allowed_special=set(), disallowed_special=())
    assert enc.encode_batch(texts, num_threads=threads, allowed_special=set(), disallowed_special=()) == want
    assert enc.decode_batch(one, num_threads=threads) == enc.decode_batch(one, num_threads=1)
    long_text = "\n".join(texts) * 3
    assert enc.encode_ordinary_parallel(long_text, num_threads=threads) == enc.encode_ordinary(long_text)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("threads", [16, 32])
def test_python_threads_sharing_one_encoding(name, threads, texts):
    enc = _encoding(name)
    enc.clear_cache()  # every thread starts on cold caches, filling them at once
    want = [enc.encode_ordinary(t) for t in texts]
    enc.clear_cache()
    results: dict[int, list[list[int]]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(k: int) -> None:
        try:
            start.wait()
            order = list(range(len(texts)))
            random.Random(k).shuffle(order)  # each thread in its own order
            got = [None] * len(texts)
            for i in order:
                got[i] = enc.encode_ordinary(texts[i])
            results[k] = got
        except BaseException as e:  # reported below: a thread's exception is otherwise lost
            errors.append(e)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[0]
    assert len(results) == threads
    for k, got in results.items():
        assert got == want, f"thread {k}"
