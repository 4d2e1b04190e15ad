"""OpenAI's harmony chat format (gpt-oss), as openai-harmony renders it.

A message is ``<|start|>`` author [`` to=recipient``] [``<|channel|>channel``]
[`` content_type``] ``<|message|>`` content, ended by ``<|end|>`` (``<|call|>`` for an
assistant message with a recipient: a tool call). The author is the role (``:name`` appended if
the message has a name), except for a ``tool`` message, which is written as its name alone
(``functions.get_weather``). A content type that starts with ``<|constrain|>`` writes that
marker as the special token (``" <|constrain|>json"``).

Messages are plain dicts with the fields of openai-harmony's ``Message.to_dict()``: ``role``,
``name``, ``content`` (a string or a list of parts: ``{"type": "text", "text": ...}``,
``{"type": "system_content", ...}`` in a system message, ``{"type": "developer_content", ...}``
in a developer message), ``channel``, ``recipient``, ``content_type``.

Rules that openai-harmony applies and this module follows:

- ``render_conversation_for_training``: when the last assistant message goes to the ``final``
  channel, every ``analysis`` message before the conversation's first ``final`` message is
  dropped (the model's earlier reasoning is not shown to it again; pass
  ``auto_drop_analysis=False`` to keep it); and if the conversation's last message is an
  assistant ``final`` message, its ``<|end|>`` becomes ``<|return|>``.
- ``render_conversation_for_completion``: the same dropping, then ``<|start|>assistant``.
- The system message's channel line gains "Calls to these tools must go to the commentary
  channel: 'functions'." when any developer message declares ``functions`` tools.

Trained (mask 1): in each assistant message, everything the model writes after the prompt
``<|start|>assistant``: recipient, channel, content type, ``<|message|>``, the content and the
closing ``<|end|>``/``<|call|>``/``<|return|>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bytepair.chat._render import Render, Template, content_of, role_of
from bytepair.errors import ChatError

SPECIAL_TOKENS = ("<|start|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>",
                  "<|channel|>", "<|constrain|>")
ROLES = ("system", "developer", "user", "assistant", "tool")


def render(out: Render, messages: list, options: dict) -> None:
    _conversation(out, messages, options)
    last = messages[-1] if messages else None
    if last is not None and role_of(last) == "assistant" and last.get("channel") == "final" and out.parts:
        # The last part is that message's closing <|end|>: the conversation ends with <|return|>.
        out.parts[-1] = out._specials["<|return|>"]


def complete(out: Render, messages: list, options: dict) -> None:
    _conversation(out, messages, options)
    out.special("<|start|>", 0)
    out.text(options.get("next_turn_role", "assistant"), 0, "next_turn_role")


def _conversation(out: Render, messages: list, options: dict) -> None:
    auto_drop_analysis = options.get("auto_drop_analysis", True)
    unknown = set(options) - {"auto_drop_analysis", "next_turn_role"}
    if unknown:
        raise ChatError(f"the harmony template takes the options auto_drop_analysis and "
                        f"next_turn_role, not {', '.join(sorted(unknown))}")
    roles = [role_of(m) for m in messages]
    for i, role in enumerate(roles):
        if role not in ROLES:
            raise ChatError(f"message {i}: unknown role {role!r}; known: {', '.join(ROLES)}")
    has_function_tools = any(
        role == "developer" and any(_is_part(p, "developer_content") and
                                    (p.get("tools") or {}).get("functions", {}).get("tools")
                                    for p in _parts(m, f"message {i}"))
        for i, (m, role) in enumerate(zip(messages, roles)))
    last_assistant_is_final = next(
        (m.get("channel") == "final" for m, role in zip(reversed(messages), reversed(roles))
         if role == "assistant"), False)
    first_final = next((i for i, m in enumerate(messages) if m.get("channel") == "final"), None)
    drop = auto_drop_analysis and last_assistant_is_final and first_final is not None
    for i, (message, role) in enumerate(zip(messages, roles)):
        if drop and i < first_final and message.get("channel") == "analysis":
            continue
        _message(out, message, role, has_function_tools, f"message {i}")


def _parts(message: Mapping[str, Any], where: str) -> list:
    content = content_of(message, where)
    if isinstance(content, str):  # to_dict()'s Rust twin writes a lone text as a plain string
        return [{"type": "text", "text": content}]
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        return list(content)
    raise ChatError(f"{where}: content must be a string or a list of parts, got {type(content).__name__}")


def _is_part(part: Any, kind: str) -> bool:
    return isinstance(part, Mapping) and part.get("type") == kind


def _str_field(message: Mapping[str, Any], field: str, where: str) -> str | None:
    value = message.get(field)
    if value is not None and not isinstance(value, str):
        raise ChatError(f"{where}: {field} must be a string, got {type(value).__name__}")
    return value


def _message(out: Render, message: Mapping[str, Any], role: str, has_function_tools: bool,
             where: str) -> None:
    name = _str_field(message, "name", where)
    recipient = _str_field(message, "recipient", where)
    channel = _str_field(message, "channel", where)
    content_type = _str_field(message, "content_type", where)
    train = 1 if role == "assistant" else 0
    out.special("<|start|>", 0)
    if role == "tool":
        if name is None:
            raise ChatError(f"{where}: a tool message needs a name (the tool's, e.g. "
                            "'functions.get_weather'), written as its author")
        out.text(name, 0, where)
    else:
        out.text(role, 0, where)
        if name is not None:
            out.text(f":{name}", 0, where)
    if recipient is not None and recipient != "all":
        out.text(f" to={recipient}", train, where)
    if channel is not None:
        out.special("<|channel|>", train)
        out.text(channel, train, where)
    if content_type is not None:
        if content_type.startswith("<|constrain|>"):
            out.text(" ", train, where)
            out.special("<|constrain|>", train)
            out.text(content_type[len("<|constrain|>"):], train, where)
        else:
            out.text(f" {content_type}", train, where)
    out.special("<|message|>", train)
    for j, part in enumerate(_parts(message, where)):
        here = f"{where}, part {j}"
        if isinstance(part, str):
            out.text(part, train, here)
        elif _is_part(part, "text"):
            out.text(part.get("text"), train, here)
        elif _is_part(part, "system_content"):
            if role != "system":
                raise ChatError(f"{here}: system_content may only appear in a system message")
            out.text(_system_text(part, has_function_tools, here), train, here)
        elif _is_part(part, "developer_content"):
            if role != "developer":
                raise ChatError(f"{here}: developer_content may only appear in a developer message")
            out.text(_developer_text(part, here), train, here)
        else:
            raise ChatError(f"{here}: unknown part {part!r:.80}; known types: text, "
                            "system_content, developer_content")
    ends_in_call = role == "assistant" and recipient is not None
    out.special("<|call|>" if ends_in_call else "<|end|>", train)


# The text of system and developer contents ------------------------------------------------

_EFFORTS = {"low": "low", "medium": "medium", "high": "high"}


def _system_text(part: Mapping[str, Any], has_function_tools: bool, where: str) -> str:
    sections = []
    top = []
    if part.get("model_identity") is not None:
        top.append(_string(part["model_identity"], "model_identity", where))
    if part.get("knowledge_cutoff") is not None:
        top.append(f"Knowledge cutoff: {_string(part['knowledge_cutoff'], 'knowledge_cutoff', where)}")
    if part.get("conversation_start_date") is not None:
        top.append(f"Current date: {_string(part['conversation_start_date'], 'conversation_start_date', where)}")
    if top:
        sections.append("\n".join(top))
    effort = part.get("reasoning_effort")
    if effort is not None:
        effort = getattr(effort, "value", effort)  # ReasoningEffort enum from to_dict()
        if not isinstance(effort, str) or effort.lower() not in _EFFORTS:
            raise ChatError(f"{where}: reasoning_effort must be low, medium or high, got {effort!r}")
        sections.append(f"Reasoning: {_EFFORTS[effort.lower()]}")
    tools = part.get("tools")
    if tools:
        sections.append(_tools_section(tools, where))
    config = part.get("channel_config")
    if config is not None:
        channels = config.get("valid_channels") or []
        if channels:
            line = f"# Valid channels: {', '.join(channels)}."
            if config.get("channel_required"):
                line += " Channel must be included for every message."
            if has_function_tools:
                line += "\nCalls to these tools must go to the commentary channel: 'functions'."
            sections.append(line)
    return "\n\n".join(sections)


def _developer_text(part: Mapping[str, Any], where: str) -> str:
    sections = []
    if part.get("instructions") is not None:
        sections += ["# Instructions", _string(part["instructions"], "instructions", where)]
    tools = part.get("tools")
    if tools:
        sections.append(_tools_section(tools, where))
    return "\n\n".join(sections)


def _string(value: Any, field: str, where: str) -> str:
    if not isinstance(value, str):
        raise ChatError(f"{where}: {field} must be a string, got {type(value).__name__}")
    return value


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split at ``\\n``, a trailing ``\\r`` dropped from each line, no
    empty line after a final ``\\n`` (``str.splitlines`` also splits at form feeds and more)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _tools_section(tools: Mapping[str, Any], where: str) -> str:
    if not isinstance(tools, Mapping):
        raise ChatError(f"{where}: tools must be a dict of namespace name to namespace")
    sections = ["# Tools"]
    # openai-harmony keeps namespaces in a sorted map: they render in key order.
    for key in sorted(tools):
        ns = tools[key]
        name = _string(ns.get("name"), "tool namespace name", where)
        ns_tools = ns.get("tools") or []
        lines = [f"## {name}\n"]
        if ns.get("description") is not None:
            for line in _lines(_string(ns["description"], "namespace description", where)):
                lines.append(f"// {line}" if ns_tools else line)
        if ns_tools:
            lines.append(f"namespace {name} {{\n")
            for tool in ns_tools:
                for line in _lines(_string(tool.get("description"), "tool description", where)):
                    lines.append(f"// {line}")
                tool_name = _string(tool.get("name"), "tool name", where)
                if tool.get("parameters") is not None:
                    lines.append(f"type {tool_name} = (_: {_typescript(tool['parameters'], '')}) => any;\n")
                else:
                    lines.append(f"type {tool_name} = () => any;\n")
            lines.append(f"}} // namespace {name}")
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


def _json(value: Any) -> str:
    """serde_json's compact form, which openai-harmony prints defaults with."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _is_enum(schema: Mapping[str, Any]) -> bool:
    values = schema.get("enum")
    return isinstance(values, list) and bool(values)


