"""bytepair.count_messages against the counts OpenAI publishes for its counting recipe.

Source: the OpenAI Cookbook notebook "How to count tokens with tiktoken",
https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb
(section 6, "Counting tokens for chat completions API calls", and section 7, "... with tool
calls"): the example messages and tools below are the notebook's, and each count is the one it
prints for both its function and the API's usage.prompt_tokens. The gpt-3.5-turbo-0301 count
(127) is from the notebook's 2023 revision, when that model was still served.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main
from bytepair.errors import MessagesError

EXAMPLE_MESSAGES = [
    {"role": "system",
     "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user",
     "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant",
     "content": "Let's talk later when we're less busy about how to do better."},
    {"role": "user",
     "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."},
]

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "description": "The unit of temperature to return",
                         "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}]

TOOL_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]

# The published prompt_tokens.
PUBLISHED = {"gpt-3.5-turbo-0301": 127, "gpt-3.5-turbo-0613": 129, "gpt-3.5-turbo": 129,
             "gpt-4-0314": 129, "gpt-4-0613": 129, "gpt-4": 129, "gpt-4o": 124, "gpt-4o-mini": 124}
PUBLISHED_WITH_TOOLS = {"gpt-3.5-turbo": 105, "gpt-4": 105, "gpt-4o": 101, "gpt-4o-mini": 101}


@pytest.mark.parametrize("model, count", PUBLISHED.items())
def test_published_message_counts(model, count):
    assert bytepair.count_messages(EXAMPLE_MESSAGES, model=model) == count


@pytest.mark.parametrize("model, count", PUBLISHED_WITH_TOOLS.items())
def test_published_counts_with_tools(model, count):
    assert bytepair.count_messages(TOOL_MESSAGES, model=model, tools=TOOLS) == count


def test_cli_counts_a_request_file(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"messages": TOOL_MESSAGES, "tools": TOOLS}))
    r = CliRunner().invoke(main, ["count", "--messages", str(request), "-m", "gpt-4o"])
    assert r.exit_code == 0 and r.stdout.strip() == "101"
    bare = tmp_path / "messages.json"
    bare.write_text(json.dumps(EXAMPLE_MESSAGES))
    r = CliRunner().invoke(main, ["count", "--messages", str(bare), "-m", "gpt-4", "--json"])
    assert json.loads(r.stdout) == {"model": "gpt-4", "prompt_tokens": 129}


@pytest.mark.parametrize("messages, model, tools, match", [
    (EXAMPLE_MESSAGES, "o3", None, "no published token-counting recipe for 'o3'"),
    ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "gpt-4o", None,
     "message 0: content is list"),
    ("hello", "gpt-4o", None, "must be a list"),
    (TOOL_MESSAGES, "gpt-4.1", TOOLS, "no published recipe for counting the tools"),
    (TOOL_MESSAGES, "gpt-4o", [{"type": "function", "function": {"name": "f"}}], "description"),
])
def test_what_the_recipe_does_not_cover_is_an_error(messages, model, tools, match):
    with pytest.raises(MessagesError, match=match):
        bytepair.count_messages(messages, model=model, tools=tools)


def test_special_token_spellings_in_content_count_as_text():
    enc = bytepair.get_encoding("o200k_base")
    text = "<|endoftext|> is just text in a message"
    n = bytepair.count_messages([{"role": "user", "content": text}], model="gpt-4o")
    assert n == 3 + enc.count("user") + enc.count(text, disallowed_special=()) + 3
