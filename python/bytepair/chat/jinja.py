"""Any Jinja chat template (``tokenizer_config.json``'s ``chat_template``, ``chat_template.jinja``),
rendered as transformers' ``apply_chat_template(..., tokenize=True)`` renders it, but with masks
for every template and without letting message text inject special tokens.

Rendering: the Rust core's minijinja environment (``crates/core/src/chat/jinja.rs``), set up
as transformers sets up jinja2 (``trim_blocks``, ``lstrip_blocks``, ``break``/``continue``,
the globals ``raise_exception``, ``strftime_now`` and ``namespace``, its ``tojson`` filter, the
``{% generation %}`` tag), with the variables transformers passes: ``messages``, ``tools``,
``documents``, ``add_generation_prompt``, the tokenizer's ``bos_token``/``eos_token``/... and
any extra keyword. Messages are prepared as transformers prepares them (keys whose value is
``None`` dropped; ``reasoning_content``/``thinking`` filled from each other and ``reasoning``).
A render the Rust engine cannot write exactly as jinja2 would (a template printing a list or
dict, whose Python ``repr`` jinja2 writes; a value that is not a plain dict/list/tuple/str/
int/float/bool/None) is rendered with jinja2's ``ImmutableSandboxedEnvironment`` instead,
set up the same way (docs/chat.md, "Engine").

Tokenizing: the rendered string is split at special tokens and each text between two of them
is encoded as one piece (what a ``tokenizers`` tokenizer does with its added tokens). Before
rendering, every special-token spelling inside the caller's strings (messages, tools,
documents, extra variables) is wrapped in private-use marker characters (U+E000 ... U+E001), so
the split happens only at the specials the template itself writes; the markers are removed
before encoding and the spelling is encoded as text. Text inside a marked message that the
template cuts up (``content[:5]``) can leave a lone marker, which is dropped.

Mask: with ``{% generation %}`` markers, the tokens overlapping the text rendered inside them
(as transformers' ``return_assistant_tokens_mask``). Without them, each assistant message's
part of the rendering is found by rendering the conversation up to it with
``add_generation_prompt=True``: that prompt must be a prefix of the whole rendering (else a
:class:`ChatError` says to add ``{% generation %}``), and the assistant's part runs from its
end through the next end-of-turn token (the template's ``eos_token`` or a known end-of-turn
token its text writes: ``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``, ``<|end|>``, ...).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from bytepair import _core
from bytepair.chat._render import encode_parts
from bytepair.errors import ChatError

# Private-use characters: a wrapped spelling from the caller's text is WRAP + spelling + UNWRAP;
# GEN_START/GEN_END mark what a {% generation %} block rendered.
WRAP, UNWRAP, GEN_START, GEN_END = "\ue000", "\ue001", "\ue002", "\ue003"
_PRIVATE = WRAP + UNWRAP + GEN_START + GEN_END

#: End-of-turn tokens of well-known formats: a template whose text writes one of them ends an
#: assistant turn with it.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>",
               "</s>", "<|return|>", "<|call|>", "<|END_OF_TURN_TOKEN|>", "<｜end▁of▁sentence｜>")

_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


class ChatTemplate:
    """A Jinja chat template and the tokenizer's named special tokens it may refer to
    (``bos_token``, ``eos_token``, ...)."""

    def __init__(self, source: str, **special_tokens: str):
        if not isinstance(source, str):
            raise ChatError(f"a chat template is a string, got {type(source).__name__}")
        if any(c in source for c in _PRIVATE):
            raise ChatError("the chat template contains the private-use characters U+E000-U+E003 "
                            "that mark text from messages; bytepair cannot render it safely")
        unknown = set(special_tokens) - set(_TOKEN_KEYS)
        if unknown:
            raise ChatError(f"unknown special token names {', '.join(sorted(unknown))}; known: {', '.join(_TOKEN_KEYS)}")
        self.source = source
        self.special_tokens_map = {k: v for k, v in special_tokens.items() if v is not None}
        try:
            self._engine: Any = _core.JinjaTemplate(source)
            self.has_generation = self._engine.has_generation
        except ChatError as e:
            # minijinja's parser refuses it: jinja2 decides (it raises its own ChatError if it
            # refuses too, and minijinja's when it is not installed) and renders every call.
            _compile(source, str(e))
            self._engine = None
            self.has_generation = re.search(r"\{%[-+]?\s*generation\s*[-+]?%\}", source) is not None

    def __reduce__(self):
        # The compiled template cannot be pickled; a worker process compiles the source again.
        return (_rebuild, (self.source, self.special_tokens_map))

    def __repr__(self) -> str:
        return f"<ChatTemplate {len(self.source)} chars{' with {% generation %}' if self.has_generation else ''}>"

    def end_of_turn(self, encoding: Any) -> list[str]:
        """The special tokens that end an assistant turn under this template."""
        names = [t for t in END_OF_TURN if t in self.source]
        eos = self.special_tokens_map.get("eos_token")
        if eos and eos not in names:
            names.append(eos)
        # The private dict: ``special_tokens_set`` builds a set (o200k_harmony: over a thousand
        # entries) per call, and this runs per conversation.
        return [t for t in names if t in encoding._special_tokens]

    # rendering ---------------------------------------------------------------------------

    def render_text(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool = False,
                    tools: Any = None, documents: Any = None, **kwargs: Any) -> str:
        """The rendered string, as transformers' ``apply_chat_template(..., tokenize=False)``
        gives it (no marking: special spellings in messages are indistinguishable here)."""
        return self._render(_prepare(messages), add_generation_prompt, tools, documents, kwargs)

    def _render(self, messages, add_generation_prompt, tools, documents, kwargs) -> str:
        # kwargs after the special tokens: a caller's bos_token=... wins, as in transformers.
        context = {**self.special_tokens_map, **kwargs}
        _check_keywords(kwargs)
        context.update(messages=messages, tools=tools, documents=documents,
                       add_generation_prompt=add_generation_prompt)
        if self._engine is None:
            return self._render_jinja2("minijinja cannot parse it", context)
        try:
            return self._engine.render(context)
        except NotImplementedError as e:
            # Exactly what jinja2 would write, never a guess: this call renders with jinja2.
            return self._render_jinja2(str(e), context)

    def _render_jinja2(self, why: str, context: dict) -> str:
        template = _compile(self.source, why)
        import jinja2

        try:
            return template.render(**context)
        except jinja2.TemplateError as e:
            raise ChatError(f"the chat template failed: {type(e).__name__}: {e}") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as e:
            raise ChatError(f"the chat template failed: {type(e).__name__}: {e}") from None
        except RecursionError:  # a recursive macro in an untrusted template
            raise ChatError("the chat template failed: recursion too deep") from None

    def encode(self, encoding: Any, messages: Any, *, add_generation_prompt: bool = False,
               mask: bool = True, tools: Any = None, documents: Any = None,
               **kwargs: Any) -> tuple[list[int], list[int]]:
        """The ids of the rendered conversation and its training mask."""
        rendered = self.parts(encoding, messages, add_generation_prompt=add_generation_prompt, mask=mask,
                              tools=tools, documents=documents, **kwargs)
        return encode_parts(encoding, [rendered])[0]

    def parts(self, encoding: Any, messages: Any, *, add_generation_prompt: bool = False,
              mask: bool = True, tools: Any = None, documents: Any = None,
              **kwargs: Any) -> tuple[list, list]:
        """The rendered conversation as ``(parts, trains)`` for :func:`encode_parts`."""
        prepared = self.prepare(encoding, messages, add_generation_prompt=add_generation_prompt, mask=mask,
                                tools=tools, documents=documents, **kwargs)
        if type(prepared) is tuple:
            return prepared
        try:
            return prepared.parts()
        except NotImplementedError as e:
            return self._parts_jinja2(str(e), encoding, _specials(encoding), _prepare(messages), add_generation_prompt,
                                      mask, tools, documents, kwargs)

    def prepare(self, encoding: Any, messages: Any, *, add_generation_prompt: bool = False,
                mask: bool = True, tools: Any = None, documents: Any = None, **kwargs: Any) -> Any:
        """:meth:`parts` up to the rendering: the conversation converted for the core (a
        ``_core.JinjaConversation``, which ``.parts()`` renders, or ``render_many`` hands to
        the core to render and encode on its threads, without the GIL), or its ``(parts,
        trains)`` if jinja2 must render it (a value the core does not convert as jinja2 sees
        it, a template minijinja cannot parse). The core hands back what it then cannot
        render as jinja2 would (``parts`` and ``render_many`` render that with jinja2)."""
        return self.preparer(encoding, add_generation_prompt=add_generation_prompt, mask=mask, tools=tools,
                             documents=documents, **kwargs)(messages)

    def preparer(self, encoding: Any, *, add_generation_prompt: bool = False, mask: bool = True, tools: Any = None,
                 documents: Any = None, **kwargs: Any) -> _Preparer:
        """:meth:`prepare` of many conversations with the same options: ``preparer(...)(messages)``
        is ``prepare(..., messages)``, with what does not depend on the messages looked up and
        converted once (``render_many``). Its ``core`` is the core's preparer, which
        ``render_many`` hands the core to convert plain conversations itself (None when there
        is none: a template minijinja cannot parse, an option jinja2 is to render)."""
        specials = _specials(encoding)
        if mask and not self.has_generation:
            eot_ids, eot_names = self._end_of_turn_ids(encoding, specials)
        else:
            eot_ids, eot_names = [], ""
        options = _Preparer(self, encoding, specials, add_generation_prompt, mask, tools, documents, kwargs, eot_ids,
                            eot_names)
        options.clash = _keyword_clash(kwargs)
        if self._engine is None:
            options.core = "minijinja cannot parse it"
        elif not options.clash:
            try:
                # The core marks the caller's strings (tools, documents, extra keywords here;
                # the messages as each conversation is converted; bos_token & co. are the
                # template's own); rendering it splits it (chat/frame.rs).
                options.core = self._engine.preparer(
                    specials.core, self.special_tokens_map, {**kwargs, "tools": tools, "documents": documents},
                    # A conversation's own tools may apply only when the caller gave none
                    # (`_with_tools`; an explicit tools=None leaves it to Python's path).
                    add_generation_prompt, mask, eot_ids, eot_names, tools is None)
            except NotImplementedError as e:
                options.core = str(e)
        return options

    def _prepare_with(self, options: _Preparer, messages: Any) -> Any:
        messages = _prepare(messages)
        if options.clash:  # after the messages' own errors, as before
            raise ChatError(options.clash)
        try:
            if type(options.core) is not str:
                return options.core.prepare(messages)
            why = options.core
        except NotImplementedError as e:
            why = str(e)
        return self._parts_jinja2(why, options.encoding, options.specials, messages, options.add_generation_prompt,
                                  options.mask, options.tools, options.documents, options.kwargs)

    def _end_of_turn_ids(self, encoding, specials):
        """``end_of_turn``'s ids and their names for an error message, once per encoding."""
        key = (self.source, self.special_tokens_map.get("eos_token"))
        found = specials.end_of_turn.get(key)
        if found is None:
            eot = self.end_of_turn(encoding)
            found = specials.end_of_turn[key] = ([encoding._special_tokens[t] for t in eot],
                                                 ", ".join(sorted(eot)) or "none known")
        return found

    def _parts_jinja2(self, why, encoding, specials, messages, add_generation_prompt, mask, tools, documents, kwargs):
        """``parts`` for a conversation the core hands back (``why``): rendered with jinja2,
        then marked and framed by the core as it frames its own renderings
        (crates/core/src/chat/frame.rs), so both renderers share one framing."""
        # Marked once: the renders below (one per assistant message without
        # {% generation %}) share the marked inputs.
        messages = specials.mark(messages)
        tools, documents = specials.mark(tools), specials.mark(documents)
        kwargs = {k: specials.mark(v) for k, v in kwargs.items()}

        def render(msgs, gen):
            context = {**self.special_tokens_map, **kwargs, "messages": msgs, "tools": tools,
                       "documents": documents, "add_generation_prompt": gen}
            return self._render_jinja2(why, context)

        text = render(messages, add_generation_prompt)
        prompts: list = []
        eot_ids, eot_names = [], ""
        if mask and not self.has_generation:
            eot_ids, eot_names = self._end_of_turn_ids(encoding, specials)
            prompts = [(i, render(messages[:i], True)) for i, m in enumerate(messages) if m.get("role") == "assistant"]
        return specials.frame(text, mask=mask, generation=self.has_generation, prompts=prompts,
                              end_of_turn=eot_ids, names=eot_names)


