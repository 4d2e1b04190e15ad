"""The ``list[int]`` that ``encode_ordinary`` and the list batches return: its item array is
allocated by bytepair and filled once (crates/python/src/ids.rs, ``list_from``), not zeroed by
``PyList_New`` first. These tests hold what such a list must stay: the same ids as the numpy
path, and a list that CPython grows, shrinks, sorts, copies and frees with its own allocator.
The last runs in a child under ``PYTHONMALLOC=debug``, whose allocator checks every realloc and
free against the allocator that made the block and aborts the process on a mismatch."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest

import bytepair

TEXTS = ["", "a", "hello world", "naïve café 😀 中文\n" * 50, "x" * 5000, "def f(x):\n    return x\n" * 400]


@pytest.fixture(scope="module")
def enc() -> bytepair.Encoding:
    return bytepair.get_encoding("o200k_base")


def reshape(ids: list[int]) -> list[int]:
    """List operations that resize, move and free the item array."""
    ids.append(7)
    ids.extend(range(3))
    ids.insert(0, 5)
    del ids[1:4]
    ids.pop()
    ids *= 2
    ids.sort()
    ids.reverse()
    ids[: len(ids) // 2] = []
    return ids + ids.copy()


@pytest.mark.parametrize("text", TEXTS)
def test_list_holds_the_ids_and_behaves_as_a_list(enc, text):
    ids = enc.encode_ordinary(text)
    want = enc.encode_to_numpy(text).tolist()
    assert type(ids) is list and len(ids) == len(want) and ids == want
    assert all(type(i) is int for i in ids)
    assert reshape(ids) == reshape(list(want))


def test_batch_lists_behave_as_lists(enc):
    out = enc.encode_ordinary_batch(TEXTS, num_threads=2)
    assert out == [enc.encode_to_numpy(t).tolist() for t in TEXTS]
    assert [reshape(ids) for ids in out] == [reshape(enc.encode_to_numpy(t).tolist()) for t in TEXTS]


CHILD = f"""
import gc, bytepair
TEXTS = {TEXTS!r}
enc = bytepair.get_encoding("o200k_base")
{inspect.getsource(reshape)}
kept = []
for round in range(20):
    for t in TEXTS:
        ids = enc.encode_ordinary(t * (round % 3 + 1))
        kept.append(reshape(ids) if round % 2 else ids)
    kept.extend(enc.encode_ordinary_batch(TEXTS, num_threads=2))
    if len(kept) > 60:
        del kept[:30]
        gc.collect()
del kept
gc.collect()
print("ok")
"""


def test_lists_pass_the_debug_allocator():
    env = dict(os.environ, PYTHONMALLOC="debug")
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


# The lists take each id's `int` from one table for the process without counting the reference
# (ids.rs, `keep_forever` and `int`, say why that is safe). Were the table's ints not kept
# above every count they see, the first list freed would free them and the next list would
# hand out freed objects: under the debug allocator their memory is overwritten when freed,
# so the values below would be wrong or the child would crash.
SHARED_CHILD = """
import gc, bytepair
encs = [bytepair.get_encoding(n) for n in ("o200k_base", "cl100k_base")]
texts = ["hello world, hello again", "naïve café 😀 中文\\n" * 20, "def f(x):\\n    return x\\n" * 50]
for round in range(30):
    for enc in encs:
        for t in texts:
            want = enc.encode_to_numpy(t).tolist()
            got = enc.encode_ordinary(t)
            assert got == want and all(type(i) is int for i in got), (round, t[:20])
            batch = enc.encode_ordinary_batch([t] * 8, num_threads=2)
            assert batch == [want] * 8
            del got, batch
            gc.collect()
# One int per id, whatever the encoding: ids that two vocabularies share are the same objects.
t = "on;\\nat;\\nal;\\now;\\ner;\\n" * 3
a, b = encs[0].encode_ordinary(t), encs[1].encode_ordinary(t)
first = {}
for x in a + b + encs[0].encode_ordinary(t):
    assert first.setdefault(x, x) is x, x
assert len({x for x in set(a) & set(b) if x > 256}) >= 3, (a, b)  # past CPython's small ints
print("ok")
"""


def test_listed_ints_survive_their_lists_and_are_shared():
    env = dict(os.environ, PYTHONMALLOC="debug")
    run = subprocess.run([sys.executable, "-c", SHARED_CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


def test_ids_at_and_past_the_int_tables_end():
    """Ids below 2^20 are listed from the process's table of ints, larger ones as fresh ints
    (ids.rs, `TABLED_IDS`): both kinds, and the last id of the table, come out as themselves,
    in lists and in batches, and encode back to the text."""
    base = bytepair.get_encoding("cl100k_base")
    specials = {"<|edge|>": (1 << 20) - 1, "<|over|>": 1 << 20, "<|far|>": 2_000_000}
    enc = bytepair.Encoding("far_ids", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                            special_tokens=specials)
    text = "hi <|far|> <|edge|><|over|> hi"
    want = [6151, 220, 2_000_000, 220, (1 << 20) - 1, 1 << 20, 15960]
    for _ in range(3):
        ids = enc.encode(text, allowed_special="all")
        assert ids == want and all(type(i) is int for i in ids)
        assert enc.encode_batch([text] * 20, allowed_special="all", num_threads=2) == [want] * 20
        assert enc.decode(ids) == text
        del ids
