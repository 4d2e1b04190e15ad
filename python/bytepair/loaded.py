"""What the tokenizers that `bytepair.load` builds from files share, whatever their algorithm:
counting, decoding lists of ids, the mapping of bad ids to UnknownTokenError, batches, saving
and pickling.

ScoreEncoding (score BPE) and MergeEncoding (merge-list BPE) subclass it; each provides
`encode`, `decode_bytes` and `decode_single_token_bytes`. (`Encoding`, rank BPE, follows
tiktoken's own class and stands alone.)

**Pickling.** Such a tokenizer keeps the bytes of the file it was read from and pickles as
those bytes plus the load options: unpickling parses them again (no file, no network), so a
pickle works in a fresh process and on another machine. The cost is the file's size in the
pickle (0.5 MB for a SentencePiece model, ~5 MB for a 100 K-token tokenizer.json).
"""

from __future__ import annotations

from typing import Any, Sequence

from bytepair.errors import UnknownTokenError


def _unpickle(fmt: str, data: bytes, name: str, options: dict[str, Any]):
    from bytepair.formats import loads

    return loads(data, format=fmt, name=name, **options)


class LoadedTokenizer:
    name: str
    n_vocab: int
    source_format: str
    _special_tokens: dict[str, int]
    # The file's bytes and the options it was loaded with (see the module docstring).
    _source: bytes | None = None
    _load_options: dict[str, Any] = {}

    def count(self, text: str, **kwargs) -> int:
        """The number of tokens ``encode`` gives (same arguments)."""
        return len(self.encode(text, **kwargs))  # type: ignore[attr-defined]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a token given by its exact spelling; KeyError if there is none."""
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_tokens:
                return self._special_tokens[text_or_bytes]
            text_or_bytes = text_or_bytes.encode("utf-8")
        found = self._token_id(text_or_bytes)  # type: ignore[attr-defined]
        if found is None:
            raise KeyError(text_or_bytes)
        return found

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)  # type: ignore[attr-defined]

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(t) for t in tokens]  # type: ignore[attr-defined]

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        return [self.decode(t, errors=errors) for t in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        return [self.decode_bytes(t) for t in batch]  # type: ignore[attr-defined]

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        return token in self._special_tokens.values()

    @property
    def max_token_value(self) -> int:
        return self.n_vocab - 1

    def save(self, path, format: str | None = None, *, lossy: bool = False) -> list[str]:
        """See :func:`bytepair.formats.save` (``lossy``, and the list returned)."""
        from bytepair.formats import save

        return save(self, path, format, lossy=lossy)

    def __reduce__(self):
        if self._source is None:
            raise TypeError(f"this {type(self).__name__} was not loaded from a file and cannot be pickled")
        return (_unpickle, (self.source_format, self._source, self.name, dict(self._load_options)))

    def _call(self, f, tokens):
        """Run a core decode call; a bad id becomes UnknownTokenError naming it and the range."""
        try:
            return f()
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            for t in tokens:
                if not isinstance(t, int):
                    raise TypeError(f"token ids must be int, got {type(t).__name__}") from None
            raise UnknownTokenError(next(t for t in tokens if not 0 <= t < self.n_vocab), self.n_vocab) from None
