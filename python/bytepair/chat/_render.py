"""The accumulator every built-in template writes into, the one call that encodes what it
holds, and the checks on a conversation's shape.

A template renders by calling :meth:`Render.special` for each frame token and :meth:`Render.text`
for each piece of text. Nothing is encoded then: the Render keeps the conversation as *parts*
(special-token ids and texts) with their *trains* (0, 1, or a text's trained character spans),
and :func:`encode_parts` hands the parts of many conversations to the core in one call
(``bytepair_core::chat``), which encodes each text on its own with ``encode_ordinary``, as every
home renderer here does (harmony, llama-models, mistral-common, nanochat): content that spells a
special token stays text, and a frame token never merges with the text beside it. One call for
a batch, on threads with the GIL released, instead of one ``encode_ordinary`` and one mask list
per text: those Python steps were most of a conversation's cost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    """A conversation as parts (special-token ids and texts) and, for each, its train: 0, 1, or
    for a text the character spans (sorted, not overlapping) whose tokens are trained.

    Spans are for templates that write a header and the content into one text (ChatML's
    ``assistant\\n`` + content; every Jinja template), where the two can merge into one token:
    such a token is trained if it holds any trained character, as transformers marks a token
    whose offsets overlap a ``{% generation %}`` span. A span that splits a text needs the
    tokens' offsets, which only a byte-level model has (see :func:`encode_parts`)."""

    __slots__ = ("enc", "parts", "trains", "_specials", "_const")

    def __init__(self, encoding: Any, template: Template):
        # The private dict, not ``special_tokens_set`` or the ``special_tokens`` property: those
        # copy (o200k_harmony has over a thousand) on every call, and this runs per conversation.
        self._specials = encoding._special_tokens
        missing = [t for t in template.special_tokens if t not in self._specials]
        if missing:
            raise ChatError(f"encoding {encoding.name!r} lacks the {template.name} template's "
                            f"special tokens {', '.join(missing)}")
        self.enc = encoding
        self.parts: list[int | str] = []
        self.trains: list[Any] = []
        self._const = encoding.__dict__.setdefault("_chat_const_ids", {})

    def special(self, token: str, train: int) -> None:
        self.parts.append(self._specials[token])
        self.trains.append(train)

    def text(self, text: Any, train: int, where: str) -> None:
        if not isinstance(text, str):
            raise ChatError(f"{where}: content must be a string, got {type(text).__name__}")
        if text:
            self.parts.append(text)
            self.trains.append(train)

    def special_id(self, token: str) -> int:
        return self._specials[token]

    def const_ids(self, text: str) -> list[int]:
        """The ids of a text the template itself writes (a frame's newline), encoded once per
        encoding."""
        ids = self._const.get(text)
        if ids is None:
            ids = self._const[text] = self.enc.encode_ordinary(text)
        return ids

    def const(self, text: str, train: int) -> None:
        """:meth:`const_ids` as parts of their own, which the core copies rather than encodes."""
        ids = self.const_ids(text)
        self.parts += ids
        self.trains += [train] * len(ids)

    def ids_and_mask(self) -> tuple[list[int], list[int]]:
        return encode_parts(self.enc, [(self.parts, self.trains)])[0]


def encode_parts(encoding: Any, rendered: list[tuple[list, list]], num_threads: int = 1, *,
                 first: int | None = None) -> list[tuple[list[int], list[int]]]:
    """The ``(ids, mask)`` of each rendered conversation (``(parts, trains)`` as a
    :class:`Render` holds them), encoded on up to ``num_threads`` threads.

    A conversation whose spans split a text of a model whose tokens are not the text's bytes
    raises a :class:`ChatError`, which names it (``conversation i: ...``, counting from
    ``first``) when ``first`` is given."""
    return checked(encoding, encoding._core_bpe.encode_chat(rendered, num_threads), first)


def checked(encoding: Any, answer: tuple, first: int | None, jinja2: Callable[[int], tuple] | None = None) -> list:
    """The results of ``encode_chat`` (or a job's), or the :class:`ChatError` of the first
    conversation that failed. ``answer`` is ``(results, failed, handed_back)``: the
    conversations in ``handed_back`` (all before ``failed``; only a Jinja template's, rendered
    in the core) are jinja2's to render, which ``jinja2(index)`` does, giving their
    ``(ids, mask)``; in order, so an error among them is raised before a later one."""
    results, failed, handed_back = answer
    for index, _why in handed_back:
        try:
            results[index] = jinja2(index)  # type: ignore[misc]  # (handed back only with it)
        except ChatError as e:
            raise ChatError(str(e) if first is None else f"conversation {first + index}: {e}") from None
    if failed is not None:
        index, why = failed
        # One of the core's own refusals, or a Jinja template's ChatError message as it is.
        message = REFUSED[why].format(name=encoding.name) if why in REFUSED else why
        raise ChatError(message if first is None else f"conversation {first + index}: {message}")
    return results


#: Why ``encode_chat`` refused a conversation's mask.
REFUSED = {
    # A SentencePiece-style model's tokens carry a dummy-prefix U+2581 the text lacks: the
    # token offsets are not the text's, and a mask from them would be a guess.
    "not byte-level": ("encoding {name!r}: its tokens' bytes are not the text's (a SentencePiece-style "
                       "model), so a mask that splits a text run cannot be placed; chatml and Jinja "
                       "masks need a byte-level BPE encoding"),
    # Repairing a split surrogate pair (two characters) gives one character, which would move
    # every span after it.
    "surrogates": "a text whose mask splits it holds lone surrogates (not UTF-8); its character "
                  "offsets cannot be placed",
}


def messages_of(conversation: Any) -> list[Mapping[str, Any]]:
    """The list of messages in ``conversation`` (a list, or a dict holding one under
    ``"messages"``), each checked to be a dict with a ``role``."""
    # `type(x) is list/dict` first: an isinstance against an ABC costs a few hundred ns, and
    # this runs for every message of a dataset.
    if type(conversation) is not list and isinstance(conversation, Mapping):
        if "messages" not in conversation:
            raise ChatError("a conversation given as a dict needs a 'messages' list")
        conversation = conversation["messages"]
    if type(conversation) is not list and (isinstance(conversation, (str, bytes))
                                           or not isinstance(conversation, Sequence)):
        raise ChatError(f"a conversation is a list of messages, not {type(conversation).__name__}")
    for i, message in enumerate(conversation):
        if not (type(message) is dict or isinstance(message, Mapping)) or "role" not in message:
            raise ChatError(f"message {i}: expected a dict with 'role' and 'content', got {message!r:.80}")
    return list(conversation)


def role_of(message: Mapping[str, Any]) -> str:
    """The role as a plain string: openai-harmony's ``Message.to_dict()`` gives a ``Role`` enum
    (a ``str`` subclass whose ``format`` is ``Role.USER``, not ``user``)."""
    role = message["role"]
    if type(role) is str:  # the common case; getattr's miss raises and catches an AttributeError
        return role
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
