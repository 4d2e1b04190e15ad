"""Meta's Llama 3 chat format, as llama-models' ``ChatFormat`` encodes it.

``<|begin_of_text|>``, then per message ``<|start_header_id|>role<|end_header_id|>\\n\\n``, the
content and ``<|eot_id|>`` (a ``tool`` message is written with the role ``ipython``). Trained:
each assistant message's content and its ``<|eot_id|>``. (Llama 3.x's Jinja template in
``tokenizer_config.json`` renders the same frame but encodes the whole string at once, so
``\\n\\n`` and a content starting with ``\\n`` can merge there: render that template with the
Jinja path to match transformers.)
"""

from __future__ import annotations

from bytepair.chat._render import Render, Template, content_of, role_of, text_parts
from bytepair.errors import ChatError

SPECIAL_TOKENS = ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")


def render(out: Render, messages: list, options: dict) -> None:
    if options:
        raise ChatError(f"the llama3 template takes no options, got {', '.join(sorted(options))}")
    out.special("<|begin_of_text|>", 0)
    for i, message in enumerate(messages):
        role = role_of(message)
        if role not in ("system", "user", "assistant", "tool", "ipython"):
            raise ChatError(f"message {i}: unknown role {role!r}; known: system, user, "
                            "assistant, tool (written as ipython)")
        train = 1 if role == "assistant" else 0
        header(out, role)
        # llama-models accepts a list of text items, encoded one after the other.
        for text in text_parts(content_of(message, f"message {i}"), f"message {i}"):
            out.text(text, train, f"message {i}")
        out.special("<|eot_id|>", train)


def header(out: Render, role: str) -> None:
    out.special("<|start_header_id|>", 0)
    out.const("ipython" if role == "tool" else role, 0)  # one of five roles: encoded once
    out.special("<|end_header_id|>", 0)
    out.const("\n\n", 0)


def complete(out: Render, messages: list, options: dict) -> None:
    """llama-models' ``encode_dialog_prompt``: every message, then the assistant's header."""
    render(out, messages, options)
    header(out, "assistant")


TEMPLATE = Template("llama3", SPECIAL_TOKENS, ("<|eot_id|>",), render, complete)
