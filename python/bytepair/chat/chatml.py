"""ChatML: ``<|im_start|>role\\ncontent<|im_end|>\\n`` per message, for tokenizers that have
``<|im_start|>``/``<|im_end|>`` (Qwen's, cl100k with them added, most fine-tunes).

The home renderer is the Jinja template transformers documents for ChatML, tokenized as
transformers does: the rendered string is split at the special tokens and each text between
them is encoded as one piece, so ``role\\n`` and the content's first characters can merge
(``assistant\\n`` + ``\\nx`` gives the one token ``\\n\\n``). The split here is at the frame's
own tokens only: content that spells ``<|im_end|>`` stays text.

Trained (mask 1): each assistant message's content and its ``<|im_end|>``; a token that holds
both the header's ``\\n`` and the content's first characters is trained (as transformers marks
a token overlapping a ``{% generation %}`` span).
"""

from __future__ import annotations

from typing import Any

from bytepair.chat._render import REFUSED, Render, Template, content_of, role_of, text_parts
from bytepair.errors import ChatError

SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>")

#: tiktoken's README extends cl100k_base with these two ids for ChatML ("cl100k_im").
CL100K_IM_SPECIAL_TOKENS = {"<|im_start|>": 100264, "<|im_end|>": 100265}


def plain(messages: list, options: dict) -> list[dict]:
    """The messages as ``{"role": str, "content": str}`` (a role enum as its value, content
    parts joined): what the frame writes (``_core.ChatMLFrame``, which reads plain
    conversations straight from the caller's dicts and asks this for the others)."""
    if options:
        raise ChatError(f"the chatml template takes no options, got {', '.join(sorted(options))}")
    out = []
    for i, message in enumerate(messages):
        role = role_of(message)
        content = message["content"] if "content" in message else content_of(message, f"message {i}")
        if type(content) is not str:
            content = "".join(text_parts(content, f"message {i}"))
        out.append({"role": f"{role}", "content": content})
    return out


def frame(encoding: Any) -> Any:
    """The encoding's ChatML frame (``<|im_start|>``, ``<|im_end|>``, the ids of ``"\n"``),
    built once per encoding; a :class:`ChatError` if it lacks the tokens."""
    found = encoding.__dict__.get("_chatml_frame")
    if found is None:
        from bytepair import _core

        out = Render(encoding, TEMPLATE)  # checks the encoding has the tokens
        found = encoding.__dict__["_chatml_frame"] = _core.ChatMLFrame(
            out.special_id("<|im_start|>"), out.special_id("<|im_end|>"), out.const_ids("\n"))
    return found


def render(out: Render, messages: list, options: dict) -> None:
    # Each message is <|im_start|>, "role\n" + content as one text (an assistant's content its
    # trained span), <|im_end|> (trained for an assistant), then the newline's ids: written by
    # the core's frame (bytepair_core::chat::chatml), which render_many uses on whole datasets.
    framed = frame(out.enc).parts(plain(messages, options))
    if framed is None:
        raise ChatError(REFUSED["surrogates"])
    out.parts += framed[0]
    out.trains += framed[1]


def complete(out: Render, messages: list, options: dict) -> None:
    """Every message, then ``<|im_start|>assistant\\n`` (``add_generation_prompt``)."""
    render(out, messages, options)
    out.special("<|im_start|>", 0)
    out.text("assistant\n", 0, "generation prompt")


def with_chatml_tokens(encoding: Any) -> Any:
    """``cl100k_base`` with ``<|im_start|>`` = 100264 and ``<|im_end|>`` = 100265, as tiktoken's
    README extends it; other encodings have no published ChatML ids, so they raise."""
    from bytepair import Encoding

    if encoding.name != "cl100k_base":
        raise ChatError(f"no published ChatML token ids for {encoding.name!r} (only cl100k_base's, "
                        "from tiktoken's README); build an Encoding with <|im_start|> and <|im_end|> "
                        "in its special_tokens")
    return Encoding("cl100k_im", pat_str=encoding._pat_str, mergeable_ranks=encoding._mergeable_ranks,
                    special_tokens={**encoding._special_tokens, **CL100K_IM_SPECIAL_TOKENS})


TEMPLATE = Template("chatml", SPECIAL_TOKENS, ("<|im_end|>",), render, complete)
