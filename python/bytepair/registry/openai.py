"""OpenAI's encodings: the split patterns, special tokens and vocabulary sources that tiktoken
defines for each name.

cl100k_base, o200k_base and o200k_harmony load from BPE2 tables bundled in ``bytepair/data``
(made from the pinned ``.tiktoken`` files by ``scripts/bundle_vocab.py``; a test checks each
table's embedded source hash). The older encodings load from the cache or a download, pinned by
SHA-256.
"""

from __future__ import annotations

import os

from bytepair import _core
from bytepair.encoding import Encoding

# pathlib, the downloader and the text-format readers are imported by the encodings that need
# them: the bundled ones load with none of them.
_DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def __getattr__(name: str):
    if name == "DATA":  # the bundled tables' folder, as a Path (pathlib loads only if asked)
        from pathlib import Path

        return Path(_DATA_DIR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

BLOB = "https://openaipublic.blob.core.windows.net"

# The split patterns are written once, in Rust (crates/core/src/pretokenize/patterns.rs), and
# read from the binding: a pattern given here as its own string could drift by a character and
# silently lose its hand-written scanner.
# GPT-2's pattern as tiktoken spells it (possessive quantifiers; same pieces, less backtracking):
# gpt2, r50k_base, p50k_base, p50k_edit.
R50K_PATTERN = _core.PATTERNS["r50k"]
CL100K_PATTERN = _core.PATTERNS["cl100k"]
O200K_PATTERN = _core.PATTERNS["o200k"]

# Each encoding's pinned facts (the SHA-256 of its ranks, its special tokens, its n_vocab) are
# written once, in Rust (crates/core/src/known.rs), which the C library reads too.
def _specials(name: str) -> dict[str, int]:
    return dict(_core.known_encoding(name)[2])


# SHA-256 of the .tiktoken files the bundled tables were built from (the hashes tiktoken pins).
SOURCE_SHA256 = {name: _core.known_encoding(name)[0] for name in ("cl100k_base", "o200k_base")}


def _bundled(name: str, table: str, pattern: str, special_tokens: dict[str, int]) -> Encoding:
    path = os.path.join(_DATA_DIR, f"{table}.bpe2")
    core = _core.Tokenizer.from_bpe2_file(path, list(special_tokens.items()), pattern)
    enc = Encoding._from_core(name, core, pattern, special_tokens)
    enc._source_sha256 = bytes.fromhex(SOURCE_SHA256[table])  # kept by enc.save("x.bpe2")
    return enc


CL100K_SPECIALS = _specials("cl100k_base")


def cl100k_base() -> Encoding:
    return _bundled("cl100k_base", "cl100k_base", CL100K_PATTERN, CL100K_SPECIALS)


O200K_SPECIALS = _specials("o200k_base")


def o200k_base() -> Encoding:
    return _bundled("o200k_base", "o200k_base", O200K_PATTERN, O200K_SPECIALS)


def o200k_harmony() -> Encoding:
    """o200k_base's ranks with the special tokens of OpenAI's harmony chat format (gpt-oss).
    As in tiktoken, 200018 is both <|endofprompt|> and <|reserved_200018|>: two spellings, one
    id (decoding gives the first)."""
    specials = _specials("o200k_harmony")
    return _bundled("o200k_harmony", "o200k_base", O200K_PATTERN, specials)


P50K_SHA256 = _core.known_encoding("p50k_base")[0]
_P50K = (f"{BLOB}/encodings/p50k_base.tiktoken", P50K_SHA256)

# The files each downloadable encoding reads, as (URL, SHA-256): its constructor loads them, and
# `is_available` asks whether they are cached.
R50K_SHA256 = _core.known_encoding("r50k_base")[0]

DOWNLOADS: dict[str, list[tuple[str, str]]] = {
    "r50k_base": [(f"{BLOB}/encodings/r50k_base.tiktoken", R50K_SHA256)],
    "p50k_base": [_P50K],
    "p50k_edit": [_P50K],
    "gpt2": [(f"{BLOB}/gpt-2/encodings/main/vocab.bpe",
              "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
             (f"{BLOB}/gpt-2/encodings/main/encoder.json",
              "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783")],
}


def is_available(name: str) -> bool:
    """Whether ``name`` can be built here without a network: bundled, or its files cached."""
    from bytepair import fetch

    return all(fetch.find_cached(url) is not None for url, _ in DOWNLOADS.get(name, ()))


def _downloaded(name: str) -> Encoding:
    from bytepair.formats.tiktoken import load_tiktoken_bpe

    [(url, sha256)] = DOWNLOADS[name]
    _, _, specials, n_vocab = _core.known_encoding(name)
    ranks = load_tiktoken_bpe(url, expected_hash=sha256)
    return Encoding(name, pat_str=R50K_PATTERN, mergeable_ranks=ranks, special_tokens=dict(specials),
                    explicit_n_vocab=n_vocab)


# r50k_base's and p50k_base's (and GPT-2's) one special token.
R50K_SPECIALS = _specials("r50k_base")


def r50k_base() -> Encoding:
    return _downloaded("r50k_base")


def p50k_base() -> Encoding:
    return _downloaded("p50k_base")


def p50k_edit() -> Encoding:
    return _downloaded("p50k_edit")


def gpt2() -> Encoding:
    from bytepair import fetch
    from bytepair.formats.gpt2 import data_gym_to_mergeable_bpe_ranks

    vocab_bpe, encoder_json = (fetch.read_file(url, sha256) for url, sha256 in DOWNLOADS["gpt2"])
    ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    _, _, specials, n_vocab = _core.known_encoding("gpt2")
    return Encoding("gpt2", pat_str=R50K_PATTERN, mergeable_ranks=ranks,
                    special_tokens=dict(specials), explicit_n_vocab=n_vocab)


ENCODING_CONSTRUCTORS = {
    "gpt2": gpt2,
    "r50k_base": r50k_base,
    "p50k_base": p50k_base,
    "p50k_edit": p50k_edit,
    "cl100k_base": cl100k_base,
    "o200k_base": o200k_base,
    "o200k_harmony": o200k_harmony,
}
