"""Which format a vocabulary file is in, from its content alone (never its name).

Rules, in order (docs/formats.md explains why this order is unambiguous):

1. magic bytes: ``BPE2``, ``BPZ2``, ``RKTQ`` (QTKR's u32 0x51544B52 little-endian);
2. JSON (first non-blank byte ``{``): an object whose first value is a number is GPT-2's
   ``encoder.json`` (string -> int); any other object is HF ``tokenizer.json`` (whose
   values are objects, strings, lists or null). Only the first key and value are read here:
   the format's reader parses and checks the whole file once;
3. text: a first line ``#version`` is GPT-2's ``vocab.bpe``; a first line
   ``<base64> <int>`` is tiktoken;
4. protobuf: first byte 0x0A (field 1, the repeated pieces) and a non-zero second byte (the
   first piece's length) is a SentencePiece ModelProto;
5. otherwise a LEAP / llama2.c scored vocabulary if the file's first int32 is a plausible
   max_token_length (the reader then checks every record).
"""

from __future__ import annotations

import json
import re

from bytepair.errors import FormatError

_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2} [0-9]+\r?$")

FORMATS = ("bpe2", "bpz2", "qtkr", "tiktoken", "tokenizer.json", "gpt2", "sentencepiece", "leap")


def _json_kind(data: bytes, source: str) -> str:
    """tokenizer.json or GPT-2's encoder.json, from the first key and the start of its value."""
    head = data[:4096].decode("utf-8", "ignore")
    i = 1
    while i < len(head) and head[i] in " \t\r\n":
        i += 1
    if head[i:i + 1] == "}":
        return "gpt2"  # an empty object: encoder.json's reader says what is missing
    try:
        _, end = json.JSONDecoder().raw_decode(head, i)
    except ValueError as e:
        raise FormatError(f"starts like JSON but does not parse: {e}", "JSON", source) from None
    rest = head[end:].lstrip(" \t\r\n")
    if rest[:1] != ":":
        raise FormatError("starts like JSON but does not parse: expected ':' after the first key", "JSON", source)
    value = rest[1:].lstrip(" \t\r\n")[:1]
    return "gpt2" if value[:1] in tuple("-0123456789") and value else "tokenizer.json"


def detect(data: bytes, source: str = "<bytes>") -> str:
    """One of :data:`FORMATS` (``"gpt2"`` for either of GPT-2's two files)."""
    head = data[:4]
    if head == b"BPE2":
        return "bpe2"
    if head == b"BPZ2":
        return "bpz2"
    if head == b"RKTQ":
        return "qtkr"
    if not data:
        raise FormatError("the file is empty", "byte 0", source)
    stripped = data.lstrip()
    if stripped[:1] == b"{":
        return _json_kind(stripped, source)
    end = data.find(b"\n", 0, 65536)
    first_line = data[:end] if end >= 0 else data[:65536]
    if first_line.startswith(b"#version"):
        return "gpt2"
    if _TIKTOKEN_LINE.match(first_line):
        return "tiktoken"
    # A ModelProto starts with its first piece: tag 0x0A and a non-zero length. A LEAP table
    # whose max_token_length is 10 also starts with 0x0A, followed by three zero bytes.
    if data[0] == 0x0A and len(data) > 1 and data[1] != 0:
        return "sentencepiece"
    if len(data) >= 4:
        max_len = int.from_bytes(data[:4], "little", signed=True)
        if 0 < max_len <= 1 << 16:
            return "leap"
    raise FormatError(
        "not a known vocabulary format (expected BPE2/BPZ2/QTKR magic, tokenizer.json or "
        "encoder.json, tiktoken or vocab.bpe text, a SentencePiece model or a LEAP table); "
        f"first bytes {data[:16]!r}", "byte 0", source)
