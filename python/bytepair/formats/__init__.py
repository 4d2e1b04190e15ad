"""Vocabulary file formats, one module each, and the two entry points over them:

- :func:`load` reads any supported file, detecting its format from the content
  (:mod:`bytepair.formats.detect`), and returns a tokenizer with ``Encoding``'s
  encode/decode surface;
- :func:`save` writes a tokenizer in a named format (``tokenizer.save(path, format=...)``).

Neither guesses. A rank vocabulary whose file records no split pattern (a ``.tiktoken`` file,
a BPE2 table without one) gets its pattern from a pinned fact, the vocabulary recognised by
SHA-256 (:mod:`bytepair.formats.known`), or :func:`load` raises a FormatError asking for
``pat_str=``. A format that cannot carry everything the tokenizer needs to encode as it does
(the split pattern, special tokens, normalisation) is refused by :func:`save` with a
LossyFormatError naming what it would drop, unless ``lossy=True``. docs/formats.md has the
table of what each format carries.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from bytepair.errors import FormatError, LossyFormatError, PatternError, VocabError
from bytepair.formats.detect import FORMATS, detect
from bytepair.formats.limits import read_vocab_file

__all__ = ["FORMATS", "detect", "load", "loads", "save", "would_drop", "format_for_path"]

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


def load(path: str | os.PathLike, *, pat_str: str | None = None,
         special_tokens: dict[str, int] | None = None, name: str | None = None,
         format: str | None = None) -> Encoding:
    """Reads a vocabulary file in any supported format and returns a tokenizer.

    The format comes from the content (see :mod:`bytepair.formats.detect`). Rank vocabularies
    (tiktoken, BPE2/BPZ2, GPT-2) give an :class:`~bytepair.Encoding`; SentencePiece and LEAP
    give a score-BPE tokenizer, QTKR a merge-list tokenizer and tokenizer.json the tokenizer its
    model calls for: all with ``encode``/``decode``/``save``.

    ``pat_str`` and ``special_tokens`` override what the file records. A ``.tiktoken`` file
    records neither: a known vocabulary (OpenAI's, Llama 3's; by SHA-256) gets its encoding's
    pattern and specials, any other file needs ``pat_str=`` (a FormatError says so) and has no
    special tokens unless given. A BPE2/BPZ2 table without a recorded pattern is treated the
    same way, by the source hash in its header. A directory holding GPT-2's ``encoder.json``
    and ``vocab.bpe`` loads as GPT-2, with GPT-2's pattern. ``format`` skips detection (for a file too damaged or too small to recognise).
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
    data = read_vocab_file(path)
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
          special_tokens: dict[str, int] | None = None, source: str = "<bytes>", dummy_prefix: bool | None = None) -> Encoding:
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


def _no_pattern(source: str, digest: bytes, of: str = "its") -> FormatError:
    """The error for a rank vocabulary whose file records no split pattern and whose hash is no
    known vocabulary's (see :mod:`bytepair.formats.known`): bytepair asks, never picks one."""
    which = f"{of} SHA-256 {digest.hex()} is no vocabulary" if any(digest) else "it records no source"
    return FormatError(
        f"the file records no split pattern, and {which} bytepair knows; pass pat_str= (the pattern "
        "the vocabulary was made with; --pattern on the command line)", "split pattern", source)


def _load_tiktoken(data: bytes, source: str, pat_str, special_tokens, name: str):
    from bytepair import _core
    from bytepair.encoding import Encoding
    from bytepair.formats.known import by_sha256

    digest = hashlib.sha256(data).digest()
    known = by_sha256(digest)
    if known is not None:
        name = known.name
    pattern = pat_str or (known.pattern if known else None)
    if special_tokens is not None:
        specials = dict(special_tokens)
    else:
        specials = dict(known.special_tokens) if known else {}
    try:
        # Without a pattern the table is still read (any pattern reads it the same), so that a
        # malformed or inconsistent file is reported as such rather than as one missing a pattern.
        core = _core.Tokenizer.from_tiktoken(data, list(specials.items()), pattern or ".")
    except FormatError as e:
        e.path = source
        raise
    if not pattern:
        raise _no_pattern(source, digest)
    enc = Encoding._from_core(name, core, pattern, specials)
    enc._source_sha256 = digest
    return enc


