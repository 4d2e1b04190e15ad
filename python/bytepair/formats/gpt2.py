"""GPT-2's original vocabulary files: ``encoder.json`` (token string -> id) and ``vocab.bpe``
(the merge list), where bytes are spelled with printable stand-in characters.

GPT-2 maps each byte to a printable character: bytes that are already printable and not a
space keep their own code point, the rest are numbered from U+0100 upwards in byte order.
The rank of each byte token is its position in that printable-first order, and merge k of
``vocab.bpe`` gets rank 256 + k.
"""

from __future__ import annotations

import json

from bytepair.errors import FormatError


def _printable_first() -> list[int]:
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    return printable + [b for b in range(256) if b not in set(printable)]


def byte_to_char() -> dict[int, str]:
    """GPT-2's byte -> stand-in character table."""
    order = _printable_first()
    n_printable = sum(1 for b in range(256) if chr(b).isprintable() and chr(b) != " ")
    table = {}
    for i, b in enumerate(order):
        table[b] = chr(b) if i < n_printable else chr(256 + i - n_printable)
    return table


def data_gym_to_mergeable_bpe_ranks(vocab_bpe: bytes | str, encoder_json: bytes | str) -> dict[bytes, int]:
    """``{token bytes: rank}`` from the contents of ``vocab.bpe`` and ``encoder.json``.

    The ranks come from the merge list; ``encoder.json`` must agree with them (its two extra
    entries, ``<|endoftext|>`` and ``<|startoftext|>``, are special tokens and left out).
    """
    if isinstance(vocab_bpe, bytes):
        vocab_bpe = vocab_bpe.decode("utf-8")
    char_to_byte = {c: b for b, c in byte_to_char().items()}

    def to_bytes(s: str, where: str) -> bytes:
        try:
            return bytes(char_to_byte[c] for c in s)
        except KeyError as e:
            raise FormatError(f"character {e.args[0]!r} is not a GPT-2 byte character", where, "vocab.bpe") from None

    ranks = {bytes([b]): i for i, b in enumerate(_printable_first())}
    lines = vocab_bpe.split("\n")
    # The first line is a version comment ("#version: 0.2"); the file ends with a newline.
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"expected two tokens separated by a space, found {line!r}", f"line {lineno}", "vocab.bpe")
        merged = to_bytes(parts[0], f"line {lineno}") + to_bytes(parts[1], f"line {lineno}")
        if merged in ranks:
            raise FormatError(f"merge {line!r} makes a token that already exists", f"line {lineno}", "vocab.bpe")
        ranks[merged] = len(ranks)

    encoder = json.loads(encoder_json)
    from_json = {to_bytes(k, "encoder.json"): v for k, v in encoder.items()
                 if k not in ("<|endoftext|>", "<|startoftext|>")}
    if from_json != ranks:
        raise FormatError("encoder.json does not agree with the ranks implied by vocab.bpe", None, "encoder.json")
    return ranks
