"""Batch and parallel calls work in a forked child, whatever the parent did first.

A thread pool's threads do not survive fork(): a child sending work to the parent's pool
waits forever. Before the fix every model type hung here once the parent had made a batch
call (the binding's per-size pools and rayon's global pool both came from the parent). A
child that hangs is killed after a generous deadline and the test fails; the deadline bounds
a hang, it does not measure speed.
"""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

import bytepair
from support import REPO

GOLDEN = REPO / "tests" / "data" / "golden"
# One file per model type: rank (tiktoken), merge list (HF tokenizer.json, QTKR), score
# (SentencePiece).
MODELS = ["tiny.tiktoken", "tiny.bpe2", "tiny_hf.json", "tiny.qtkr", "tiny_sp.model"]
TEXTS = [f"hello world {i} the quick brown fox" for i in range(100)]
DEADLINE = 120  # seconds; a working child needs well under one

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _load(name):
    if name.endswith(".tiktoken"):
        return bytepair.load(GOLDEN / name, pat_str=r"\s+|\S+")
    return bytepair.load(GOLDEN / name)


def _use_everything(enc):
    """Every call that runs on a thread pool, on 1, 2 and 8 threads. Returns the results."""
    out = []
    for n in (1, 2, 8):
        out.append(enc.encode_batch(TEXTS, num_threads=n))
        out.append(enc.encode_ordinary_batch(TEXTS, num_threads=n))
        out.append(enc.decode_batch(out[-1], num_threads=n))
        out.append(enc.encode_ordinary_parallel(" ".join(TEXTS) * 300, num_threads=n))
        ids, offsets = enc.encode_batch_to_numpy(TEXTS, num_threads=n)
        out.append((ids.tolist(), offsets.tolist()))
    return out


def _in_child(fn) -> int:
    """Runs `fn` in a forked child; its exit status (0: `fn` returned True). Kills a hung child."""
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            code = 0 if fn() else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child hung (killed after {DEADLINE} s)")


@pytest.mark.parametrize("name", MODELS)
def test_os_fork_after_batch_calls(name):
    enc = _load(name)
    expected = _use_everything(enc)  # the parent's pools now exist
    assert _in_child(lambda: _use_everything(enc) == expected) == 0


def test_os_fork_load_and_train_in_child():
    # Loading a tokenizer.json and training use thread pools too (rayon::join, the trainer's
    # own pool); the parent did both before forking.
    _load("tiny_hf.json").encode_batch(TEXTS)
    docs = ["low lower lowest newer wider"] * 50
    trained = bytepair.train(docs, vocab_size=300, num_threads=2)

    def child():
        enc = _load("tiny_hf.json")
        again = bytepair.train(docs, vocab_size=300, num_threads=2)
        return enc.encode_batch(TEXTS, num_threads=2) == [enc.encode(t) for t in TEXTS] and \
            again.encode_batch(docs) == trained.encode_batch(docs)

    assert _in_child(child) == 0


_POOL_ENC = None


def _pool_task(i):
    return _POOL_ENC.encode_batch(TEXTS[i:i + 10], num_threads=2), _POOL_ENC.decode_batch([[1, 2]] * 4)


@pytest.mark.parametrize("name", MODELS)
def test_multiprocessing_fork_pool(name):
    global _POOL_ENC
    _POOL_ENC = enc = _load(name)
    _use_everything(enc)
    expected = [_pool_task(i) for i in range(4)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        try:
            got = pool.map_async(_pool_task, range(4)).get(timeout=DEADLINE)
        except multiprocessing.TimeoutError:
            pool.terminate()
            pytest.fail(f"a fork pool worker hung (no answer in {DEADLINE} s)")
    assert got == expected