def _load_bpe2(data: bytes, source: str, pat_str, special_tokens, name):
    """The table, with the pattern and specials its trailing section records; a table without
    them gets those of the vocabulary its header's source hash names, if that is a known one."""
    from bytepair.encoding import Encoding
    from bytepair.formats import bpe2
    from bytepair.formats.known import by_sha256

    head = bpe2.info(data, source)
    known = by_sha256(head["source_hash"]) if any(head["source_hash"]) else None
    pattern = pat_str or head.get("pattern") or (known.pattern if known else None)
    if special_tokens is not None:
        specials = dict(special_tokens)
    elif head["has_trailer"]:
        specials = dict(head.get("special_tokens") or [])
    else:
        specials = dict(known.special_tokens) if known else {}
    # Read even without a pattern (as in _load_tiktoken), so a damaged table is reported as such.
    core = bpe2.core_from_bpe2(data, source, specials, pattern or ".")
    if not pattern:
        raise _no_pattern(source, head["source_hash"], "its source's")
    name = name or head.get("name") or (known.name if known else None) or Path(source).name.split(".")[0]
    enc = Encoding._from_core(name, core, pattern, specials)
    if any(head["source_hash"]):
        enc._source_sha256 = head["source_hash"]
    return enc


def _load_gpt2(path: Path, pat_str, special_tokens, name):
    """GPT-2's pair of files: ``path`` is either of them; the other is beside it.

    The split pattern is GPT-2's, known by the pair's structure: encoder.json + vocab.bpe is the
    format of GPT-2's own encoder (openai/gpt-2, ``encoder.py``), which has that one pattern
    built in and no place in its files for another. The exception is ranks recognised by hash
    (:mod:`bytepair.formats.known`; GPT-2's own ranks are r50k_base's): a known vocabulary
    keeps its own pattern and specials. Otherwise the special tokens are the ones encoder.json
    records (GPT-2's ``<|endoftext|>`` at 50256), none when it records none.
    """
    from bytepair.encoding import Encoding
    from bytepair.formats.gpt2 import GPT2_PATTERN, gpt2_tiktoken_bytes, recorded_special_tokens
    from bytepair.formats.known import by_sha256

    folder = path.parent
    vocab_bpe, encoder_json = folder / "vocab.bpe", folder / "encoder.json"
    data = read_vocab_file(path)
    if detect(data, os.fspath(path)) == "gpt2" and data.lstrip()[:1] == b"{":
        encoder_json = path
    else:
        vocab_bpe = path
    for f in (vocab_bpe, encoder_json):
        if not f.is_file():
            raise FormatError(f"GPT-2 vocabularies are two files; {f.name} was not found beside "
                              f"{path.name}", None, os.fspath(path))
    encoder_data = read_vocab_file(encoder_json)
    try:
        text = gpt2_tiktoken_bytes(read_vocab_file(vocab_bpe), encoder_data)
    except FormatError as e:
        e.path = os.fspath(encoder_json if e.path == "encoder.json" else vocab_bpe)
        raise
    from bytepair import _core

    known = by_sha256(hashlib.sha256(text).digest())
    if special_tokens is not None:
        specials = dict(special_tokens)
    else:
        specials = dict(known.special_tokens) if known else recorded_special_tokens(encoder_data)
    pattern = pat_str or (known.pattern if known else GPT2_PATTERN)
    core = _core.Tokenizer.from_tiktoken(text, list(specials.items()), pattern)
    # tiktoken calls the encoding made from GPT-2's own files "gpt2" (its ranks are r50k_base's).
    default_name = "gpt2" if known is None or known.name == "r50k_base" else known.name
    return Encoding._from_core(name or default_name, core, pattern, specials)


def save(tokenizer: Any, path: str | os.PathLike, format: str | None = None, *, lossy: bool = False) -> list[str]:
    """Writes ``tokenizer`` to ``path`` in ``format`` (default: from the file name's suffix),
    atomically (temp file, then rename), and returns what the file does not carry.

    A format that cannot carry everything the tokenizer needs to encode as it does (a
    ``.tiktoken`` file has no split pattern or special tokens, QTKR and LEAP no pattern, ...)
    is refused with a :class:`~bytepair.LossyFormatError` naming what it would drop, and
    nothing is written. ``lossy=True`` writes it anyway; the returned list (empty when nothing
    is lost) says what was dropped. A ``.tiktoken`` file of a known vocabulary (by SHA-256)
    with that vocabulary's own pattern and specials loses nothing: :func:`load` gives them
    back. docs/formats.md lists what each format carries.
    """
    fmt = format or format_for_path(path)
    data, dropped = _write(tokenizer, fmt)
    if dropped and not lossy:
        keeps = lossless_format(tokenizer)
        raise LossyFormatError(fmt, dropped, os.fspath(path), keeps if keeps != fmt else None)
    from bytepair.formats.bpe2 import write_atomic
    write_atomic(path, data)
    return dropped


def would_drop(tokenizer: Any, format: str) -> list[str]:
    """What :func:`save` in ``format`` would drop (empty: nothing), without writing a file; a
    format that cannot hold the tokenizer at all raises as :func:`save` does."""
    return _write(tokenizer, format)[1]


def lossless_format(tokenizer: Any) -> str:
    """A format that keeps everything of ``tokenizer``: BPE2 for a rank vocabulary, otherwise the
    format it was read from."""
    return getattr(tokenizer, "source_format", None) or "bpe2"