def _default_comment(schema: Mapping[str, Any], quoted_enum: bool) -> str:
    """The ``default: ...`` comment: a string default is quoted unless the schema is an enum."""
    default = schema["default"]
    if isinstance(default, str):
        return f'default: "{default}"' if not _is_enum(schema) else f"default: {default}"
    return f"default: {_json(default)}"


def _nullable(schema: Any, text: str) -> str:
    if isinstance(schema, Mapping) and schema.get("nullable") is True and "null" not in text:
        return f"{text} | null"
    return text


def _typescript(schema: Any, indent: str) -> str:
    """A JSON schema as the TypeScript-like type openai-harmony writes in a tools section."""
    if not isinstance(schema, Mapping):
        return "any"
    one_of = schema.get("oneOf")
    if isinstance(one_of, list):
        out = ""
        for variant in one_of:
            out += f"\n{indent} | "
            out += _nullable(variant, _typescript(variant, indent + "   "))
            comments = []
            if isinstance(variant, Mapping):
                if isinstance(variant.get("description"), str):
                    comments.append(variant["description"])
                if "default" in variant:
                    comments.append(_default_comment(variant, True))
            if comments:
                out += f" // {' '.join(comments)}"
        return out
    kind = schema.get("type")
    if isinstance(kind, list):
        names = ["number" if k == "integer" else k for k in kind if isinstance(k, str)]
        if names:
            return " | ".join(names)
    if isinstance(kind, str):
        if kind == "object":
            return _object(schema, indent)
        if kind == "string":
            values = schema.get("enum")
            if isinstance(values, list):
                quoted = [f'"{v}"' for v in values if isinstance(v, str)]
                if quoted:
                    return " | ".join(quoted)
            return "string"
        if kind in ("number", "integer"):
            return "number"
        if kind == "boolean":
            return "boolean"
        if kind == "array":
            if "items" in schema:
                return f"{_typescript(schema['items'], indent)}[]"
            return "Array<any>"
        return "any"
    return "any"


