"""Vocabularies bytepair recognises by content, and what their files cannot say.

A ``.tiktoken`` file holds ranks only: no split pattern, no special tokens. For the files that
OpenAI and Meta publish these are pinned facts of the encoding the file is named after, so a
file is recognised by the SHA-256 of its bytes and given that encoding's pattern and specials;
any other file must be given ``pat_str=`` (never another vocabulary's pattern).

The hash is of the ranks written as a ``.tiktoken`` file (``base64(token) rank\\n`` in rank
order), which is byte for byte what each of these files is, so the same lookup recognises the
ranks however they arrive: a ``.tiktoken`` file, a BPE2/BPZ2 table (its header records the hash
of the file it was made from), GPT-2's pair of files (converted to those bytes), or an Encoding
about to be written as ``.tiktoken`` (to know whether loading the file gives everything back).

One file can serve several encodings (p50k_base and p50k_edit, o200k_base and o200k_harmony,
r50k_base and gpt2): the table names the encoding the file is named after, as tiktoken does.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from bytepair import _core

__all__ = ["KnownVocabulary", "by_sha256", "known_vocabularies"]


@dataclass(frozen=True)
class KnownVocabulary:
    name: str
    sha256: str  # hex, of the ranks as a .tiktoken file
    pattern: str
    special_tokens: Mapping[str, int]


def _row(name: str) -> KnownVocabulary:
    sha256, pattern, specials, _ = _core.known_encoding(name)
    return KnownVocabulary(name, sha256, pattern, MappingProxyType(dict(specials)))


def known_vocabularies() -> dict[str, KnownVocabulary]:
    """SHA-256 (hex) -> the vocabulary the file is named after. The table is the core's
    (crates/core/src/known.rs), where the hashes, patterns and specials are written once."""
    table: dict[str, KnownVocabulary] = {}
    for name in _core.KNOWN_ENCODINGS:
        if _core.known_encoding_by_sha256(bytes.fromhex(_core.known_encoding(name)[0])) == name:
            row = _row(name)
            table[row.sha256] = row
    return table


def by_sha256(digest: str | bytes) -> KnownVocabulary | None:
    """The known vocabulary whose ranks, as a .tiktoken file, have this SHA-256 (hex or the 32
    raw bytes), or None."""
    if isinstance(digest, str):
        try:
            digest = bytes.fromhex(digest)
        except ValueError:
            return None
    if len(digest) != 32:
        return None
    name = _core.known_encoding_by_sha256(digest)
    return None if name is None else _row(name)
