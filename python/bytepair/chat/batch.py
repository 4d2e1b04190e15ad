"""Rendering many conversations on all cores: :func:`render_many`.

Rendering is Python (template logic) around the Rust encoder, so threads would serialize on the
GIL; the conversations are cut into chunks and rendered in worker processes. On platforms with
``fork`` the workers inherit the encoding and template from the parent (no pickling of a
200k-entry vocabulary per worker); elsewhere they are pickled once per worker. Results come
back in input order.
"""

from __future__ import annotations

import multiprocessing
import os
from array import array
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bytepair.errors import ChatError

#: Conversations per task: large enough that process round trips cost little, small enough to
#: balance the load across workers.
CHUNK = 256

_job: tuple | None = None  # (encoding, template, max_tokens, drop_long, options) in a worker


def render_many(
    encoding: Any,
    conversations: Iterable[Any],
    *,
    template: Any = None,
    max_tokens: int | None = None,
    drop_long: bool = False,
    num_workers: int | None = None,
    **options: Any,
) -> list[tuple[list[int], list[int]] | None]:
    """``render_conversation`` for each conversation, on ``num_workers`` processes (default:
    every core), in input order.

    With ``max_tokens``, a longer conversation is truncated, or, with ``drop_long``, left out:
    its entry is ``None``. A :class:`ChatError` names the conversation's index.
    """
    if drop_long and max_tokens is None:
        raise ChatError("drop_long needs max_tokens")
    if max_tokens is not None and max_tokens < 0:
        raise ChatError(f"max_tokens must be >= 0, got {max_tokens}")
    conversations = list(conversations)
    workers = num_workers or os.cpu_count() or 1
    job = (encoding, template, max_tokens, drop_long, options)
    chunks = [(start, conversations[start:start + CHUNK]) for start in range(0, len(conversations), CHUNK)]
    if workers == 1 or len(chunks) <= 1:
        return [r for start, chunk in chunks for r in _render_chunk(job, start, chunk)]
    global _job
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods:
        _job = job  # inherited by the forked workers
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                parts = list(pool.map(_forked_chunk, chunks))
        finally:
            _job = None
    else:
        with ProcessPoolExecutor(workers, initializer=_set_job, initargs=(job,)) as pool:
            parts = list(pool.map(_forked_chunk, chunks))
    out = []
    for part in parts:
        if isinstance(part, ChatError):
            raise part
        out += _unpack(part)
    return out


def _set_job(job) -> None:
    global _job
    _job = job


def _forked_chunk(item):
    start, chunk = item
    try:
        rendered = _render_chunk(_job, start, chunk)
    except ChatError as e:  # returned, not raised: the parent raises it with its message intact
        return e
    # Sent back as flat buffers: pickling lists of Python ints costs more than rendering them.
    lengths = array("q", [-1 if r is None else len(r[0]) for r in rendered])
    ids = array("I", [i for r in rendered if r is not None for i in r[0]])
    mask = bytes(m for r in rendered if r is not None for m in r[1])
    return lengths.tobytes(), ids.tobytes(), mask


def _unpack(part):
    lengths, ids, mask = array("q"), array("I"), mask_bytes(part[2])
    lengths.frombytes(part[0])
    ids.frombytes(part[1])
    ids = ids.tolist()
    out, at = [], 0
    for n in lengths:
        if n < 0:
            out.append(None)
            continue
        out.append((ids[at:at + n], mask[at:at + n]))
        at += n
    return out


def mask_bytes(data: bytes) -> list[int]:
    return list(data)


def _render_chunk(job, start: int, chunk: Sequence[Any]):
    from bytepair.chat import render_conversation

    encoding, template, max_tokens, drop_long, options = job
    out = []
    for i, conversation in enumerate(chunk, start):
        try:
            ids, mask = render_conversation(encoding, conversation, template=template, **options)
        except ChatError as e:
            raise ChatError(f"conversation {i}: {e}") from None
        if max_tokens is not None and len(ids) > max_tokens:
            if drop_long:
                out.append(None)
                continue
            del ids[max_tokens:], mask[max_tokens:]
        out.append((ids, mask))
    return out
