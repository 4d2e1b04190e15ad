"""SentencePiece without byte fallback: a run of unknown characters is one <unk>, whatever the
piece cache holds.

A run cut across two segments fused into the first segment's <unk>, so the second segment gave
no ids; that empty result was cached, and the next text starting with the same characters lost
its <unk>: "\\0\\0" gave [▁, <unk>] once, then [▁], and "\\0" alone [▁] (found by the
read_sentencepiece fuzz target: count disagreed with len(encode)). And a model with byte pieces
whose byte_fallback is off, which SentencePiece refuses, loaded.
"""

from __future__ import annotations

import pytest
import sentencepiece as spm

import bytepair
from bytepair.formats import loads
from support import REPO

GOLDEN = REPO / "tests" / "data" / "golden"
BYTE_FALLBACK_ON = b"\x98\x02\x01"  # TrainerSpec field 35 (byte_fallback), varint 1
TEXTS = ["\0\0", "\0", "a\0\0\0 \0", "x\0\0y", "\0\0\0\0 \0\0", "日本\0語", "\x01\x02 \x03", "\0\0"]


def _without_byte_fallback(byte_pieces_normal: bool) -> bytes:
    data = (GOLDEN / "tiny_sp.model").read_bytes()
    assert data.count(BYTE_FALLBACK_ON) == 1
    data = data.replace(BYTE_FALLBACK_ON, b"\x98\x02\x00")
    if byte_pieces_normal:
        # Each piece's type field: BYTE (6) -> NORMAL (1); the model has 256 of them.
        assert data.count(b"\x18\x06") == 256
        data = data.replace(b"\x18\x06", b"\x18\x01")
    return data


def test_unknown_runs_as_sentencepiece_cold_and_warm():
    data = _without_byte_fallback(byte_pieces_normal=True)
    ref = spm.SentencePieceProcessor(model_proto=data)
    ours = loads(data, format="sentencepiece")
    for _ in range(2):  # the second round runs on a warm piece cache
        for text in TEXTS:
            assert ours.encode(text) == ref.encode(text), repr(text)


def test_byte_pieces_without_byte_fallback_are_refused():
    data = _without_byte_fallback(byte_pieces_normal=False)
    with pytest.raises(RuntimeError, match="byte_fallback"):
        spm.SentencePieceProcessor(model_proto=data)
    with pytest.raises(bytepair.FormatError, match="byte_fallback is off"):
        loads(data, format="sentencepiece")
