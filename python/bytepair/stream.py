"""Decoding ids as they arrive, for printing a model's output while it generates.

A token can end in the middle of a UTF-8 character (byte-level BPE splits rare characters
into byte tokens; SentencePiece spells them as ``<0xHH>`` pieces), so decoding each id on its
own prints U+FFFD where the whole text has a character. :class:`StreamDecoder` holds back the
bytes of an unfinished character until the id that completes it arrives; what it has given
out, joined, is always a prefix of ``decode(all ids so far)``, and after :meth:`flush` it is
exactly that (tested for every split of the ids, tests/parity/test_stream_decode.py).

Cost: O(1) per id for rank-based encodings (each id's bytes are looked up once). For
SentencePiece-style tokenizers, whose decoding of a piece depends on what came before it (the
first piece that is not a control token loses its leading space), each step decodes the last
such id and the new one together and gives out the difference: still O(1) per id.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable

__all__ = ["StreamDecoder"]


def _replace_each_byte(err: UnicodeDecodeError) -> tuple[str, int]:
    # SentencePiece replaces every byte of an invalid sequence with U+FFFD, where Python's
    # "replace" gives one U+FFFD per maximal invalid subpart.
    return "\ufffd" * (err.end - err.start), err.end


codecs.register_error("bytepair.replace_each_byte", _replace_each_byte)


class StreamDecoder:
    """Turns ids into text one id (or a few) at a time.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("cl100k_base")
    >>> ids = enc.encode("naïve café 😀")
    >>> stream = StreamDecoder(enc)
    >>> "".join(stream.step(i) for i in ids) + stream.flush()
    'naïve café 😀'

    ``errors`` is what :meth:`bytes.decode` takes; with ``"replace"`` (the default) the text is
    the same as ``encoding.decode(ids)`` gives, for SentencePiece models too.
    """

    def __init__(self, encoding, errors: str = "replace"):
        self.encoding = encoding
        model = encoding.model
        if errors == "replace" and model.kind == "score" and model.flavor == "sentencepiece":
            errors = "bytepair.replace_each_byte"
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)
        # Rank models decode id by id; the others' decoders look at the token before (a
        # dummy prefix or a leading space to drop), so each id is decoded after the one
        # before it.
        self._by_token = model.kind == "rank"
        self._piece_type = model.piece_type if model.kind == "score" else None
        self._previous: list[int] = []

    def step(self, token: int) -> str:
        """The text that ``token`` completes (often all of it, sometimes nothing yet)."""
        if self._by_token:
            return self._utf8.decode(self.encoding.decode_single_token_bytes(token))
        control = self._piece_type is not None and self._piece_type(token) == "control"
        data = self._context_bytes(token, control)
        if control:
            # SentencePiece decodes each run of byte pieces on its own: a control token
            # between two halves of a character leaves both invalid.
            text = self._utf8.decode(data, final=True)
            self._utf8.reset()
            return text
        return self._utf8.decode(data)

    def feed(self, tokens: Iterable[int]) -> str:
        """The text that ``tokens`` complete."""
        if not self._by_token:
            return "".join(self.step(t) for t in tokens)
        token_bytes = self.encoding.decode_single_token_bytes
        return self._utf8.decode(b"".join(token_bytes(t) for t in tokens))

    def flush(self) -> str:
        """The rest: an unfinished character at the end becomes U+FFFD (per ``errors``).

        The decoder starts over afterwards, as for a new text.
        """
        text = self._utf8.decode(b"", final=True)
        self._utf8.reset()
        self._previous = []
        return text

    def _context_bytes(self, token: int, control: bool) -> bytes:
        """The bytes ``token`` adds after the ids before it (score BPE: decoded in context)."""
        before = self.encoding.decode_bytes(self._previous) if self._previous else b""
        both = self.encoding.decode_bytes([*self._previous, token])
        if not both.startswith(before):  # pragma: no cover - no supported model decodes so
            raise RuntimeError(f"decoding of id {token} rewrote the text before it")
        # Context for the next id: the last id that is not a control token (BOS, EOS), since
        # a control token writes nothing and leaves "is this the first piece?" as it was.
        if not control:
            self._previous = [token]
        return both[len(before):]
