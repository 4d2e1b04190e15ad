"""nanochat's chat format, as nanochat's ``render_conversation`` writes it.

``<|bos|>``, then user and assistant turns strictly alternating, framed by
``<|user_start|>``/``<|user_end|>`` and ``<|assistant_start|>``/``<|assistant_end|>``. A leading
system message is folded into the first user message (``system + "\\n\\n" + user``). An
assistant's content is a string or a list of parts: ``text``, ``python`` (a tool call, framed by
``<|python_start|>``/``<|python_end|>``) and ``python_output`` (the tool's answer, framed by
``<|output_start|>``/``<|output_end|>``, which the model does not produce and is not trained
on). Trained: the assistant's text and tool calls and ``<|assistant_end|>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bytepair.chat._render import Render, Template, content_of, role_of
from bytepair.errors import ChatError

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


def render(out: Render, messages: list, options: dict) -> None:
    if options:
        raise ChatError(f"the nanochat template takes no options, got {', '.join(sorted(options))}")
    if messages and role_of(messages[0]) == "system":
        if len(messages) < 2 or role_of(messages[1]) != "user":
            raise ChatError("message 0: a system message must be followed by a user message")
        system, user = content_of(messages[0], "message 0"), content_of(messages[1], "message 1")
        for i, c in ((0, system), (1, user)):
            if not isinstance(c, str):
                raise ChatError(f"message {i}: content must be a string, got {type(c).__name__}")
        messages = [{"role": "user", "content": system + "\n\n" + user}, *messages[2:]]
        first = 1  # index of messages[0] in what the caller gave, for error messages
    else:
        first = 0
    if not messages:
        raise ChatError("the conversation has no messages")
    out.special("<|bos|>", 0)
    for i, message in enumerate(messages):
        where = f"message {i + first}"
        role, content = role_of(message), content_of(message, where)
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            raise ChatError(f"{where}: expected role {expected!r} (nanochat alternates user "
                            f"and assistant, user first), got {role!r}")
        if role == "user":
            out.special("<|user_start|>", 0)
            out.text(content, 0, where)
            out.special("<|user_end|>", 0)
            continue
        out.special("<|assistant_start|>", 0)
        if isinstance(content, str):
            out.text(content, 1, where)
        elif isinstance(content, Sequence):
            for j, part in enumerate(content):
                _part(out, part, f"{where}, part {j}")
        else:
            raise ChatError(f"{where}: content must be a string or a list of parts, "
                            f"got {type(content).__name__}")
        out.special("<|assistant_end|>", 1)


def _part(out: Render, part, where: str) -> None:
    if not isinstance(part, Mapping) or "type" not in part or "text" not in part:
        raise ChatError(f"{where}: expected a dict with 'type' and 'text', got {part!r:.80}")
    kind = part["type"]
    if kind == "text":
        out.text(part["text"], 1, where)
    elif kind == "python":
        out.special("<|python_start|>", 1)
        out.text(part["text"], 1, where)
        out.special("<|python_end|>", 1)
    elif kind == "python_output":
        out.special("<|output_start|>", 0)
        out.text(part["text"], 0, where)
        out.special("<|output_end|>", 0)
    else:
        raise ChatError(f"{where}: unknown part type {kind!r}; known: text, python, python_output")


def complete(out: Render, messages: list, options: dict) -> None:
    """nanochat's ``render_for_completion``: the conversation must end with an assistant
    message, which is dropped and replaced by ``<|assistant_start|>``."""
    if not messages or role_of(messages[-1]) != "assistant":
        raise ChatError("render_for_completion (nanochat) needs a conversation that ends "
                        "with an assistant message, which it replaces by the prompt")
    render(out, messages[:-1], options)
    out.special("<|assistant_start|>", 0)


TEMPLATE = Template("nanochat", tuple(NANOCHAT_SPECIAL_TOKENS), ("<|assistant_end|>",), render, complete)
