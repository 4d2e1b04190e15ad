"""GPT-2's original vocabulary files: ``encoder.json`` (token string -> id) and ``vocab.bpe``
(the merge list), where bytes are spelled with printable stand-in characters.

GPT-2 maps each byte to a printable character: bytes that are already printable and not a
space keep their own code point, the rest are numbered from U+0100 upwards in byte order.
The rank of each byte token is its position in that printable-first order, and merge k of
``vocab.bpe`` gets rank 256 + k.
"""

from __future__ import annotations

import re

from bytepair.errors import FormatError

# GPT-2's split pattern, built into GPT-2's encoder (openai/gpt-2 ``encoder.py``), in the form
# tiktoken gives it (possessive quantifiers: the same pieces with less backtracking).
from bytepair.registry.openai import R50K_PATTERN as GPT2_PATTERN

# The two entries of encoder.json that are special tokens, not ranks (the reader checks every
# other entry against vocab.bpe). Found with a scan rather than a parse: the file is megabytes.
_SPECIAL_ENTRY = re.compile(rb'"(<\|(?:endoftext|startoftext)\|>)"\s*:\s*([0-9]+)')


def byte_to_char() -> dict[int, str]:
    """GPT-2's byte -> stand-in character table (defined once, in Rust:
    ``crates/core/src/formats/byte_level.rs``)."""
    from bytepair import _core

    return dict(enumerate(_core.BYTE_LEVEL_CHARS))


def _printable_first() -> list[int]:
    """The bytes in rank order (GPT-2's first 256 ranks): by their stand-in characters."""
    table = byte_to_char()
    return sorted(table, key=lambda b: table[b])


def gpt2_tiktoken_bytes(vocab_bpe: bytes, encoder_json: bytes) -> bytes:
    """The ranks of GPT-2's two files as a ``.tiktoken`` file's bytes (read and checked in Rust,
    ``crates/core/src/formats/gpt2.rs``). A FormatError's ``path`` is the file at fault
    (``"vocab.bpe"`` or ``"encoder.json"``, for the caller to replace with the real path)."""
    from bytepair import _core

    try:
        return _core.gpt2_to_tiktoken(vocab_bpe, encoder_json)
    except FormatError as e:
        file, _, where = (e.location or "").partition(" ")
        e.path, e.location = file or None, where or None
        raise


def recorded_special_tokens(encoder_json: bytes) -> dict[str, int]:
    """The special tokens encoder.json records, at the ids it gives them (GPT-2's:
    ``{"<|endoftext|>": 50256}``)."""
    return {m.group(1).decode(): int(m.group(2)) for m in _SPECIAL_ENTRY.finditer(encoder_json)}


def data_gym_to_mergeable_bpe_ranks(vocab_bpe: bytes | str, encoder_json: bytes | str) -> dict[bytes, int]:
    """``{token bytes: rank}`` from the contents of ``vocab.bpe`` and ``encoder.json``.

    The ranks come from the merge list; ``encoder.json`` must agree with them (its two extra
    entries, ``<|endoftext|>`` and ``<|startoftext|>``, are special tokens and left out).
    """
    from bytepair.formats.tiktoken import parse_tiktoken_bpe

    as_bytes = [x.encode("utf-8") if isinstance(x, str) else x for x in (vocab_bpe, encoder_json)]
    return parse_tiktoken_bpe(gpt2_tiktoken_bytes(*as_bytes))
