"""What only one model has, reached as ``enc.model``: every :class:`~bytepair.Encoding` has the
same encode/decode surface, and these small views hold the rest.

- :class:`RankModel` (tiktoken's rank BPE): the mergeable ranks and the splitter that runs the
  pattern.
- :class:`ScoreModel` (SentencePiece, LEAP): scores, piece types, SentencePiece's piece <-> id
  lookups with its unknown-id rule.
- :class:`MergeModel` (QTKR, tokenizer.json): the token table and the merge list.

A view holds nothing but its Encoding: each call reads the Rust tokenizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bytepair.encoding import Encoding

__all__ = ["MergeModel", "RankModel", "ScoreModel", "model_of"]

# SentencePiece's piece types, by the number its ModelProto stores.
PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}


class _View:
    kind: str

    def __init__(self, enc: Encoding):
        self._enc = enc
        self._core = enc._core_bpe

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._enc.name!r}>"


class RankModel(_View):
    """tiktoken's rank BPE: a token's rank is its id and its merge priority."""

    kind = "rank"

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        return self._enc._mergeable_ranks

    @property
    def splitter(self) -> str:
        """Which pre-tokenizer runs the pattern: a hand-written scanner ("cl100k", "o200k",
        ...), "automata" or "regex"."""
        return self._core.splitter


class ScoreModel(_View):
    """Score BPE: the adjacent pair whose merged piece scores highest merges first."""

    kind = "score"

    @property
    def flavor(self) -> str:
        """"sentencepiece" or "leap"."""
        return self._core.flavor

    @property
    def unk_id(self) -> int | None:
        return self._core.unk_id

    def score(self, token: int) -> float:
        return self._enc._call_core(lambda: self._core.score(token), [token])

    def piece_type(self, token: int) -> str:
        """"normal", "unknown", "control", "user_defined", "unused" or "byte"."""
        return PIECE_TYPES[self._enc._call_core(lambda: self._core.piece_kind(token), [token])]

    def id_to_piece(self, token: int) -> str:
        """The piece as stored (U+2581 kept, ``<0xHH>`` spelled out)."""
        return self._enc.decode_single_token_bytes(token).decode("utf-8", "replace")

    def piece_to_id(self, piece: str) -> int:
        """The id of a piece; the unknown id (as SentencePiece) or KeyError when there is none."""
        found = self._core.token_id(piece.encode("utf-8"))
        if found is not None:
            return found
        if self.unk_id is not None:
            return self.unk_id
        raise KeyError(piece)

    def pieces(self) -> list[tuple[bytes, float, str]]:
        """Every piece as (bytes, score, type), by id."""
        return [(b, s, PIECE_TYPES[k]) for b, s, k in self._core.pieces()]


class MergeModel(_View):
    """Merge-list BPE: the pair listed first merges first."""

    kind = "merge"

    def tokens(self) -> list[bytes]:
        """Every id's bytes (empty for a hole in the table)."""
        return self._core.tokens()

    def added_tokens(self) -> list[tuple[str, int, bool]]:
        """tokenizer.json's added tokens as (content, id, special), special or not; QTKR's
        BOS/EOS/PAD as special ones."""
        return self._core.added_tokens()

    def merges(self) -> list[tuple[int, int, int]]:
        """The merge list, (left id, right id, merged id) in priority order."""
        return self._core.merges()


_VIEWS = {"rank": RankModel, "score": ScoreModel, "merge": MergeModel}


def model_of(enc: Encoding) -> RankModel | ScoreModel | MergeModel:
    return _VIEWS[enc._core_bpe.kind](enc)
