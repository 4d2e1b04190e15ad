"""Conversations for the chat parity tests, cut from the real corpora (en, code, de, zh, uk, tr,
vi): system prompts, multi-turn, tool calls and tool results, empty, whitespace-edged, long and
non-ASCII contents."""

from __future__ import annotations

import json
import random


def snippet(rng: random.Random, docs: list[str], clean: bool = True) -> str:
    doc = rng.choice(docs)
    start = rng.randrange(len(doc))
    text = doc[start: start + rng.choice([0, 1, 7, 60, 300, 1500])]
    text = rng.choice(["", "", " ", "\n", "\n\n", "  "]) + text + rng.choice(["", "", "\n", " ", "\n\n"])
    if clean:
        text = text.replace("<|", "< |").replace("[INST]", "[ INST]").replace("<s>", "< s>")
    return text


def conversations(docs: list[str], n: int, seed: int, *, system: float = 0.5, tools: bool = False,
                  alternate: bool = True, clean: bool = True) -> list[list[dict]]:
    """``n`` conversations: an optional system message, then user/assistant turns (and, with
    ``tools``, assistant tool calls in the OpenAI/transformers shape followed by tool results)."""
    rng = random.Random(seed)
    docs = docs[:400]
    out = []
    for _ in range(n):
        msgs = []
        if rng.random() < system:
            msgs.append({"role": "system", "content": snippet(rng, docs, clean)})
        for _turn in range(rng.randint(1, 4)):
            msgs.append({"role": "user", "content": snippet(rng, docs, clean)})
            if tools and rng.random() < 0.4:
                args = {"location": snippet(rng, docs, clean)[:40], "days": rng.randint(1, 9)}
                msgs.append({"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": args}}]})
                msgs.append({"role": "tool", "name": "get_weather",
                             "content": json.dumps({"temp": rng.randint(-20, 40), "sky": snippet(rng, docs, clean)[:50]},
                                                   ensure_ascii=False)})
            msgs.append({"role": "assistant", "content": snippet(rng, docs, clean)})
        if not alternate and rng.random() < 0.2:
            msgs.pop()
        out.append(msgs)
    return out


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Gets the weather for a place (Zürich, 東京).",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "City"},
            "days": {"type": "integer"}}, "required": ["location"]},
    },
}
