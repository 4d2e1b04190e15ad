"""Mistral's instruct formats, as mistral-common's ``MistralTokenizer.encode_chat_completion``
renders them with its SentencePiece tokenizers v1, v2 and v3 (``mistral_v1``, ``mistral_v2``,
``mistral_v3``).

mistral-common first *normalizes* a request, and so does this module:

- the system messages' texts, joined by ``\\n\\n``, become one system prompt, prepended
  (``system + "\\n\\n"``) to the *first* user message in v1 and to the *last* in v2/v3;
- consecutive messages of one role are merged: user and assistant texts joined by ``\\n\\n``,
  assistant tool calls concatenated; tool messages stay one each;
- a conversation that does not start with a user message gets an empty one in front;
- tool-call arguments and tool results are parsed as JSON when they are JSON (and re-written
  with ``json.dumps(..., ensure_ascii=False)``), an empty one becomes ``{}``.

Then ``<s>``, and per message (each text encoded on its own, SentencePiece's dummy prefix
included):

- user: v1 ``"[INST] " + text + " [/INST]"`` as one text; v2/v3 ``[INST]`` text ``[/INST]``
  (control tokens), preceded in the last user message by ``[AVAILABLE_TOOLS]`` + the tools'
  JSON + ``[/AVAILABLE_TOOLS]`` when tools are given;
- assistant: the text (v2/v3 with trailing spaces removed) or ``[TOOL_CALLS]`` + the calls'
  JSON (``name``, ``arguments``, and in v3 the call ``id``), then ``</s>``;
- tool: ``[TOOL_RESULTS]`` + JSON + ``[/TOOL_RESULTS]`` (v2: ``[{"name", "content"}]``;
  v3: ``{"content", "call_id"}``). v2 leaves out tool calls and results that come before the
  last user message.

Trained (mask 1): each assistant message's text or tool calls and its ``</s>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bytepair.chat._render import Render, Template, content_of, role_of, text_parts
from bytepair.errors import ChatError

V1_SPECIAL_TOKENS = ("<s>", "</s>")
V3_SPECIAL_TOKENS = ("<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]",
                     "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]")
JOIN = "\n\n"


def _texts(content: Any, where: str) -> str:
    """A content's text: text parts joined by ``\\n\\n`` (mistral-common's chunk join); empty
    parts skipped."""
    if content is None:
        return ""
    return JOIN.join(t for t in text_parts(content, where) if t)


def _json_value(value: Any) -> Any:
    """A tool call's arguments or a tool's result as mistral-common reads them: JSON text is
    parsed, other text kept as text, an empty one is ``{}``."""
    if isinstance(value, (Mapping, list)):
        return json.loads(json.dumps(value))
    if value is None or value == "":
        return {}
    try:
        return json.loads(value)
    except (json.JSONDecodeError, TypeError):
        return value


class _Message:
    __slots__ = ("role", "text", "tool_calls", "name", "call_id", "where")

    def __init__(self, role, text="", tool_calls=None, name=None, call_id=None, where=""):
        self.role, self.text, self.tool_calls = role, text, tool_calls or []
        self.name, self.call_id, self.where = name, call_id, where


def _normalize(messages: list) -> tuple[str | None, list[_Message]]:
    system = []
    merged: list[_Message] = []
    for i, message in enumerate(messages):
        where = f"message {i}"
        role = role_of(message)
        if role == "system":
            text = _texts(message.get("content"), where)
            if text:
                system.append(text)
            continue
        if role not in ("user", "assistant", "tool"):
            raise ChatError(f"{where}: unknown role {role!r}; known: system, user, assistant, tool")
        text = _texts(message.get("content"), where)
        if role == "tool":
            merged.append(_Message("tool", text, name=message.get("name"),
                                   call_id=message.get("tool_call_id"), where=where))
            continue
        calls = _tool_calls(message.get("tool_calls"), where) if role == "assistant" else []
        if calls and text:
            raise ChatError(f"{where}: mistral-common does not take tool calls and content in "
                            "one assistant message")
        last = merged[-1] if merged else None
        if last is not None and last.role == role:
            # mistral-common merges a run of one role into one message.
            if text:
                last.text = last.text + JOIN + text if last.text else text
            last.tool_calls += calls
            if last.tool_calls and last.text:
                raise ChatError(f"{where}: merged with the assistant message before it, it mixes "
                                "tool calls and content, which mistral-common does not take")
        else:
            merged.append(_Message(role, text, calls, where=where))
    if not merged or merged[0].role != "user":
        merged.insert(0, _Message("user", "", where="(inserted)"))
    return (JOIN.join(system) if system else None), merged


def _tool_calls(calls: Any, where: str) -> list[dict]:
    if not calls:
        return []
    if not isinstance(calls, Sequence):
        raise ChatError(f"{where}: tool_calls must be a list")
    out = []
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ChatError(f"{where}, tool call {j}: expected {{'function': {{'name': ..., "
                            f"'arguments': ...}}}}, got {call!r:.80}")
        out.append({"name": fn["name"], "arguments": _json_value(fn.get("arguments")),
                    "id": call.get("id")})
    return out


def _tools_json(tools: Any) -> str:
    if not isinstance(tools, Sequence):
        raise ChatError("tools must be a list of {'type': 'function', 'function': {...}}")
    dumped = []
    for j, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ChatError(f"tool {j}: expected {{'type': 'function', 'function': {{'name': ...}}}}")
        dumped.append({"type": "function", "function": {
            "name": fn["name"], "description": fn.get("description", ""),
            "parameters": fn.get("parameters", {})}})
    return json.dumps(dumped, ensure_ascii=False)


def _render(out: Render, messages: list, options: dict, version: int) -> None:
    tools = options.pop("tools", None)
    if options:
        raise ChatError(f"the mistral templates take the option tools, not {', '.join(sorted(options))}")
    if tools and version == 1:
        raise ChatError("mistral_v1 has no tools")
    system, merged = _normalize(messages)
    users = [i for i, m in enumerate(merged) if m.role == "user"]
    first_user, last_user = users[0], users[-1]
    out.special("<s>", 0)
    for i, m in enumerate(merged):
        if m.role == "user":
            text = m.text
            if version == 1:
                if i == first_user and system:
                    text = system + JOIN + text
                out.text(f"[INST] {text} [/INST]", 0, m.where)
                continue
            if i == last_user and tools:
                out.special("[AVAILABLE_TOOLS]", 0)
                out.text(_tools_json(tools), 0, "tools")
                out.special("[/AVAILABLE_TOOLS]", 0)
            out.special("[INST]", 0)
            if i == last_user and system:
                text = system + JOIN + text
            out.text(text, 0, m.where)
            out.special("[/INST]", 0)
        elif m.role == "assistant":
            if m.tool_calls:
                if version == 1:
                    raise ChatError(f"{m.where}: mistral_v1 has no tool calls")
                if version == 2 and i < last_user:
                    continue  # v2 leaves out the tool calls before the last user message
                calls = [{"name": c["name"], "arguments": c["arguments"],
                          **({"id": c["id"]} if version >= 3 and c["id"] and c["id"] != "null" else {})}
                         for c in m.tool_calls]
                out.special("[TOOL_CALLS]", 1)
                out.text(json.dumps(calls, ensure_ascii=False), 1, m.where)
            elif m.text:
                out.text(m.text if version == 1 else m.text.rstrip(" "), 1, m.where)
            else:
                raise ChatError(f"{m.where}: an assistant message needs content or tool calls")
            out.special("</s>", 1)
        else:  # tool
            if version == 1:
                raise ChatError(f"{m.where}: mistral_v1 has no tool messages")
            if version == 2:
                if i < last_user:
                    continue
                result = [{"name": m.name, "content": _json_value(m.text)}]
            else:
                if m.call_id is None:
                    raise ChatError(f"{m.where}: a tool message needs its tool_call_id in mistral_v3")
                result = {"content": _json_value(m.text), "call_id": m.call_id}
            out.special("[TOOL_RESULTS]", 0)
            out.text(json.dumps(result, ensure_ascii=False), 0, m.where)
            out.special("[/TOOL_RESULTS]", 0)


def _template(version: int) -> Template:
    def render(out: Render, messages: list, options: dict) -> None:
        _render(out, messages, dict(options), version)

    def complete(out: Render, messages: list, options: dict) -> None:
        """mistral-common's prompt: the conversation as it is (ending with a user or tool
        message); the model's answer follows directly."""
        if messages and role_of(messages[-1]) == "assistant":
            raise ChatError("render_for_completion (mistral) needs a conversation that ends with "
                            "a user or tool message")
        _render(out, messages, dict(options), version)

    specials = V1_SPECIAL_TOKENS if version == 1 else V3_SPECIAL_TOKENS
    # Never picked on its own: v1/v2/v3 share their special tokens with other formats or each
    # other, so the caller names the version mistral-common's tokenizer has.
    return Template(f"mistral_v{version}", specials, ("</s>",), render, complete, fits=lambda enc: False)


TEMPLATES = [_template(1), _template(2), _template(3)]
