"""Vocabulary file formats, one module each, and the two entry points over them:

- :func:`load` reads any supported file, detecting its format from the content
  (:mod:`bytepair.formats.detect`), and returns a tokenizer with ``Encoding``'s
  encode/decode surface;
- :func:`save` writes a tokenizer in a named format (``tokenizer.save(path, format=...)``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from bytepair.errors import FormatError, PatternError, VocabError
from bytepair.formats.detect import FORMATS, detect

__all__ = ["FORMATS", "detect", "load", "loads", "save", "format_for_path"]

# Formats a file name's suffix implies, for save() when no format is given.
_SUFFIXES = {
    ".tiktoken": "tiktoken", ".bpe2": "bpe2", ".bpz2": "bpz2", ".qtkr": "qtkr",
    ".json": "tokenizer.json", ".model": "sentencepiece", ".bin": "leap", ".leap": "leap",
}


def format_for_path(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"cannot tell the format from {os.fspath(path)!r}; pass format= one of {', '.join(FORMATS)}")
    return _SUFFIXES[suffix]


# SHA-256 of Meta's Llama 3 tokenizer.model (tiktoken text format), as llama-models ships it.
LLAMA3_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"


def _known_encoding(digest: str) -> tuple[str, str, dict[str, int]] | None:
    """(name, pattern, specials) of the known encoding (OpenAI's, Llama 3) whose tiktoken-format
    file has this SHA-256."""
    from bytepair.registry import openai

    names = {**{v: k for k, v in openai.SOURCE_SHA256.items()},
             openai.P50K_SHA256: "p50k_base",
             "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": "r50k_base"}
    name = names.get(digest)
    if digest == LLAMA3_SHA256:
        from bytepair.registry import llama

        return "llama3", llama.LLAMA3_PATTERN, llama.llama3_special_tokens()
    if name is None:
        return None
    patterns = {"cl100k_base": openai.CL100K_PATTERN, "o200k_base": openai.O200K_PATTERN}
    specials = {"cl100k_base": {openai.ENDOFTEXT: 100257, openai.FIM_PREFIX: 100258,
                                openai.FIM_MIDDLE: 100259, openai.FIM_SUFFIX: 100260,
                                openai.ENDOFPROMPT: 100276},
                "o200k_base": dict(openai.O200K_SPECIALS)}
    return name, patterns.get(name, openai.R50K_PATTERN), specials.get(name, {openai.ENDOFTEXT: 50256})


def default_pattern() -> str:
    """The split pattern given to a rank vocabulary whose file records none (o200k_base's)."""
    from bytepair.registry.openai import O200K_PATTERN

    return O200K_PATTERN


def load(path: str | os.PathLike, *, pat_str: str | None = None,
         special_tokens: dict[str, int] | None = None, name: str | None = None,
         format: str | None = None) -> Any:
    """Reads a vocabulary file in any supported format and returns a tokenizer.

    The format comes from the content (see :mod:`bytepair.formats.detect`). Rank vocabularies
    (tiktoken, BPE2/BPZ2, GPT-2) give an :class:`~bytepair.Encoding`; SentencePiece and LEAP
    give a score-BPE tokenizer, QTKR a merge-list tokenizer and tokenizer.json the tokenizer its
    model calls for: all with ``encode``/``decode``/``save``.

    ``pat_str`` and ``special_tokens`` override what the file records (a ``.tiktoken`` file
    records neither: a known OpenAI file gets its encoding's, any other the o200k pattern and
    no special tokens). A directory holding GPT-2's ``encoder.json`` and ``vocab.bpe`` loads
    as GPT-2. ``format`` skips detection (for a file too damaged or too small to recognise).
    """
    path = Path(path)
    source = os.fspath(path)
    if path.is_dir():
        if (path / "vocab.bpe").is_file():
            return _load_gpt2(path / "vocab.bpe", pat_str, special_tokens, name)
        for candidate in ("tokenizer.json", "tokenizer.model"):
            if (path / candidate).is_file():
                return load(path / candidate, pat_str=pat_str, special_tokens=special_tokens, name=name)
        raise FormatError("a directory with no vocab.bpe, tokenizer.json or tokenizer.model", None, source)
    data = path.read_bytes()
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = format or detect(data, source)
    try:
        return _dispatch(fmt, data, path, source, pat_str, special_tokens, name)
    except FormatError as e:
        e.path = e.path or source
        raise
    except (VocabError, PatternError) as e:
        # Inconsistent contents (duplicate tokens, a missing byte token, a bad recorded
        # pattern) are a problem with the file too.
        raise FormatError(str(e), f"{fmt} contents", source) from None


def loads(data: bytes, *, format: str | None = None, name: str | None = None, pat_str: str | None = None,
          special_tokens: dict[str, int] | None = None, source: str = "<bytes>", dummy_prefix: bool | None = None) -> Any:
    """:func:`load` from a file's bytes (any format but GPT-2's pair of files). ``dummy_prefix``
    (LEAP only): prepend a space to text as llama2.c does (default: for llama2.c-style tables)."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = format or detect(data, source)
    if fmt == "gpt2":
        raise ValueError("GPT-2 vocabularies are two files; load them with bytepair.load(folder)")
    try:
        return _dispatch(fmt, data, None, source, pat_str, special_tokens, name, dummy_prefix)
    except FormatError as e:
        e.path = e.path or source
        raise
    except (VocabError, PatternError) as e:
        raise FormatError(str(e), f"{fmt} contents", source) from None


def _dispatch(fmt: str, data: bytes, path: Path | None, source: str, pat_str, special_tokens, name,
              dummy_prefix: bool | None = None):
    stem = name or (path.name.split(".")[0] if path is not None else "") or "vocab"
    if fmt in ("bpe2", "bpz2"):
        return _load_bpe2(data, source, pat_str, special_tokens, name)
    if fmt == "tiktoken":
        return _load_tiktoken(data, source, pat_str, special_tokens, name or stem)
    if fmt == "gpt2":
        assert path is not None  # loads() refuses gpt2
        return _load_gpt2(path, pat_str, special_tokens, name)
    if fmt == "sentencepiece":
        from bytepair.formats import sentencepiece
        return sentencepiece.load(data, source, name or stem)
    if fmt == "leap":
        from bytepair.formats import leap
        return leap.load(data, source, name or stem, dummy_prefix)
    if fmt == "qtkr":
        from bytepair.formats import qtkr
        return qtkr.load(data, source, name or stem, pat_str)
    if fmt == "tokenizer.json":
        from bytepair.formats import hf
        return hf.load(data, source, name or stem)
    raise AssertionError(fmt)  # detect() returns only the formats above


def _load_tiktoken(data: bytes, source: str, pat_str, special_tokens, name: str):
    from bytepair import _core
    from bytepair.encoding import Encoding

    known = _known_encoding(hashlib.sha256(data).hexdigest())
    if known is not None:
        name = known[0]
    pattern = pat_str or (known[1] if known else default_pattern())
    specials = special_tokens if special_tokens is not None else (known[2] if known else {})
    try:
        core = _core.Tokenizer.from_tiktoken(data, list(specials.items()), pattern)
    except FormatError as e:
        e.path = source
        raise
    enc = Encoding._from_core(name, core, pattern, specials)
    enc._source_sha256 = hashlib.sha256(data).digest()
    return enc


def _load_bpe2(data: bytes, source: str, pat_str, special_tokens, name):
    from bytepair.encoding import Encoding
    from bytepair.formats import bpe2

    head = bpe2.info(data, source)
    recorded = dict(head.get("special_tokens") or [])
    specials = special_tokens if special_tokens is not None else recorded
    pattern = pat_str or head.get("pattern") or default_pattern()
    core = bpe2.core_from_bpe2(data, source, specials, pattern)
    enc = Encoding._from_core(name or head.get("name") or Path(source).name.split(".")[0], core, pattern, specials)
    if any(head["source_hash"]):
        enc._source_sha256 = head["source_hash"]
    return enc


def _load_gpt2(path: Path, pat_str, special_tokens, name):
    """GPT-2's pair of files: ``path`` is either of them; the other is beside it."""
    from bytepair.encoding import Encoding
    from bytepair.formats.gpt2 import gpt2_tiktoken_bytes
    from bytepair.registry.openai import ENDOFTEXT, R50K_PATTERN

    folder = path.parent
    vocab_bpe, encoder_json = folder / "vocab.bpe", folder / "encoder.json"
    data = path.read_bytes()
    if detect(data, os.fspath(path)) == "gpt2" and data.lstrip()[:1] == b"{":
        encoder_json = path
    else:
        vocab_bpe = path
    for f in (vocab_bpe, encoder_json):
        if not f.is_file():
            raise FormatError(f"GPT-2 vocabularies are two files; {f.name} was not found beside "
                              f"{path.name}", None, os.fspath(path))
    try:
        text = gpt2_tiktoken_bytes(vocab_bpe.read_bytes(), encoder_json.read_bytes())
    except FormatError as e:
        e.path = os.fspath(encoder_json if e.path == "encoder.json" else vocab_bpe)
        raise
    from bytepair import _core

    n = text.count(b"\n")
    specials = special_tokens if special_tokens is not None else {ENDOFTEXT: n}
    pattern = pat_str or R50K_PATTERN
    core = _core.Tokenizer.from_tiktoken(text, list(specials.items()), pattern)
    return Encoding._from_core(name or "gpt2", core, pattern, specials)


def save(tokenizer: Any, path: str | os.PathLike, format: str | None = None) -> None:
    """Writes ``tokenizer`` to ``path`` in ``format`` (default: from the file name's suffix).

    Written atomically (temp file, then rename). A format that cannot carry part of the
    tokenizer (a .tiktoken file has no pattern or special tokens; QTKR no pattern) writes what
    it can: docs/formats.md lists what each loses.
    """
    fmt = format or format_for_path(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    data = _write_encoding(tokenizer, fmt)
    from bytepair.formats.bpe2 import write_atomic
    write_atomic(path, data)


def _write_encoding(enc: Any, fmt: str) -> bytes:
    """An Encoding in ``fmt``: a file read is written back unchanged in its own format; other
    formats by the model's kind."""
    from bytepair.encoding import Encoding

    if not isinstance(enc, Encoding):
        raise TypeError(f"cannot save a {type(enc).__name__}")
    kind = enc._core_bpe.kind
    if kind != "rank" and fmt == enc.source_format and enc._source is not None:
        return enc._source
    if kind == "score":
        return _write_score(enc, fmt)
    if kind == "merge":
        return _write_merge(enc, fmt)
    if fmt == "tiktoken":
        return enc._core_bpe.to_tiktoken()
    if fmt in ("bpe2", "bpz2"):
        digest = getattr(enc, "_source_sha256", None) or bytes(32)
        return enc._core_bpe.to_bpe2(digest, enc.name, 19 if fmt == "bpz2" else None)
    if fmt == "tokenizer.json":
        from bytepair.formats import hf
        return hf.dumps_encoding(enc)
    if fmt == "qtkr":
        from bytepair.formats import qtkr
        return qtkr.dumps_encoding(enc)
    if fmt == "leap":
        from bytepair.formats import leap
        return leap.dumps_encoding(enc)
    raise ValueError(f"a rank vocabulary cannot be written as {fmt}")


def _write_score(enc: Any, fmt: str) -> bytes:
    if fmt == "sentencepiece":
        if enc.source_format != "sentencepiece" or enc._source is None:
            raise ValueError("only a model read from a SentencePiece file can be written as one "
                             "(a LEAP table has no piece types or normalisation settings)")
        return enc._core_bpe.to_sentencepiece(enc._source)
    if fmt == "leap":
        return enc._core_bpe.to_leap()
    raise ValueError(f"a score-BPE model cannot be written as {fmt} (only sentencepiece or leap): "
                     "the formats differ in algorithm, not just layout")


def _write_merge(enc: Any, fmt: str) -> bytes:
    if fmt == "qtkr":
        return enc._core_bpe.to_qtkr(enc.bos_id, enc.eos_id, enc.pad_id)
    source = enc.source_format
    can = "qtkr" + (f" or {source}" if enc._source is not None and source != "qtkr" else "")
    if fmt == "tokenizer.json":
        raise ValueError(f"writing a {source} model as tokenizer.json is not supported (only {can}); "
                         "a rank vocabulary can be")
    raise ValueError(f"a {source} merge-list model cannot be written as {fmt} (only {can}): "
                     "rank formats (tiktoken, bpe2, bpz2, gpt2) need merge priority = token id, and "
                     "score formats (sentencepiece, leap) a different algorithm")
