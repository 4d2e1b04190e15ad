"""The accumulator every built-in template writes into, and the checks on a conversation's shape.

A template renders by calling :meth:`Render.special` for each frame token and :meth:`Render.text`
for each piece of text. Text is encoded on its own with ``encode_ordinary``, as every home
renderer here does (harmony, llama-models, mistral-common, nanochat): content that spells a
special token stays text, and a frame token never merges with the text beside it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from bytepair.errors import ChatError


@dataclass(frozen=True)
class Template:
    """A built-in chat format: the special tokens it needs, the tokens that end a model's turn,
    and how to render a conversation for training (ids and mask) and for completion (prompt)."""

    name: str
    special_tokens: tuple[str, ...]
    stop_tokens: tuple[str, ...]
    render: Callable[[Render, list, dict], None]
    complete: Callable[[Render, list, dict], None]
    #: ``(encoding) -> bool``: whether this template is the encoding's own, when none is named.
    #: Defaults to "the encoding has every special token the template needs".
    fits: Callable[[Any], bool] | None = None


class Render:
    """Accumulates ids and mask (1 = a model is trained to predict the id)."""

    __slots__ = ("enc", "ids", "mask", "_specials", "_encode")

    def __init__(self, encoding: Any, template: Template):
        missing = [t for t in template.special_tokens if t not in encoding.special_tokens_set]
        if missing:
            raise ChatError(f"encoding {encoding.name!r} lacks the {template.name} template's "
                            f"special tokens {', '.join(missing)}")
        self.enc = encoding
        # The private dict, not the ``special_tokens`` property: that one copies (o200k_harmony
        # has over a thousand) on every call.
        self._specials = encoding._special_tokens
        self._encode = encoding.encode_ordinary
        self.ids: list[int] = []
        self.mask: list[int] = []

    def special(self, token: str, train: int) -> None:
        self.ids.append(self._specials[token])
        self.mask.append(train)

    def text(self, text: Any, train: int, where: str) -> None:
        if not isinstance(text, str):
            raise ChatError(f"{where}: content must be a string, got {type(text).__name__}")
        if text:
            ids = self._encode(text)
            self.ids += ids
            self.mask += [train] * len(ids)


def messages_of(conversation: Any) -> list[Mapping[str, Any]]:
    """The list of messages in ``conversation`` (a list, or a dict holding one under
    ``"messages"``), each checked to be a dict with a ``role``."""
    if isinstance(conversation, Mapping):
        if "messages" not in conversation:
            raise ChatError("a conversation given as a dict needs a 'messages' list")
        conversation = conversation["messages"]
    if isinstance(conversation, (str, bytes)) or not isinstance(conversation, Sequence):
        raise ChatError(f"a conversation is a list of messages, not {type(conversation).__name__}")
    for i, message in enumerate(conversation):
        if not isinstance(message, Mapping) or "role" not in message:
            raise ChatError(f"message {i}: expected a dict with 'role' and 'content', got {message!r:.80}")
    return list(conversation)


def role_of(message: Mapping[str, Any]) -> str:
    """The role as a plain string: openai-harmony's ``Message.to_dict()`` gives a ``Role`` enum
    (a ``str`` subclass whose ``format`` is ``Role.USER``, not ``user``)."""
    role = message["role"]
    role = getattr(role, "value", role)
    if not isinstance(role, str):
        raise ChatError(f"role must be a string, got {type(role).__name__}")
    return role


def content_of(message: Mapping[str, Any], where: str) -> Any:
    if "content" not in message:
        raise ChatError(f"{where}: expected a dict with 'role' and 'content', got {dict(message)!r:.80}")
    return message["content"]


def text_parts(content: Any, where: str) -> list[str]:
    """A content given as a string or a list of text parts (``{"type": "text", "text": ...}``,
    or bare strings), as the list of its texts."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        out = []
        for j, part in enumerate(content):
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                out.append(part["text"])
            else:
                raise ChatError(f"{where}, part {j}: expected a text part "
                                f"({{'type': 'text', 'text': ...}}), got {part!r:.80}")
        return out
    raise ChatError(f"{where}: content must be a string or a list of text parts, "
                    f"got {type(content).__name__}")


def run_ids(encoding: Any, text: str, spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """``text`` encoded as one piece, and its mask: 1 for each token that overlaps one of the
    character ``spans`` (sorted, non-overlapping), as transformers marks a token whose offsets
    overlap a ``{% generation %}`` span.

    Templates that write a header and the content into one string (ChatML's
    ``assistant\\n`` + content; every Jinja template) let the two merge into one token: such a
    token is trained if it holds any trained character."""
    ids = encoding.encode_ordinary(text)
    if not spans:
        return ids, [0] * len(ids)
    if spans == [(0, len(text))]:
        return ids, [1] * len(ids)
    # Work in bytes: a rank model's tokens are exact byte strings of the text.
    byte_spans = [(len(text[:s].encode("utf-8")), len(text[:e].encode("utf-8"))) for s, e in spans]
    pieces = encoding.decode_tokens_bytes(ids)
    ends = list(accumulate(map(len, pieces)))  # ends[k]: the byte where token k ends
    if (ends[-1] if ends else 0) != len(text.encode("utf-8")):
        # A SentencePiece-style model's tokens carry a dummy-prefix U+2581 the text lacks: the
        # token offsets are not the text's, and a mask from them would be a guess.
        raise ChatError(f"encoding {encoding.name!r}: its tokens' bytes are not the text's "
                        "(a SentencePiece-style model), so a mask that splits a text run cannot be "
                        "placed; chatml and Jinja masks need a byte-level BPE encoding")
    mask = [0] * len(ids)
    for b_start, b_end in byte_spans:
        # Token k overlaps [b_start, b_end) when it ends after b_start and starts before b_end.
        first = bisect_right(ends, b_start)
        last = min(bisect_left(ends, b_end), len(ids) - 1)
        if first <= last:
            mask[first:last + 1] = [1] * (last + 1 - first)
    return ids, mask