def _check_keywords(kwargs):
    clash = _keyword_clash(kwargs)
    if clash:
        raise ChatError(clash)


def _keyword_clash(kwargs) -> str | None:
    """Why an extra keyword cannot be passed: it names one of the template's own variables."""
    clash = [k for k in ("messages", "tools", "documents", "add_generation_prompt") if k in kwargs]
    if clash:
        return f"the chat template failed: TypeError: {clash[0]} given twice (as a keyword)"
    return None


def _rebuild(source, special_tokens_map):
    return ChatTemplate(source, **special_tokens_map)


class _Preparer:
    """:meth:`ChatTemplate.preparer`'s function of the messages, with one call's (or one
    batch's) options for :meth:`ChatTemplate._prepare_with`: the caller's arguments, the
    end-of-turn ids the mask needs, why the extra keywords cannot be passed (``clash``), and
    the core's preparer, or why jinja2 is to render (``core``)."""

    __slots__ = ("template", "encoding", "specials", "add_generation_prompt", "mask", "tools", "documents", "kwargs",
                 "eot_ids", "eot_names", "clash", "core")

    def __init__(self, template, encoding, specials, add_generation_prompt, mask, tools, documents, kwargs, eot_ids,
                 eot_names):
        self.template, self.encoding, self.specials = template, encoding, specials
        self.add_generation_prompt, self.mask = add_generation_prompt, mask
        self.tools, self.documents, self.kwargs = tools, documents, kwargs
        self.eot_ids, self.eot_names = eot_ids, eot_names
        self.clash: str | None = None
        self.core: Any = None

    def __call__(self, messages: Any) -> Any:
        return self.template._prepare_with(self, messages)


