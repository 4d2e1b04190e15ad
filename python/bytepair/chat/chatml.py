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

from bytepair.chat._render import Render, Template, content_of, role_of, text_parts
from bytepair.errors import ChatError

SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>")

#: tiktoken's README extends cl100k_base with these two ids for ChatML ("cl100k_im").
CL100K_IM_SPECIAL_TOKENS = {"<|im_start|>": 100264, "<|im_end|>": 100265}


def render(out: Render, messages: list, options: dict) -> None:
    if options:
        raise ChatError(f"the chatml template takes no options, got {', '.join(sorted(options))}")
    # The parts written here rather than through Render.special/const: this loop runs for every
    # message of a dataset, and the method calls were a third of its time. Each message is
    # <|im_start|>, "role\n" + content as one text (an assistant's content its trained span),
    # <|im_end|> (trained for an assistant), then the newline's ids.
    im_start, im_end = out.special_id("<|im_start|>"), out.special_id("<|im_end|>")
    newline = out.const_ids("\n")
    untrained = [0] * len(newline)
    parts, trains = out.parts, out.trains
    for i, message in enumerate(messages):
        role = role_of(message)
        content = message["content"] if "content" in message else content_of(message, f"message {i}")
        if type(content) is not str:
            content = "".join(text_parts(content, f"message {i}"))
        head = f"{role}\n"
        if role == "assistant":
            parts += (im_start, head + content, im_end, *newline)
            trains += (0, [(len(head), len(head) + len(content))] if content else 0, 1, *untrained)
        else:
            parts += (im_start, head + content, im_end, *newline)
            trains += (0, 0, 0, *untrained)


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
