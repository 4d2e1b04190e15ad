"""Rendering many conversations on all cores: :func:`render_many`.

A conversation costs two kinds of work: the template's, which gives its parts (special-token ids
and texts, see :class:`bytepair.chat._render.Render`), and the encoding of those parts (Rust).
A built-in template's part runs here, in this thread (Python), except the built-in chatml's,
whose frame the core writes straight from the caller's dicts (``chatml.plain`` normalizes in
Python only the conversations it cannot read as they are); a Jinja template's conversations
are only converted here (:meth:`ChatTemplate.prepare`) and rendered by the core. The rest runs
in one core call per chunk of conversations, with the GIL released. With more than one thread
the chunks are pipelined: the core starts on a chunk on its own threads
(``Tokenizer.encode_chat_start``) while this thread renders the next; then this thread takes
what the core's threads have not claimed of it yet (from the back, GIL released) rather than
wait idle, and builds its lists. No worker processes: the rendered parts and the results would
have to be pickled across, which measured slower than one process.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from itertools import islice
from typing import Any

from bytepair.chat._render import messages_of
from bytepair.errors import ChatError

#: Conversations per core call: large enough that a call's overhead is small, small enough
#: that rendering and encoding overlap for most of a batch.
CHUNK = 256


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
    """``render_conversation`` for each conversation, in input order; the encoding runs on
    ``num_workers`` threads (default: every core).

    With ``max_tokens``, a longer conversation is truncated, or, with ``drop_long``, left out:
    its entry is ``None``. A :class:`ChatError` names the conversation's index.
    """
    from bytepair.chat import _preparer, _template

    if drop_long and max_tokens is None:
        raise ChatError("drop_long needs max_tokens")
    if max_tokens is not None and max_tokens < 0:
        raise ChatError(f"max_tokens must be >= 0, got {max_tokens}")
    threads = num_workers or os.cpu_count() or 1
    t = _template(encoding, template)
    framed = _chatml_frame(encoding, t, options)
    if not framed:
        prepared, core = _preparer(encoding, t, options)
        # A Jinja template's core preparer converts the caller's conversations as they are
        # (``encode_chat``'s ``jinja``): the plain ones straight from their dicts
        # (``JinjaPreparer.convert``), the others through ``prepared``.
        framed = {"jinja": (core, prepared)} if core is not None else {}
    chunks = _as_they_are(conversations) if framed else _rendered(prepared, conversations)
    with _gc_paused():
        out = _render_chunks(encoding, t, chunks, threads, options, framed)
    return _limit(out, max_tokens, drop_long)


def _chatml_frame(encoding: Any, t: Any, options: dict) -> dict:
    """For the built-in chatml template, the core's arguments that frame the caller's
    conversations as they are (``encode_chat``'s ``chatml``): the core reads a
    plain conversation straight from its dicts, and asks ``chatml.plain`` for the others.
    Empty for other templates, with options (which chatml refuses, conversation by
    conversation), or an encoding without ChatML's tokens (the error then names conversation 0
    as before)."""
    from bytepair.chat import _with_tools, chatml

    if t is not chatml.TEMPLATE or options:
        return {}
    try:
        frame = chatml.frame(encoding)
    except ChatError:
        return {}
    return {"chatml": (frame, lambda conversation: chatml.plain(messages_of(conversation), _with_tools(conversation, {})))}


@contextmanager
def _gc_paused():
    """Python's cyclic collector paused, as the core's batch calls pause it while they build
    lists: every collection walks each young list of ids, and a dataset makes thousands (a
    fifth of render_many's time on the benchmark's conversations). Lists of ints and the
    rendered parts form no cycles; anything a Jinja template leaves in a cycle is collected
    once the collector resumes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _render_chunks(encoding: Any, t: Any, chunks, threads: int, options: dict, framed: dict) -> list:
    from bytepair.chat import _parts
    from bytepair.chat._render import checked, encode_parts

    def results(first: int, answer: tuple, originals: list) -> list:
        # What the core hands back for jinja2 is rendered here, the Python way (`parts`: the
        # core refuses it again, jinja2 renders it), in order with the core's own errors.
        return checked(encoding, answer, first,
                       lambda k: encode_parts(encoding, [_parts(encoding, t, originals[k], options)])[0])

    out: list = []
    if threads == 1:  # everything on this thread, one chunk after the other
        for first, rendered, originals in chunks:
            out += results(first, encoding._core_bpe.encode_chat(rendered, 1, **framed), originals)
        return out
    # The core encodes a chunk on its own threads (threads - 1 of them: this one renders the
    # next chunk meanwhile) and is asked for the lists only once the next chunk is rendered;
    # `result()` then encodes the chunk's unclaimed conversations here too.
    jobs: deque = deque()
    chunks = iter(chunks)
    while True:
        try:
            first, rendered, originals = next(chunks)
        except StopIteration:
            break
        except ChatError:  # a conversation failed to render; an earlier one may have failed in the core
            for first_done, originals_done, job in jobs:
                results(first_done, job.result(), originals_done)
            raise
        jobs.append((first, originals, encoding._core_bpe.encode_chat_start(rendered, max(1, threads - 1), **framed)))
        if jobs[-1][2].stopped:  # a conversation was refused while converting: no more chunks
            break
        if len(jobs) > 1:
            first_done, originals_done, job = jobs.popleft()
            out += results(first_done, job.result(), originals_done)
    for first_done, originals_done, job in jobs:
        out += results(first_done, job.result(), originals_done)
    return out


def _rendered(prepared: Callable[[Any], Any], conversations: Iterable[Any]):
    """``(index of the first, [what the core takes, ...], [conversation, ...])`` for each chunk
    of conversations: ``prepared`` of each (``_preparer``'s: their ``(parts, trains)``, or a
    Jinja template's converted conversations, which the core renders). A conversation that
    fails here ends the chunks with those before it, which may still fail in the core, and so
    first."""
    rendered: list = []
    originals: list = []
    first = 0
    for i, conversation in enumerate(conversations):
        try:
            rendered.append(prepared(conversation))
        except ChatError as e:
            if rendered:
                yield first, rendered, originals
            raise ChatError(f"conversation {i}: {e}") from None
        originals.append(conversation)
        if len(rendered) == CHUNK:
            yield first, rendered, originals
            first, rendered, originals = i + 1, [], []
    if rendered:
        yield first, rendered, originals


def _as_they_are(conversations: Iterable[Any]):
    """``_rendered``'s chunks of the conversations as the caller gave them, for the core to
    frame (``_chatml_frame``)."""
    it = iter(conversations)
    first = 0
    while chunk := list(islice(it, CHUNK)):
        yield first, chunk, chunk
        first += len(chunk)


def _limit(out: list, max_tokens: int | None, drop_long: bool) -> list:
    """``max_tokens`` applied: longer conversations truncated, or with ``drop_long`` None."""
    if max_tokens is not None:
        for k, (ids, mask) in enumerate(out):
            if len(ids) > max_tokens:
                if drop_long:
                    out[k] = None
                else:
                    del ids[max_tokens:], mask[max_tokens:]
    return out
