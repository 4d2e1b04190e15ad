"""SentencePiece ``.model`` files (protobuf ModelProto), BPE models only.

The protobuf is read in Rust by a small hand-written wire reader
(``crates/core/src/formats/protobuf.rs``): errors name the byte offset and field, every length
is checked against the bytes present, and no protobuf runtime is needed. Unigram models and
models with normalisation rules other than ``identity`` are refused with a FormatError.
"""

from __future__ import annotations

from bytepair import _core
from bytepair.errors import FormatError
from bytepair.scored import ScoreEncoding


def load(data: bytes, source: str = "<bytes>", name: str = "sentencepiece") -> ScoreEncoding:
    try:
        core = _core.ScoreBPE.from_sentencepiece(data)
    except FormatError as e:
        e.path = source
        raise
    return ScoreEncoding(name, core, "sentencepiece", source=data)
