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

__all__ = ["KnownVocabulary", "by_sha256", "known_vocabularies"]


@dataclass(frozen=True)
class KnownVocabulary:
    name: str
    sha256: str  # hex, of the ranks as a .tiktoken file
    pattern: str
    special_tokens: Mapping[str, int]


# SHA-256 of Meta's Llama 3 tokenizer.model (tiktoken text format), as llama-models ships it.
LLAMA3_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"

_TABLE: dict[str, KnownVocabulary] | None = None


def known_vocabularies() -> dict[str, KnownVocabulary]:
    """SHA-256 (hex) -> the vocabulary. Built on first use from the registry's constants (the
    patterns, specials and pinned hashes are defined there, once)."""
    global _TABLE
    if _TABLE is None:
        from bytepair.registry import llama, openai

        rows = [
            ("r50k_base", openai.R50K_SHA256, openai.R50K_PATTERN, openai.R50K_SPECIALS),
            ("p50k_base", openai.P50K_SHA256, openai.R50K_PATTERN, openai.R50K_SPECIALS),
            ("cl100k_base", openai.SOURCE_SHA256["cl100k_base"], openai.CL100K_PATTERN, openai.CL100K_SPECIALS),
            ("o200k_base", openai.SOURCE_SHA256["o200k_base"], openai.O200K_PATTERN, openai.O200K_SPECIALS),
            ("llama3", LLAMA3_SHA256, llama.LLAMA3_PATTERN, llama.llama3_special_tokens()),
        ]
        _TABLE = {sha: KnownVocabulary(name, sha, pattern, MappingProxyType(dict(specials)))
                  for name, sha, pattern, specials in rows}
    return _TABLE


def by_sha256(digest: str | bytes) -> KnownVocabulary | None:
    """The known vocabulary whose ranks, as a .tiktoken file, have this SHA-256 (hex or the 32
    raw bytes), or None."""
    if isinstance(digest, bytes):
        digest = digest.hex()
    return known_vocabularies().get(digest)
