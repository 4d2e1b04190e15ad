"""The tiktoken text format: ``base64(token) rank`` per line (``.tiktoken`` files, Llama 3's
``tokenizer.model``). Parsing runs in Rust; this module adds paths, hashes and error context."""

from __future__ import annotations

import base64
import os

from bytepair import _core, fetch
from bytepair.atomic import write_atomic
from bytepair.errors import FormatError


def parse_tiktoken_bpe(data: bytes, source: str = "<bytes>") -> dict[bytes, int]:
    """``{token bytes: rank}`` from a tiktoken file's contents; FormatError names the line."""
    try:
        pairs = _core.parse_tiktoken(data)
    except FormatError as e:
        e.path = source
        raise
    ranks = dict(pairs)
    if len(ranks) != len(pairs):
        seen: dict[bytes, int] = {}
        for lineno, (token, rank) in enumerate(pairs, 1):
            if token in seen:
                raise FormatError(f"token {token!r} appears again (first with rank {seen[token]})",
                                  f"entry {lineno}", source)
            seen[token] = rank
    return ranks


def load_tiktoken_bpe(tiktoken_bpe_file: str | os.PathLike, expected_hash: str | None = None) -> dict[bytes, int]:
    """Reads a ``.tiktoken`` file (path or URL) into ``{token bytes: rank}``, as tiktoken does.

    ``expected_hash`` is the file's SHA-256 in hex; a mismatch raises HashMismatchError
    naming both hashes.
    """
    data = fetch.read_file(tiktoken_bpe_file, expected_hash)
    return parse_tiktoken_bpe(data, os.fspath(tiktoken_bpe_file))


def dump_tiktoken_bpe(mergeable_ranks: dict[bytes, int], path: str | os.PathLike) -> None:
    """Writes ``{token bytes: rank}`` as a ``.tiktoken`` file, in rank order, atomically."""
    lines = [base64.b64encode(tok) + b" " + str(rank).encode() + b"\n"
             for tok, rank in sorted(mergeable_ranks.items(), key=lambda kv: kv[1])]
    write_atomic(path, b"".join(lines))
