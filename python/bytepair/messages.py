"""The prompt tokens of a chat API request: OpenAI's published counting recipe.

OpenAI does not publish its chat template; it publishes a recipe for counting, in the cookbook
notebook "How to count tokens with tiktoken"
(https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb),
checked there against the prompt_tokens the API reports. This module implements that recipe
and nothing beyond it; a request the recipe does not cover (a model family it does not name,
content that is not a string, a tool without descriptions) raises MessagesError rather than
being guessed at.

- Every message costs ``tokens_per_message`` tokens of framing plus the tokens of each of its
  values (role, content, name); a ``name`` costs ``tokens_per_name`` more. Every reply is primed
  with 3 tokens (``<|start|>assistant<|message|>``).
- gpt-3.5-turbo-0301: 4 per message, -1 per name (the role is left out when a name is given).
  Every other gpt-3.5-turbo and gpt-4 model (gpt-4o, gpt-4o-mini, and by the recipe's own
  substring rule gpt-4.1 and gpt-4.5): 3 per message, 1 per name.
- Tools (function definitions), as the notebook's ``num_tokens_for_tools``: per function a fixed
  start, ``name:description`` (a final period dropped), per property ``name:type:description``
  and its enum values, and a fixed end; the constants differ between gpt-4o/gpt-4o-mini and
  gpt-3.5-turbo/gpt-4.

The values are encoded with the model's own encoding (the registry's table) as ordinary text:
the API does not let text in a message act as a special token.
"""

from __future__ import annotations

from dataclasses import dataclass

from bytepair.errors import MessagesError

__all__ = ["MessagesError", "count_messages"]


@dataclass(frozen=True)
class Recipe:
    tokens_per_message: int
    tokens_per_name: int
    reply_priming: int = 3


@dataclass(frozen=True)
class ToolRecipe:
    func_init: int
    prop_init: int
    prop_key: int
    enum_init: int
    enum_item: int
    func_end: int


# gpt-3.5-turbo-0301 is the one model with the older framing.
_RECIPE_0301 = Recipe(tokens_per_message=4, tokens_per_name=-1)
_RECIPE = Recipe(tokens_per_message=3, tokens_per_name=1)
_TOOLS_GPT4O = ToolRecipe(func_init=7, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12)
_TOOLS_GPT4 = ToolRecipe(func_init=10, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12)


def recipe_for(model: str) -> Recipe:
    """The per-message overhead for ``model`` (the notebook's rule: exact 0301, else substring)."""
    bare = model.rsplit("/", 1)[-1]
    if bare == "gpt-3.5-turbo-0301":
        return _RECIPE_0301
    if "gpt-3.5-turbo" in bare or "gpt-4" in bare:
        return _RECIPE
    raise MessagesError(
        f"no published token-counting recipe for {model!r}: OpenAI's recipe covers the "
        "gpt-3.5-turbo and gpt-4 families (gpt-4o, gpt-4o-mini, ...); count the text with "
        "`bytepair count` instead")


def tool_recipe_for(model: str) -> ToolRecipe:
    bare = model.rsplit("/", 1)[-1]
    if "gpt-4o" in bare:
        return _TOOLS_GPT4O
    if "gpt-3.5-turbo" in bare or (bare.startswith("gpt-4") and not bare.startswith(("gpt-4.", "gpt-4o"))):
        return _TOOLS_GPT4
    raise MessagesError(f"no published recipe for counting the tools of {model!r} (OpenAI's covers "
                        "gpt-3.5-turbo, gpt-4, gpt-4o and gpt-4o-mini)")


def count_messages(messages, model: str, *, tools=None) -> int:
    """The prompt tokens of a chat completion request with these ``messages`` (and ``tools``)
    for ``model``, by OpenAI's published recipe.

    >>> count_messages([{"role": "user", "content": "hello world"}], model="gpt-4o")
    9

    Raises MessagesError for a request the recipe does not cover, KeyError (UnknownModelError)
    for a model the registry does not know.
    """
    from bytepair import registry
    from bytepair.errors import UnknownModelError

    recipe = recipe_for(model)
    try:
        enc = registry.encoding_for_model(model.rsplit("/", 1)[-1])
    except KeyError:
        raise UnknownModelError(f"unknown model {model!r}") from None

    def n(text: str) -> int:
        return enc.count(text, disallowed_special=())

    if not isinstance(messages, list):
        raise MessagesError(f"messages must be a list of objects, got {type(messages).__name__}")
    total = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise MessagesError(f"message {i}: expected an object, got {type(message).__name__}")
        total += recipe.tokens_per_message
        for key, value in message.items():
            if not isinstance(value, str):
                raise MessagesError(
                    f"message {i}: {key} is {type(value).__name__}, not a string; the published "
                    "recipe counts text messages only (no content parts, images or tool calls)")
            total += n(value)
            if key == "name":
                total += recipe.tokens_per_name
    total += recipe.reply_priming
    if tools:
        total += _count_tools(tools, tool_recipe_for(model), n)
    return total


def _count_tools(tools, r: ToolRecipe, n) -> int:
    if not isinstance(tools, list):
        raise MessagesError(f"tools must be a list, got {type(tools).__name__}")
    total = 0
    for i, tool in enumerate(tools):
        where = f"tool {i}"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            raise MessagesError(f"{where}: expected {{\"type\": \"function\", \"function\": {{...}}}}")
        name, description = function.get("name"), function.get("description")
        if not isinstance(name, str) or not isinstance(description, str):
            raise MessagesError(f"{where}: the recipe needs a string name and description")
        total += r.func_init + n(f"{name}:{_strip_period(description)}")
        properties = (function.get("parameters") or {}).get("properties") or {}
        if not isinstance(properties, dict):
            raise MessagesError(f"{where}: parameters.properties must be an object")
        if properties:
            total += r.prop_init
            for key, prop in properties.items():
                if not isinstance(prop, dict) or not isinstance(prop.get("type"), str) \
                        or not isinstance(prop.get("description"), str):
                    raise MessagesError(f"{where}: property {key!r}: the recipe needs a string "
                                        "type and description")
                total += r.prop_key
                if "enum" in prop:
                    total += r.enum_init
                    for item in prop["enum"]:
                        if not isinstance(item, str):
                            raise MessagesError(f"{where}: property {key!r}: enum values must be strings")
                        total += r.enum_item + n(item)
                total += n(f"{key}:{prop['type']}:{_strip_period(prop['description'])}")
    return total + r.func_end


def _strip_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text
