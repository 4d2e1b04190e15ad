"""What the tokenizers that `bytepair.load` builds from files share, whatever their algorithm:
counting, decoding lists of ids, the mapping of bad ids to UnknownTokenError, and saving.

ScoreEncoding (score BPE) and MergeEncoding (merge-list BPE) subclass it; each provides
`encode`, `decode_bytes` and `decode_single_token_bytes`. (`Encoding`, rank BPE, follows
tiktoken's own class and stands alone.)
"""

from __future__ import annotations

from typing import Sequence

from bytepair.errors import UnknownTokenError


class LoadedTokenizer:
    name: str
    n_vocab: int
    _special_tokens: dict[str, int]

    def count(self, text: str) -> int:
        """The number of tokens ``encode`` gives."""
        return len(self.encode(text))  # type: ignore[attr-defined]

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)  # type: ignore[attr-defined]

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(t) for t in tokens]  # type: ignore[attr-defined]

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace") -> list[str]:
        return [self.decode(t, errors=errors) for t in batch]

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    @property
    def max_token_value(self) -> int:
        return self.n_vocab - 1

    def save(self, path, format: str | None = None) -> None:
        from bytepair.formats import save

        save(self, path, format)

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
