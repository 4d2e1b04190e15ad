"""`ScoreEncoding`: score-BPE tokenizers (SentencePiece BPE models, LEAP / llama2.c tables) with
``Encoding``'s encode/decode surface.

The rules of each home system live in the Rust pipeline (``crates/core/src/scored.rs``):
normalisation, byte fallback, unknown runs, BOS/EOS, and decoding. This class adds the Python
surface: names, batching, errors, saving.

Special tokens are the control and unknown pieces (SentencePiece; LEAP: BOS and EOS). By
default their spellings in text (``<s>``, ``[INST]``) are ordinary text, as ``sentencepiece``
treats them. ``allowed_special`` / ``disallowed_special`` work as in ``Encoding.encode``
(tiktoken's rules): an allowed spelling becomes its piece, and the text between is encoded part
by part, each part as ``sentencepiece`` encodes a text of its own (dummy prefix included, as
``mistral-common`` builds its instruct sequences); a disallowed spelling raises ValueError
naming it. BOS/EOS are added with ``add_bos``/``add_eos``.
"""

from __future__ import annotations

from typing import AbstractSet, Collection, Sequence

from bytepair.loaded import LoadedTokenizer

PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}


class ScoreEncoding(LoadedTokenizer):
    """A score-BPE tokenizer loaded by :func:`bytepair.load` from a ``.model`` or LEAP file."""

    def __init__(self, name: str, core, source_format: str, *, source: bytes | None = None,
                 load_options: dict | None = None):
        self.name = name
        self._source = source
        self._load_options = dict(load_options or {})
        self._core = core
        # The core's encode has this class's signature and checks (str only, lone surrogates
        # repaired), so each instance calls it directly: a Python frame in between costs more
        # than a short line takes to encode. The method below says the same for the class.
        self.encode = core.encode
        self.source_format = source_format
        self.n_vocab = core.n_vocab
        self.bos_id = core.bos_id
        self.eos_id = core.eos_id
        self.unk_id = core.unk_id
        # Built in Rust (one call, not one per piece).
        self._special_tokens = dict(core.special_tokens())

    def __repr__(self) -> str:
        return f"<ScoreEncoding {self.name!r} ({self.source_format}, {self.n_vocab} pieces)>"

    # ---------------------------------------------------------------- encoding

    def encode(self, text: str, *, add_bos: bool = False, add_eos: bool = False,
               allowed_special: AbstractSet[str] | str | None = None,
               disallowed_special: Collection[str] | str | None = None) -> list[int]:
        """Token ids of ``text``, exactly as the home system (``sentencepiece`` or llama2.c)
        gives them; BOS/EOS when asked and the model has them. ``allowed_special`` /
        ``disallowed_special``: tiktoken's rules over the special pieces (``None``: spellings are
        text, as in ``sentencepiece``). Lone surrogates become U+FFFD; anything but a ``str`` is
        a TypeError (both checked in the core, off the common path)."""
        return self._core.encode(text, add_bos=add_bos, add_eos=add_eos, allowed_special=allowed_special,
                                 disallowed_special=disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        return self._core.encode(text)

    def encode_batch(self, texts: Sequence[str], *, add_bos: bool = False, add_eos: bool = False,
                     num_threads: int = 8, allowed_special: AbstractSet[str] | str | None = None,
                     disallowed_special: Collection[str] | str | None = None) -> list[list[int]]:
        """``[encode(t, ...) for t in texts]``, on up to ``num_threads`` threads with the GIL
        released."""
        return self._core.encode_batch(texts, add_bos=add_bos, add_eos=add_eos, num_threads=num_threads,
                                       allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        return self.encode_batch(texts, num_threads=num_threads)

    # ---------------------------------------------------------------- decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The decoded text's bytes (byte pieces kept raw, not replaced)."""
        return self._call(lambda: self._core.decode(list(tokens), False), tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decoded text. With ``errors="replace"`` (the default) invalid byte runs become U+FFFD
        as the home system does it (SentencePiece: one per bad byte)."""
        if errors == "replace" and self.source_format == "sentencepiece":
            return self._call(lambda: self._core.decode(list(tokens), True), tokens).decode("utf-8")
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The piece's bytes as stored (U+2581 kept, ``<0xHH>`` spelled out)."""
        return self._call(lambda: self._core.token_bytes(token), [token])

    # ---------------------------------------------------------------- vocabulary

    def id_to_piece(self, token: int) -> str:
        return self.decode_single_token_bytes(token).decode("utf-8", "replace")

    def _token_id(self, piece: bytes) -> int | None:
        return self._core.piece_id(piece)

    def piece_to_id(self, piece: str) -> int:
        """The id of a piece; the unknown id (as SentencePiece) or KeyError when there is none."""
        found = self._core.piece_id(piece.encode("utf-8"))
        if found is not None:
            return found
        if self.unk_id is not None:
            return self.unk_id
        raise KeyError(piece)

    def score(self, token: int) -> float:
        return self._core.score(token)

    def piece_type(self, token: int) -> str:
        return PIECE_TYPES[self._core.kind(token)]

    # ---------------------------------------------------------------- saving

    def _write_format(self, fmt: str) -> tuple[bytes, list[str]]:
        """The model in ``fmt`` and what that file cannot carry (see ``bytepair.formats.save``;
        what LEAP keeps is worked out in ``bytepair.formats.leap``)."""
        from bytepair.formats import leap

        if fmt == self.source_format and self._source is not None:
            return self._source, leap.dropped_load_options(self._load_options.get("dummy_prefix"), self.bos_id)
        if fmt == "sentencepiece":
            data = self._core.to_sentencepiece()
            if data is None:
                raise ValueError("only a model read from a SentencePiece file can be written as one "
                                 "(a LEAP table has no piece types or normalisation settings)")
            return data, []
        if fmt == "leap":
            return self._core.to_leap(), leap.dropped_from_sentencepiece(self._special_tokens, self._core.pieces())
        raise ValueError(f"a score-BPE model cannot be written as {fmt} (only sentencepiece or leap): "
                         "the formats differ in algorithm, not just layout")
