"""SentencePiece ``.model`` files (protobuf ModelProto), BPE models only.

The protobuf is read in Rust by a small hand-written wire reader
(``crates/core/src/formats/protobuf.rs``): errors name the byte offset and field, every length
is checked against the bytes present, and no protobuf runtime is needed. Unigram models and
models with normalisation rules other than ``identity`` are refused with a FormatError.
"""

from __future__ import annotations

from bytepair import _core
from bytepair.errors import FormatError
from bytepair.encoding import Encoding


def load(data: bytes, source: str = "<bytes>", name: str = "sentencepiece") -> Encoding:
    try:
        core = _core.Tokenizer.from_sentencepiece(data)
    except FormatError as e:
        e.path = source
        raise
    # SentencePiece takes control-piece spellings in text as text (nothing allowed or refused):
    # the core's default for score models.
    return Encoding._from_core(name, core, None, source_format="sentencepiece", source=data)
