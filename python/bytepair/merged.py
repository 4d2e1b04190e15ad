"""`MergeEncoding`: merge-list BPE tokenizers (QTKR files, HF ``tokenizer.json`` BPE models) with
``Encoding``'s encode/decode surface. The pipeline runs in Rust (``crates/core/src/merged.rs``).
"""

from __future__ import annotations

from typing import Callable, Sequence

from bytepair.loaded import LoadedTokenizer


class MergeEncoding(LoadedTokenizer):
    """A merge-list tokenizer loaded by :func:`bytepair.load` from a QTKR or tokenizer.json file.

    ``special_tokens`` (added tokens for tokenizer.json; BOS/EOS/PAD for QTKR) are split out of
    the text when ``split_specials`` is true: by default for tokenizer.json (as HF does), not
    for QTKR.
    """

    def __init__(self, name: str, core, source_format: str, *, special_tokens: dict[str, int],
                 pat_str: str | None, split_specials: bool = False, bos_id: int | None = None,
                 eos_id: int | None = None, pad_id: int | None = None,
                 normalize: Callable[[str], str] | None = None,
                 denormalize: Callable[[bytes], bytes] | None = None, writer=None):
        self.name = name
        self._core = core
        self.source_format = source_format
        self._special_tokens = dict(special_tokens)
        self._pat_str = pat_str
        self._split_specials = split_specials
        self.bos_id, self.eos_id, self.pad_id = bos_id, eos_id, pad_id
        self._normalize = normalize
        self._denormalize = denormalize
        self._writer = writer
        self.n_vocab = core.n_vocab

    def __repr__(self) -> str:
        return f"<MergeEncoding {self.name!r} ({self.source_format}, {self.n_vocab} tokens)>"

    def encode(self, text: str, *, split_specials: bool | None = None, add_bos: bool = False,
               add_eos: bool = False) -> list[int]:
        """Token ids of ``text``. Lone surrogates become U+FFFD; anything but a ``str`` is a
        TypeError (both checked in the core, off the common path)."""
        if self._normalize is not None:
            text = self._normalize(_checked(text))
        ids = self._core.encode(text, self._split_specials if split_specials is None else split_specials)
        if add_bos and self.bos_id is not None:
            ids.insert(0, self.bos_id)
        if add_eos and self.eos_id is not None:
            ids.append(self.eos_id)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode(text, split_specials=False)

    def encode_batch(self, texts: Sequence[str], *, split_specials: bool | None = None, add_bos: bool = False,
                     add_eos: bool = False, num_threads: int = 8) -> list[list[int]]:
        """``[encode(t) for t in texts]``, on up to ``num_threads`` threads with the GIL released."""
        if self._normalize is not None:
            texts = [self._normalize(_checked(t)) for t in texts]
        split = self._split_specials if split_specials is None else split_specials
        batch = self._core.encode_batch(texts, split, num_threads)
        if (add_bos and self.bos_id is not None) or (add_eos and self.eos_id is not None):
            for ids in batch:
                if add_bos and self.bos_id is not None:
                    ids.insert(0, self.bos_id)
                if add_eos and self.eos_id is not None:
                    ids.append(self.eos_id)
        return batch

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        data = self._call(lambda: self._core.decode_bytes(list(tokens)), tokens)
        return self._denormalize(data) if self._denormalize else data

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._call(lambda: self._core.token_bytes(token), [token])

    def _write_format(self, fmt: str) -> bytes:
        if fmt == "qtkr":
            return self._core.to_qtkr(self.bos_id, self.eos_id, self.pad_id)
        if self._writer is not None:
            data = self._writer(fmt)
            if data is not None:
                return data
        raise ValueError(f"a {self.source_format} merge-list model cannot be written as {fmt}")


def _checked(text: object) -> str:
    if not isinstance(text, str):
        hint = " (decode bytes to str first)" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"expected text as str, got {type(text).__name__}{hint}")
    return text