class _Specials:
    """The encoding's special tokens, for renderings by jinja2: the core's marking and framing
    (``_core.ChatSpecials``, crates/core/src/chat/frame.rs) applied to Python values, and to
    strings holding lone surrogates, which the core cannot take as UTF-8."""

    def __init__(self, tokens: dict):
        self.core = _core.ChatSpecials(tokens)
        self.end_of_turn: dict = {}  # ChatTemplate._end_of_turn_ids's cache
        self._spellings = "".join(tokens)

    def mark(self, value: Any) -> Any:
        if type(value) is dict:  # before the isinstance chain: Mapping is an ABC, slow to test
            return {k: self.mark(v) for k, v in value.items()}
        if isinstance(value, str):
            try:
                return self.core.mark(value)
            except UnicodeEncodeError:
                # No spelling holds a surrogate, so no spelling crosses one: the parts between
                # them are marked on their own.
                cut = _SURROGATE.split(value)
                return "".join(p if k % 2 else self.core.mark(p) for k, p in enumerate(cut))
        if isinstance(value, Mapping):
            return {k: self.mark(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.mark(v) for v in value]
        return value

    def frame(self, text: str, *, prompts: list, **how: Any) -> tuple[list, list]:
        """``ChatSpecials.frame``. A lone surrogate stands in for itself as a character no
        input or spelling holds (one character for one: offsets stay), put back in the parts."""
        try:
            return self.core.frame(text, prompts=prompts, **how)
        except UnicodeEncodeError:
            pass
        texts = [text, *(p for _, p in prompts)]
        seen = set(self._spellings).union(*texts)
        free = (c for c in map(chr, range(0xF0000, 0x110000)) if c not in seen)
        hide = {}
        for s in sorted(set(_SURROGATE.findall("".join(texts)))):
            c = next(free, None)
            if c is None:
                raise ChatError("the rendered conversation holds lone surrogates and every "
                                "supplementary private-use character: it cannot be split")
            hide[ord(s)] = c
        show = str.maketrans({c: chr(s) for s, c in hide.items()})
        parts, trains = self.core.frame(text.translate(hide), prompts=[(i, p.translate(hide)) for i, p in prompts], **how)
        return [p.translate(show) if type(p) is str else p for p in parts], trains


_SURROGATE = re.compile("([\ud800-\udfff])")


def _specials(encoding) -> _Specials:
    cache = encoding.__dict__.setdefault("_chat_specials", {})
    if "v" not in cache:
        cache["v"] = _Specials(encoding._special_tokens)
    return cache["v"]


def _prepare(messages: Any) -> list[dict]:
    """transformers' preparation: plain dicts, ``None`` values dropped, reasoning aliased."""
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise ChatError(f"a conversation is a list of messages, not {type(messages).__name__}")
    if not messages:
        raise ChatError("the conversation has no messages")
    out = []
    for i, message in enumerate(messages):
        # A plain dict that needs nothing (most) is passed as it is: nothing that renders it
        # writes to it, and copying every message was a tenth of a conversation's cost.
        if type(message) is not dict:
            if not isinstance(message, Mapping):
                raise ChatError(f"message {i}: expected a dict, got {type(message).__name__}")
            message = dict(message)
        for v in message.values():  # a plain loop: any() over a generator cost twice as much
            if v is None:
                message = {k: v for k, v in message.items() if v is not None}
                break
        if "reasoning_content" in message or "thinking" in message or "reasoning" in message:
            reasoning = next(message[k] for k in ("reasoning_content", "thinking", "reasoning") if k in message)
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


# the environment -------------------------------------------------------------------------


def _compile(source: str, why: str):
    """The jinja2 template of ``source``, for what the Rust engine hands back (``why``): a
    render it does not write as jinja2 would, or a failure (jinja2, the reference, may render
    what minijinja refuses, and otherwise words the error as transformers' users see it)."""
    try:
        import jinja2  # noqa: F401
    except ImportError:
        if why.startswith("the chat template "):  # minijinja's own error, as good as it gets
            raise ChatError(why) from None
        raise ChatError(f"this render needs jinja2 ({why}: only jinja2 writes it as transformers does); "
                        "pip install 'bytepair[chat]'") from None
    return _compile_jinja2(source)


@lru_cache(maxsize=64)
def _compile_jinja2(source: str):
    import jinja2
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(Extension):
        """``{% generation %}...{% endgeneration %}``: the body's output, between markers that
        the splitter turns into a trained span."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_mark"), [], [], body).set_lineno(lineno)

        def _mark(self, caller):
            return GEN_START + caller() + GEN_END

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # transformers' filter: no HTML escaping (jinja's own would write \u003c for "<").
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    class Dict:
        """``dict(...)`` and ``dict.fromkeys`` only: no way to reach the type itself."""

        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class Namespace(jinja2.utils.Namespace):
        """A namespace that refuses underscore names (no reaching CPython internals)."""

        def __init__(*args, **kwargs):  # noqa: N805 - jinja's own signature trick, keeps namespace(self=...)
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                Namespace._check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            Namespace._check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a namespace attribute cannot start with '_': {name!r}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now,
                       dict=Dict(), namespace=Namespace)
    try:
        return env.from_string(source)
    except jinja2.TemplateSyntaxError as e:
        raise ChatError(f"the chat template is not valid Jinja: {e.message} (line {e.lineno})") from None


# loading ---------------------------------------------------------------------------------


def load_chat_template(path: str | os.PathLike, name: str | None = None) -> ChatTemplate:
    """The chat template of a Hugging Face tokenizer: ``path`` is its directory, its
    ``tokenizer.json`` (the files beside it are read), its ``tokenizer_config.json``, or a
    ``.jinja`` file. ``chat_template.jinja`` wins over ``tokenizer_config.json``'s
    ``chat_template`` (as in transformers); named templates pick ``name`` (default
    ``"default"``). The special tokens come from ``tokenizer_config.json``."""
    path = Path(path)
    if path.suffix == ".jinja":
        return ChatTemplate(_read(path))
    folder = path if path.is_dir() else path.parent
    config_path = path if path.name == "tokenizer_config.json" else folder / "tokenizer_config.json"
    config: dict = {}
    if config_path.is_file():
        try:
            config = json.loads(_read(config_path))
        except json.JSONDecodeError as e:
            raise ChatError(f"{config_path}: not JSON ({e.msg} at line {e.lineno})") from None
        if not isinstance(config, dict):
            raise ChatError(f"{config_path}: expected a JSON object")
    tokens = {}
    for key in _TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, Mapping):  # AddedToken written out: {"content": ..., ...}
            value = value.get("content")
        if isinstance(value, str):
            tokens[key] = value
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        return ChatTemplate(_read(jinja_file), **tokens)
    source = config.get("chat_template")
    if isinstance(source, list):  # named templates: [{"name": ..., "template": ...}]
        named = {t.get("name"): t.get("template") for t in source if isinstance(t, Mapping)}
        want = name or "default"
        if want not in named:
            raise ChatError(f"{config_path}: no chat template named {want!r}; it has {', '.join(map(str, named))}")
        source = named[want]
    if not isinstance(source, str):
        raise ChatError(f"no chat template in {folder} (neither chat_template.jinja nor a "
                        "chat_template in tokenizer_config.json)")
    return ChatTemplate(source, **tokens)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise ChatError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ChatError(f"{path}: not UTF-8 (byte {e.start})") from None
