"""Chat conversations to token ids, with the mask a training run puts on the loss.

A conversation is a list of messages (``{"role": ..., "content": ...}``), or a dict holding one
under ``"messages"`` (nanochat's and the JSONL datasets' shape). A *template* says how each
message is framed; :func:`render_conversation` gives the ids and, for each id, ``1`` if the
model is trained to predict it and ``0`` if it is context. :func:`render_for_completion` gives
the prompt for the model's next message, and :func:`stop_tokens` the ids that end its turn.

Built-in templates, one module each, each matching its home renderer token for token:

- ``nanochat`` (:mod:`bytepair.chat.nanochat`): nanochat's ``render_conversation``;
- ``llama3`` (:mod:`bytepair.chat.llama3`): llama-models' ``ChatFormat``;
- ``harmony`` (:mod:`bytepair.chat.harmony`): openai-harmony (gpt-oss, ``o200k_harmony``);
- ``chatml`` (:mod:`bytepair.chat.chatml`): ``<|im_start|>``/``<|im_end|>`` (Qwen, cl100k_im);
- ``mistral_v1``, ``mistral_v2``, ``mistral_v3`` (:mod:`bytepair.chat.mistral`): mistral-common.

And any Jinja chat template (:mod:`bytepair.chat.jinja`: :class:`ChatTemplate`,
:func:`load_chat_template`), equal to transformers' ``apply_chat_template``.

No template lets a message inject a special token by spelling one: the per-piece built-ins
encode content with ``encode_ordinary``; chatml and Jinja split the rendered text only at the
template's own special tokens. :func:`render_many` renders datasets, encoding on threads beside the rendering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bytepair.chat import chatml, harmony, llama3, mistral, nanochat
from bytepair.chat._render import Render, Template, encode_parts, messages_of
from bytepair.chat.jinja import ChatTemplate, load_chat_template
from bytepair.chat.nanochat import NANOCHAT_SPECIAL_TOKENS
from bytepair.chat.batch import render_many
from bytepair.errors import ChatError  # defined with the others; importable from here as before

__all__ = [
    "ChatError", "ChatTemplate", "NANOCHAT_SPECIAL_TOKENS", "TEMPLATES", "load_chat_template",
    "render_conversation", "render_for_completion", "render_many", "stop_tokens", "template_for",
]

#: The built-in templates by name, in the order :func:`template_for` tries them.
_BUILTIN: dict[str, Template] = {t.name: t for t in (
    nanochat.TEMPLATE, llama3.TEMPLATE, harmony.TEMPLATE, chatml.TEMPLATE, *mistral.TEMPLATES,
)}

#: Template names to the special tokens each needs in the encoding.
TEMPLATES: dict[str, list[str]] = {name: list(t.special_tokens) for name, t in _BUILTIN.items()}


def template_for(encoding: Any) -> str:
    """The name of the built-in template whose special tokens ``encoding`` has (``nanochat``
    first)."""
    specials = encoding.special_tokens_set
    for name, t in _BUILTIN.items():
        if (t.fits(encoding) if t.fits else specials.issuperset(t.special_tokens)):
            return name
    hints = {"o200k_base": " (gpt-oss's harmony format is o200k_harmony: o200k_base's ranks with "
                           "its special tokens)",
             "cl100k_base": " (template='chatml' with chatml.with_chatml_tokens(encoding), or "
                            "`bytepair chat -e cl100k_base -t chatml`, adds tiktoken's ChatML ids)"}
    raise ChatError(
        f"encoding {encoding.name!r} has the special tokens of no chat template{hints.get(encoding.name, '')}; "
        + "; ".join(f"{name} needs {', '.join(t.special_tokens)}" for name, t in _BUILTIN.items()
                    if t.fits is None)
        + "; mistral_v1/v2/v3 and Jinja templates are named with template=")


def _template(encoding: Any, template: Any) -> Template | ChatTemplate:
    """A built-in template by name, or a Jinja one (a :class:`ChatTemplate`, or its source:
    a string with ``{{`` or ``{%`` in it)."""
    if template is None:
        return _BUILTIN[template_for(encoding)]
    if isinstance(template, (Template, ChatTemplate)):
        return template
    if isinstance(template, str) and ("{{" in template or "{%" in template):
        return ChatTemplate(template)
    if not isinstance(template, str) or template not in _BUILTIN:
        raise ChatError(f"unknown chat template {template!r:.80}; known: {', '.join(_BUILTIN)}, "
                        "or the text of a Jinja template")
    return _BUILTIN[template]


def _with_tools(conversation: Any, options: dict) -> dict:
    """A conversation given as ``{"messages": [...], "tools": [...]}`` (the shape of SFT datasets)
    passes its tools to the template, unless the caller gave ``tools=`` itself."""
    # `type(...) is list` first: the isinstance against an ABC costs more than the rest here.
    if type(conversation) is not list and isinstance(conversation, Mapping) and conversation.get("tools") \
            and "tools" not in options:
        return {**options, "tools": conversation["tools"]}
    return options


def _parts(encoding: Any, t: Template | ChatTemplate, conversation: Any, options: dict) -> tuple[list, list]:
    """``conversation`` rendered by ``t`` as ``(parts, trains)`` for :func:`encode_parts`."""
    options = _with_tools(conversation, options)
    if isinstance(t, ChatTemplate):
        return t.parts(encoding, messages_of(conversation), **options)
    out = Render(encoding, t)
    t.render(out, messages_of(conversation), options)
    return out.parts, out.trains


def _preparer(encoding: Any, t: Template | ChatTemplate, options: dict) -> tuple[Callable[[Any], Any], Any]:
    """What :func:`render_many` hands the core for each conversation, as a function of the
    conversation: its ``(parts, trains)``, or for a Jinja template the conversation converted
    for the core to render (on its threads, without the GIL; see :meth:`ChatTemplate.prepare`,
    whose per-call lookups :meth:`ChatTemplate.preparer` makes once). Also the core's preparer
    of the batch (``_core.JinjaPreparer``) if there is one: the core then converts the plain
    conversations itself and calls the function only for the others."""
    if not isinstance(t, ChatTemplate):
        return (lambda conversation: _parts(encoding, t, conversation, options)), None
    try:
        batch = t.preparer(encoding, **options)
    except Exception:
        # Raised again by the first conversation's `prepare`, after that conversation's own
        # errors, and named for it, as a serial loop would.
        batch = None

    def prepared(conversation: Any) -> Any:
        messages = messages_of(conversation)
        own = _with_tools(conversation, options)
        if own is not options or batch is None:  # its own tools, or the batch preparer failed (above)
            return t.prepare(encoding, messages, **own)
        return batch(messages)

    core = batch.core if batch is not None else None
    return prepared, (None if type(core) is str else core)


def render_conversation(
    encoding: Any,
    conversation: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    *,
    template: str | None = None,
    max_tokens: int | None = None,
    **options: Any,
) -> tuple[list[int], list[int]]:
    """The ids of ``conversation`` and its training mask (1 = trained on), of equal length.

    ``template`` defaults to the one whose special tokens ``encoding`` has. ``max_tokens``
    truncates both lists (nanochat passes 2048). Other keyword arguments are the template's
    options (harmony: ``auto_drop_analysis``; mistral: ``tools``; Jinja: ``tools``,
    ``documents``, any template variable); a conversation given as a dict passes its
    ``"tools"``.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("llama3")  # doctest: +SKIP
    >>> ids, mask = render_conversation(enc, [{"role": "user", "content": "Hi"},
    ...                                       {"role": "assistant", "content": "Hello!"}])  # doctest: +SKIP
    """
    if max_tokens is not None and max_tokens < 0:
        raise ChatError(f"max_tokens must be >= 0, got {max_tokens}")
    ids, mask = encode_parts(encoding, [_parts(encoding, _template(encoding, template), conversation, options)])[0]
    if max_tokens is not None:
        del ids[max_tokens:], mask[max_tokens:]
    return ids, mask


def render_for_completion(
    encoding: Any,
    conversation: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    *,
    template: str | None = None,
    **options: Any,
) -> list[int]:
    """The ids that prompt the model for the assistant's next message.

    nanochat: the conversation must end with an assistant message, which is dropped (as
    nanochat's ``render_for_completion`` does). llama3: every message, then the assistant's
    header (llama-models' ``encode_dialog_prompt``). harmony: openai-harmony's
    ``render_conversation_for_completion`` with the next role ``assistant``.
    """
    t = _template(encoding, template)
    options = _with_tools(conversation, options)
    if isinstance(t, ChatTemplate):
        return t.encode(encoding, messages_of(conversation), add_generation_prompt=True, mask=False,
                        **options)[0]
    out = Render(encoding, t)
    t.complete(out, messages_of(conversation), options)
    return out.ids_and_mask()[0]


def stop_tokens(encoding: Any, *, template: str | None = None) -> list[int]:
    """The ids at which a model's turn ends under ``template``: a generation loop (or
    :class:`bytepair.stream.StreamDecoder`'s caller) stops at any of them."""
    t = _template(encoding, template)
    if isinstance(t, ChatTemplate):
        return [encoding.encode_single_token(s) for s in t.end_of_turn(encoding)]
    Render(encoding, t)  # checks the encoding has the template's special tokens
    return [encoding.encode_single_token(s) for s in t.stop_tokens]