def _object(schema: Mapping[str, Any], indent: str) -> str:
    out = ""
    if isinstance(schema.get("description"), str):
        out += f"{indent}// {schema['description']}\n"
    out += "{\n"
    props = schema.get("properties")
    if isinstance(props, Mapping):
        required = {r for r in schema.get("required") or [] if isinstance(r, str)}
        for key, val in props.items():
            if not isinstance(val, Mapping):
                val = {}
            mark = "" if key in required else "?"
            if isinstance(val.get("title"), str):
                out += f"{indent}// {val['title']}\n{indent}//\n"
            one_of = val.get("oneOf")
            if one_of is None and isinstance(val.get("description"), str):
                out += f"{indent}// {val['description']}\n"
            examples = val.get("examples")
            if isinstance(examples, list) and examples:
                out += f"{indent}// Examples:\n"
                for example in examples:
                    if isinstance(example, str):
                        out += f'{indent}// - "{example}"\n'
            if isinstance(one_of, list):
                out += _one_of_property(key, val, one_of, mark, indent)
                continue
            out += f"{indent}{key}{mark}: "
            out += _nullable(val, _typescript(val, indent + "    ")) + ","
            if one_of is None and "default" in val:
                out += f" // {_default_comment(val, True)}"
            out += "\n"
    return out + f"{indent}}}"


def _one_of_property(key: str, val: Mapping[str, Any], variants: list, mark: str, indent: str) -> str:
    out = ""
    desc = val.get("description") if isinstance(val.get("description"), str) else None
    first = variants[0] if variants and isinstance(variants[0], Mapping) else {}
    # A property description equal to its first variant's is written once, after that variant.
    skip_desc = desc is not None and first.get("description") == desc
    desc_above = False
    if desc is not None and not skip_desc:
        out += f"{indent}// {desc}\n"
        desc_above = True
    if "default" in val:
        out += f"{indent}// {_default_comment(val, True)}\n"
    out += f"{indent}{key}{mark}:\n"
    for i, variant in enumerate(variants):
        out += f"{indent} | "
        out += _nullable(variant, _typescript(variant, indent + "   "))
        comments = []
        if isinstance(variant, Mapping):
            vdesc = variant.get("description")
            if not (i == 0 and desc_above) and isinstance(vdesc, str) and vdesc != desc:
                comments.append(vdesc)
            if "default" in variant:
                comments.append(_default_comment(variant, True))
        if comments:
            out += f" // {' '.join(comments)}"
        out += "\n"
    return out + f"{indent},\n"


# openai-harmony's stop_tokens(): <|end|> too, since one assistant turn can be several messages
# (analysis, then final), each ended by <|end|>.
TEMPLATE = Template("harmony", SPECIAL_TOKENS, ("<|return|>", "<|call|>", "<|end|>"), render, complete)