def _write(tokenizer: Any, fmt: str) -> tuple[bytes, list[str]]:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return _write_encoding(tokenizer, fmt)


def names(spellings, limit: int = 6) -> str:
    """``"<|a|>, <|b|>"``, the first ``limit`` of them, and how many more."""
    spellings = list(spellings)
    shown = ", ".join(spellings[:limit])
    return shown + (f" (+{len(spellings) - limit} more)" if len(spellings) > limit else "")


def lost_specials(have: dict[str, int], kept: dict[str, int]) -> list[str]:
    """What a written file loses of the special tokens ``have``, when loading it gives ``kept``."""
    lost = [s for s, i in have.items() if kept.get(s) != i]
    gained = [s for s, i in kept.items() if have.get(s) != i]
    out = []
    if lost:
        out.append(f"special tokens {names(lost)}")
    if gained:
        out.append(f"absence of special tokens {names(gained)} (loading the file would add them)")
    return out


def _write_encoding(enc: Any, fmt: str) -> tuple[bytes, list[str]]:
    """An Encoding in ``fmt``, and what that file loses (see :func:`save`), by its model's kind."""
    from bytepair.encoding import Encoding

    if not isinstance(enc, Encoding):
        raise TypeError(f"cannot save a {type(enc).__name__}")
    kind = enc._core_bpe.kind
    if kind == "score":
        return _write_score(enc, fmt)
    if kind == "merge":
        return _write_merge(enc, fmt)
    specials = enc._special_tokens
    if fmt == "tiktoken":
        from bytepair.formats.known import by_sha256

        data = enc._core_bpe.to_tiktoken()
        # Ranks only; but a known vocabulary's file gets its pattern and specials back on load.
        known = by_sha256(hashlib.sha256(data).digest())
        dropped = []
        if known is None or known.pattern != enc._pat_str:
            dropped.append("split pattern" + (f" (loading gives {known.name}'s)" if known else ""))
        return data, dropped + lost_specials(specials, dict(known.special_tokens) if known else {})
    if fmt in ("bpe2", "bpz2"):
        # The trailing section records the name, the pattern and the special tokens.
        digest = getattr(enc, "_source_sha256", None) or bytes(32)
        return enc._core_bpe.to_bpe2(digest, enc.name, 19 if fmt == "bpz2" else None), []
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


def _write_score(enc: Any, fmt: str) -> tuple[bytes, list[str]]:
    """A score model (SentencePiece, LEAP) in ``fmt``; what LEAP keeps is worked out in
    :mod:`bytepair.formats.leap`."""
    from bytepair.formats import leap

    if fmt == enc.source_format and enc._source is not None:
        # The file read, written back unchanged; its load options are not in it.
        return enc._source, leap.dropped_load_options(enc._load_options.get("dummy_prefix"), enc.bos_id)
    if fmt == "sentencepiece":
        if enc.source_format != "sentencepiece" or enc._source is None:
            raise ValueError("only a model read from a SentencePiece file can be written as one "
                             "(a LEAP table has no piece types or normalisation settings)")
        return enc._core_bpe.to_sentencepiece(enc._source), []
    if fmt == "leap":
        return enc._core_bpe.to_leap(), leap.dropped_from_sentencepiece(enc._special_tokens, enc._core_bpe.pieces())
    raise ValueError(f"a score-BPE model cannot be written as {fmt} (only sentencepiece or leap): "
                     "the formats differ in algorithm, not just layout")


def _write_merge(enc: Any, fmt: str) -> tuple[bytes, list[str]]:
    """A merge-list model (QTKR, tokenizer.json) in ``fmt``; what QTKR keeps is worked out in
    :mod:`bytepair.formats.qtkr`."""
    source = enc.source_format
    if fmt == source and enc._source is not None and fmt != "qtkr":
        return enc._source, []  # a file read is written back unchanged
    if fmt == "qtkr":
        from bytepair.formats import qtkr

        data = enc._core_bpe.to_qtkr(enc.bos_id, enc.eos_id, enc.pad_id)
        qtkr.check_readable(data, source)
        tokenizer_json = enc._source if source == "tokenizer.json" else None
        added = {c: i for c, i, _ in enc.model.added_tokens()}
        return data, qtkr.dropped_from_merge_model(
            enc._pat_str, enc._special_tokens, added, (enc.bos_id, enc.eos_id, enc.pad_id), tokenizer_json)
    can = "qtkr" + (f" or {source}" if enc._source is not None and source != "qtkr" else "")
    if fmt == "tokenizer.json":
        raise ValueError(f"writing a {source} model as tokenizer.json is not supported (only {can}); "
                         "a rank vocabulary can be")
    raise ValueError(f"a {source} merge-list model cannot be written as {fmt} (only {can}): "
                     "rank formats (tiktoken, bpe2, bpz2, gpt2) need merge priority = token id, and "
                     "score formats (sentencepiece, leap) a different algorithm")
