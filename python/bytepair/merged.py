"""`MergeEncoding`: merge-list BPE tokenizers (QTKR files, HF ``tokenizer.json`` BPE models) with
``Encoding``'s encode/decode surface. The whole pipeline (added tokens and their flags,
normalizer, pre-tokenizer, model) runs in Rust (``crates/core/src/merged.rs``).

Special tokens (tokenizer.json: added tokens marked ``special``; QTKR: BOS/EOS/PAD) follow
tiktoken's ``allowed_special`` / ``disallowed_special`` rules. The defaults are each home
system's: tokenizer.json splits every added token out of the text, as HF ``tokenizers`` does
(``allowed_special="all"``); QTKR, converted from tiktoken vocabularies, has tiktoken's
(nothing allowed, a special spelling in the text raises ValueError). Added tokens that are not
special are part of the vocabulary and always split out.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Collection, Sequence

from bytepair.loaded import LoadedTokenizer

AllowedSpecial = AbstractSet[str] | str
DisallowedSpecial = Collection[str] | str


class MergeEncoding(LoadedTokenizer):
    """A merge-list tokenizer loaded by :func:`bytepair.load` from a QTKR or tokenizer.json file."""

    def __init__(self, name: str, core, source_format: str, *, special_tokens: dict[str, int],
                 pat_str: str | None, added_tokens: dict[str, int] | None = None,
                 default_allowed: AllowedSpecial = frozenset(), default_disallowed: DisallowedSpecial = "all",
                 bos_id: int | None = None, eos_id: int | None = None, pad_id: int | None = None,
                 denormalize: Callable[[bytes], bytes] | None = None, source: bytes | None = None,
                 load_options: dict | None = None):
        self.name = name
        self._core = core
        self.source_format = source_format
        self._special_tokens = dict(special_tokens)
        self._added_tokens = dict(added_tokens if added_tokens is not None else special_tokens)
        self._pat_str = pat_str
        self._default_allowed = default_allowed
        self._default_disallowed = default_disallowed
        self.bos_id, self.eos_id, self.pad_id = bos_id, eos_id, pad_id
        self._denormalize = denormalize
        self._source = source
        self._load_options = dict(load_options or {})
        self.n_vocab = core.n_vocab

    def __repr__(self) -> str:
        return f"<MergeEncoding {self.name!r} ({self.source_format}, {self.n_vocab} tokens)>"

    def _bos_eos(self, ids: list[int], add_bos: bool, add_eos: bool) -> list[int]:
        if add_bos and self.bos_id is not None:
            ids.insert(0, self.bos_id)
        if add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    def encode(self, text: str, *, allowed_special: AllowedSpecial | None = None,
               disallowed_special: DisallowedSpecial | None = None, add_bos: bool = False,
               add_eos: bool = False) -> list[int]:
        """Token ids of ``text``. ``allowed_special`` / ``disallowed_special`` as in
        ``Encoding.encode`` (``None``: this format's default, see the module docstring). Lone
        surrogates become U+FFFD; anything but a ``str`` is a TypeError (both in the core)."""
        ids = self._core.encode(
            text, self._default_allowed if allowed_special is None else allowed_special,
            self._default_disallowed if disallowed_special is None else disallowed_special)
        return self._bos_eos(ids, add_bos, add_eos) if add_bos or add_eos else ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids with every special spelling taken as text (non-special added tokens still match)."""
        return self._core.encode(text)

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial | None = None,
                     disallowed_special: DisallowedSpecial | None = None, add_bos: bool = False,
                     add_eos: bool = False, num_threads: int = 8) -> list[list[int]]:
        """``[encode(t, ...) for t in texts]``, on up to ``num_threads`` threads with the GIL released."""
        batch = self._core.encode_batch(
            texts, self._default_allowed if allowed_special is None else allowed_special,
            self._default_disallowed if disallowed_special is None else disallowed_special, num_threads)
        if add_bos or add_eos:
            for ids in batch:
                self._bos_eos(ids, add_bos, add_eos)
        return batch

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        return self._core.encode_batch(texts, None, None, num_threads)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        data = self._call(lambda: self._core.decode_bytes(list(tokens)), tokens)
        return self._denormalize(data) if self._denormalize else data

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._call(lambda: self._core.token_bytes(token), [token])

    def _token_id(self, token: bytes) -> int | None:
        return self._core.token_id(token)

    def _write_format(self, fmt: str) -> tuple[bytes, list[str]]:
        """The model in ``fmt`` and what that file cannot carry (see ``bytepair.formats.save``;
        what QTKR keeps is worked out in ``bytepair.formats.qtkr``)."""
        if fmt == self.source_format and self._source is not None and fmt != "qtkr":
            return self._source, []  # a file read is written back unchanged
        if fmt == "qtkr":
            from bytepair.formats import qtkr

            data = self._core.to_qtkr(self.bos_id, self.eos_id, self.pad_id)
            qtkr.check_readable(data, self.source_format)
            tokenizer_json = self._source if self.source_format == "tokenizer.json" else None
            return data, qtkr.dropped_from_merge_model(
                self._pat_str, self._special_tokens, self._added_tokens, (self.bos_id, self.eos_id, self.pad_id),
                tokenizer_json)
        can = "qtkr" + (f" or {self.source_format}" if self._source is not None and self.source_format != "qtkr" else "")
        if fmt == "tokenizer.json":
            raise ValueError(f"writing a {self.source_format} model as tokenizer.json is not supported (only {can}); "
                             "a rank vocabulary (Encoding) can be")
        raise ValueError(f"a {self.source_format} merge-list model cannot be written as {fmt} (only {can}): "
                         "rank formats (tiktoken, bpe2, bpz2, gpt2) need merge priority = token id, and "
                         "score formats (sentencepiece, leap) a different algorithm")
