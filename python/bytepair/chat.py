"""Chat conversations to token ids, with the mask a training run puts on the loss.

A conversation is a list of messages (``{"role": ..., "content": ...}``), or a dict holding one
under ``"messages"`` (nanochat's and the JSONL datasets' shape). A *template* says which
special tokens frame each message; :func:`render_conversation` gives the ids and, for each id,
``1`` if the model is trained to predict it and ``0`` if it is context.

Two templates, each matching its home system token for token:

``nanochat``
    nanochat's ``render_conversation``: ``<|bos|>``, then user and assistant turns strictly
    alternating, each framed by ``<|user_start|>``/``<|user_end|>`` or
    ``<|assistant_start|>``/``<|assistant_end|>``. A leading system message is folded into the
    first user message (``system + "\\n\\n" + user``). An assistant's content is a string or a
    list of parts: ``text``, ``python`` (a tool call, framed by ``<|python_start|>``/
    ``<|python_end|>``) and ``python_output`` (the tool's answer, framed by
    ``<|output_start|>``/``<|output_end|>``, which the model does not produce and is not trained
    on). Trained: the assistant's text and tool calls and ``<|assistant_end|>``.
``llama3``
    Meta's Llama 3 chat format as llama-models' ``ChatFormat`` encodes it:
    ``<|begin_of_text|>``, then per message ``<|start_header_id|>role<|end_header_id|>\\n\\n``,
    the content and ``<|eot_id|>`` (a ``tool`` message is written with the role ``ipython``).
    Trained: each assistant message's content and its ``<|eot_id|>``.

Every piece of text is encoded on its own with ``encode_ordinary``, as both home systems do: a
message can never inject a special token by spelling one, and a template's frame never merges
with the text beside it.

:func:`render_for_completion` renders a conversation up to the point where the model is to
answer (the prompt for generation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bytepair.errors import ChatError  # defined with the others; importable from here as before

__all__ = [
    "ChatError", "NANOCHAT_SPECIAL_TOKENS", "TEMPLATES", "render_conversation",
    "render_for_completion", "template_for",
]

#: The special tokens nanochat trains its tokenizers with, in nanochat's order: pass them as
#: ``bytepair.train(..., special_tokens=NANOCHAT_SPECIAL_TOKENS)`` to get a tokenizer the
#: ``nanochat`` template can render with.
NANOCHAT_SPECIAL_TOKENS = [
    "<|bos|>",
    "<|user_start|>", "<|user_end|>",
    "<|assistant_start|>", "<|assistant_end|>",
    "<|python_start|>", "<|python_end|>",
    "<|output_start|>", "<|output_end|>",
]

_LLAMA3_SPECIAL_TOKENS = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]

#: Template names to the special tokens each needs in the encoding.
TEMPLATES: dict[str, list[str]] = {
    "nanochat": NANOCHAT_SPECIAL_TOKENS,
    "llama3": _LLAMA3_SPECIAL_TOKENS,
}


def template_for(encoding: Any) -> str:
    """The template whose special tokens ``encoding`` has (``nanochat`` first)."""
    specials = encoding.special_tokens_set
    for name, needed in TEMPLATES.items():
        if specials.issuperset(needed):
            return name
    raise ChatError(
        f"encoding {encoding.name!r} has the special tokens of no chat template; "
        + "; ".join(f"{name} needs {', '.join(needed)}" for name, needed in TEMPLATES.items()))


def render_conversation(
    encoding: Any,
    conversation: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    *,
    template: str | None = None,
    max_tokens: int | None = None,
) -> tuple[list[int], list[int]]:
    """The ids of ``conversation`` and its training mask (1 = trained on), of equal length.

    ``template`` defaults to the one whose special tokens ``encoding`` has. ``max_tokens``
    truncates both lists (nanochat passes 2048).

    >>> import bytepair
    >>> enc = bytepair.get_encoding("llama3")  # doctest: +SKIP
    >>> ids, mask = render_conversation(enc, [{"role": "user", "content": "Hi"},
    ...                                       {"role": "assistant", "content": "Hello!"}])  # doctest: +SKIP
    """
    out = _Render(encoding, template)
    out.conversation(_messages(conversation))
    if max_tokens is not None:
        if max_tokens < 0:
            raise ChatError(f"max_tokens must be >= 0, got {max_tokens}")
        del out.ids[max_tokens:], out.mask[max_tokens:]
    return out.ids, out.mask


def render_for_completion(
    encoding: Any,
    conversation: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    *,
    template: str | None = None,
) -> list[int]:
    """The ids that prompt the model for the assistant's next message.

    With nanochat, the conversation must end with an assistant message, which is dropped (as
    nanochat's ``render_for_completion`` does); with llama3 every message is kept and the
    assistant's header follows (as llama-models' ``encode_dialog_prompt`` does).
    """
    out = _Render(encoding, template)
    messages = _messages(conversation)
    if out.template == "nanochat":
        if not messages or messages[-1].get("role") != "assistant":
            raise ChatError("render_for_completion (nanochat) needs a conversation that ends "
                            "with an assistant message, which it replaces by the prompt")
        out.conversation(messages[:-1])
        out.special("<|assistant_start|>", 0)
    else:
        out.conversation(messages)
        out.header("assistant")
    return out.ids


def _messages(conversation) -> list[Mapping[str, Any]]:
    if isinstance(conversation, Mapping):
        if "messages" not in conversation:
            raise ChatError("a conversation given as a dict needs a 'messages' list")
        conversation = conversation["messages"]
    if isinstance(conversation, (str, bytes)) or not isinstance(conversation, Sequence):
        raise ChatError(f"a conversation is a list of messages, not {type(conversation).__name__}")
    for i, message in enumerate(conversation):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ChatError(f"message {i}: expected a dict with 'role' and 'content', got {message!r:.80}")
    return list(conversation)


class _Render:
    """Accumulates ids and mask; one method per kind of thing a template writes."""

    def __init__(self, encoding, template: str | None):
        self.enc = encoding
        self.template = template_for(encoding) if template is None else template
        if self.template not in TEMPLATES:
            raise ChatError(f"unknown chat template {self.template!r}; known: {', '.join(TEMPLATES)}")
        missing = [t for t in TEMPLATES[self.template] if t not in encoding.special_tokens_set]
        if missing:
            raise ChatError(f"encoding {encoding.name!r} lacks the {self.template} template's "
                            f"special tokens {', '.join(missing)}")
        self.ids: list[int] = []
        self.mask: list[int] = []

    def special(self, token: str, train: int) -> None:
        self.ids.append(self.enc.encode_single_token(token))
        self.mask.append(train)

    def text(self, text: str, train: int, where: str) -> None:
        if not isinstance(text, str):
            raise ChatError(f"{where}: content must be a string, got {type(text).__name__}")
        ids = self.enc.encode_ordinary(text)
        self.ids += ids
        self.mask += [train] * len(ids)

    def conversation(self, messages) -> None:
        if self.template == "nanochat":
            self.nanochat(messages)
        else:
            self.llama3(messages)

    # nanochat ------------------------------------------------------------------------------

    def nanochat(self, messages) -> None:
        if messages and messages[0]["role"] == "system":
            if len(messages) < 2 or messages[1]["role"] != "user":
                raise ChatError("message 0: a system message must be followed by a user message")
            system, user = messages[0]["content"], messages[1]["content"]
            for i, c in ((0, system), (1, user)):
                if not isinstance(c, str):
                    raise ChatError(f"message {i}: content must be a string, got {type(c).__name__}")
            messages = [{"role": "user", "content": system + "\n\n" + user}, *messages[2:]]
            first = 1  # index of messages[0] in what the caller gave, for error messages
        else:
            first = 0
        if not messages:
            raise ChatError("the conversation has no messages")
        self.special("<|bos|>", 0)
        for i, message in enumerate(messages):
            where = f"message {i + first}"
            role, content = message["role"], message["content"]
            expected = "user" if i % 2 == 0 else "assistant"
            if role != expected:
                raise ChatError(f"{where}: expected role {expected!r} (nanochat alternates user "
                                f"and assistant, user first), got {role!r}")
            if role == "user":
                self.special("<|user_start|>", 0)
                self.text(content, 0, where)
                self.special("<|user_end|>", 0)
                continue
            self.special("<|assistant_start|>", 0)
            if isinstance(content, str):
                self.text(content, 1, where)
            elif isinstance(content, Sequence):
                for j, part in enumerate(content):
                    self.nanochat_part(part, f"{where}, part {j}")
            else:
                raise ChatError(f"{where}: content must be a string or a list of parts, "
                                f"got {type(content).__name__}")
            self.special("<|assistant_end|>", 1)

    def nanochat_part(self, part, where: str) -> None:
        if not isinstance(part, Mapping) or "type" not in part or "text" not in part:
            raise ChatError(f"{where}: expected a dict with 'type' and 'text', got {part!r:.80}")
        kind = part["type"]
        if kind == "text":
            self.text(part["text"], 1, where)
        elif kind == "python":
            self.special("<|python_start|>", 1)
            self.text(part["text"], 1, where)
            self.special("<|python_end|>", 1)
        elif kind == "python_output":
            self.special("<|output_start|>", 0)
            self.text(part["text"], 0, where)
            self.special("<|output_end|>", 0)
        else:
            raise ChatError(f"{where}: unknown part type {kind!r}; known: text, python, python_output")

    # llama3 --------------------------------------------------------------------------------

    def llama3(self, messages) -> None:
        self.special("<|begin_of_text|>", 0)
        for i, message in enumerate(messages):
            role = message["role"]
            if role not in ("system", "user", "assistant", "tool", "ipython"):
                raise ChatError(f"message {i}: unknown role {role!r}; known: system, user, "
                                "assistant, tool (written as ipython)")
            train = 1 if role == "assistant" else 0
            self.header(role)
            content = message["content"]
            if isinstance(content, str):
                self.text(content, train, f"message {i}")
            elif isinstance(content, Sequence):
                # llama-models accepts a list of text items, encoded one after the other.
                for j, item in enumerate(content):
                    text = item.get("text") if isinstance(item, Mapping) else item
                    self.text(text, train, f"message {i}, part {j}")
            else:
                raise ChatError(f"message {i}: content must be a string or a list of text "
                                f"parts, got {type(content).__name__}")
            self.special("<|eot_id|>", train)

    def header(self, role: str) -> None:
        self.special("<|start_header_id|>", 0)
        self.text("ipython" if role == "tool" else role, 0, "header")
        self.special("<|end_header_id|>", 0)
        self.text("\n\n", 0, "header")
