"""Hugging Face ``tokenizer.json``, BPE models.

Read in Rust (``crates/core/src/formats/hf.rs``, one streaming pass, no Python object per
token): byte-level BPE (``ByteLevel`` pre-tokenizer/decoder, vocabulary spelled with GPT-2's
printable stand-ins for bytes), optionally after a ``Split`` regex pre-tokenizer; and
character-level BPE with ``byte_fallback``/``unk_token`` (Llama-style, with the
``Prepend("▁")`` + ``Replace(" ", "▁")`` normalizer or a non-splitting ``Metaspace``
pre-tokenizer). ``added_tokens`` are split out as HF does, with their ``lstrip``, ``rstrip``,
``single_word`` and ``normalized`` flags (``crates/core/src/added.rs``). Anything else (other
models, normalizers, pre-tokenizers, ``continuing_subword_prefix``, dropout) is refused with a
FormatError naming the field.

Write: a rank vocabulary as a byte-level BPE whose merges reproduce its ranks, with
``ignore_merges`` (a piece that is a token is that token, as in tiktoken) and the split pattern
as a ``Split`` pre-tokenizer, so ``tokenizers.Tokenizer.from_file`` gives the same ids.
"""

from __future__ import annotations

import json
import re

from bytepair import _core
from bytepair.errors import FormatError, VocabError
from bytepair.formats.gpt2 import byte_to_char
from bytepair.encoding import Encoding

SPACE = "\u2581"


def load(data: bytes, source: str = "<bytes>", name: str = "tokenizer") -> Encoding:
    """Parsing, validation and the byte-level alphabet are Rust's (``formats/hf.rs``): no Python
    object is made per token or merge."""
    try:
        core, info = _core.Tokenizer.from_tokenizer_json(data)
    except FormatError as e:
        e.path = source
        raise
    except VocabError as e:
        raise FormatError(str(e), "model", source) from None
    except ValueError as e:  # PatternError
        raise FormatError(str(e), "pre_tokenizer.pattern", source) from None
    added = info["added_tokens"]
    # HF tokenizers splits every added token out of the text: the core's default for this model
    # too (SpecialDefaults::HF).
    # (The Metaspace decoder, U+2581 back to spaces, runs in the core.)
    return Encoding._from_core(name, core, info["pattern"], {c: i for c, i, special in added if special},
                               source_format="tokenizer.json", source=data)


def onig_pattern(pattern: str) -> str:
    """The pattern for HF's regex engine (Oniguruma). In Oniguruma ``X{1,3}+`` is not a
    possessive ``{1,3}`` but ``(X{1,3})+``, any number of X; tiktoken's patterns use the
    possessive form only to save backtracking, so the plain ``{1,3}`` matches the same pieces.
    (``?+``, ``*+`` and ``++`` are possessive in both engines.)"""
    return re.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def dumps_encoding(enc) -> tuple[bytes, list[str]]:
    """A rank Encoding as tokenizer.json (byte-level BPE, ignore_merges, Split on its pattern),
    and what the file cannot carry. Special tokens are in the model's vocabulary too: HF gives
    an added token that is not in the vocabulary the next free id, not the id the file states.
    So an id can have only one spelling here: a second spelling of an id (o200k_harmony's
    ``<|reserved_200018|>`` beside ``<|endofprompt|>``), or a special token at an ordinary
    token's id, is left out and named as dropped."""
    from bytepair.formats import lost_specials

    table = {b: c for b, c in byte_to_char().items()}

    def spell(token: bytes) -> str:
        return token.decode("latin-1").translate(table)

    ranks = enc._mergeable_ranks
    by_id = {r: spell(t) for t, r in ranks.items()}
    specials: dict[str, int] = {}
    taken = set(by_id)
    spellings = set(by_id.values())
    byte_chars = set(table.values())
    for s, i in enc._special_tokens.items():
        # A special token is a key of model.vocab as well (see above), so it is left out, and
        # named as dropped, when it cannot be one: its spelling is an ordinary token's key (the
        # key would take that token's id: the file loaded to other ids, or failed to load when
        # the token was a single byte), or it has a character that is no ByteLevel byte
        # character (a space, say: the file would not load).
        if i not in taken and s not in spellings and set(s) <= byte_chars:
            specials[s] = i
            taken.add(i)
            spellings.add(s)
    merges = enc._core_bpe.merges_from_ranks()
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for s, i in sorted(specials.items(), key=lambda kv: kv[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": onig_pattern(enc._pat_str)}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
            "vocab": {**{by_id[r]: r for r in sorted(by_id)}, **specials},
            "merges": [f"{by_id[a]} {by_id[b]}" for a, b, _ in merges],
        },
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8"), lost_specials(enc._special_tokens, specials)
