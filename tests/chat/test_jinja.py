"""Jinja chat templates against transformers' apply_chat_template(tokenize=True), on five
published templates (tests/data/chat_templates) over tokenizers built offline from our own
vocabularies (cl100k, o200k with the templates' special tokens added).

ids: equal to transformers' on the unchanged template, with and without the generation prompt.
mask: bytepair finds each assistant message's part itself (no {% generation %} in these
templates); it must equal transformers' return_assistant_tokens_mask on a copy of the template
with {% generation %} put around the assistant's content and end-of-turn token, and bytepair
must give the same mask from that marked copy.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import bytepair
from bytepair.chat import (
    ChatError,
    ChatTemplate,
    load_chat_template,
    render_conversation,
    render_for_completion,
    render_many,
    stop_tokens,
)
from chat_cases import WEATHER_TOOL, conversations
from support import require_module

require_module("jinja2")
TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "chat_templates"


def _encoding(base: str, specials: list[str]) -> bytepair.Encoding:
    enc = bytepair.get_encoding(base)
    first = enc.n_vocab + 16
    return bytepair.Encoding(f"{base}+chat", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                             special_tokens={**enc._special_tokens,
                                             **{t: first + i for i, t in enumerate(specials)}})


# (template file, vocabulary, added special tokens, bos, eos, conversation options,
#  [(text in the template, the same with {% generation %} markers)])
CASES = {
    "llama3.1": ("llama3.1.jinja", "o200k_base",
                 ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                  "<|eom_id|>", "<|python_tag|>"],
                 "<|begin_of_text|>", "<|eot_id|>", dict(tools=True),
                 [("""        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}""",
                   """        {%- if message.role == 'assistant' %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% generation %}{{- message['content'] | trim + '<|eot_id|>' }}{% endgeneration %}{%- else %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}{%- endif %}"""),
                  ("""            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}
            {{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}
        {%- endif %}
        {%- if builtin_tools is defined %}
            {#- This means we're in ipython mode #}
            {{- "<|eom_id|>" }}
        {%- else %}
            {{- "<|eot_id|>" }}
        {%- endif %}""",
                   """            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}
            {% generation %}{{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}{{- "<|eot_id|>" }}{% endgeneration %}
        {%- endif %}""")]),
    "qwen2.5": ("qwen2.5.jinja", "cl100k_base", ["<|im_start|>", "<|im_end|>"],
                None, "<|im_end|>", dict(tools=True),
                [("""    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}""",
                  """    {%- if message.role == "assistant" and not message.tool_calls %}{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}
    {%- elif (message.role == "user") or (message.role == "system" and not loop.first) %}"""),
                 ("""        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}""",
                  """        {{- '<|im_start|>' + message.role + '\\n' }}{% generation %}
        {%- if message.content %}
            {{- message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {%- if message.content or not loop.first %}{{- '\\n' }}{%- endif %}
            {{- '<tool_call>\\n{"name": "' }}"""),
                 ("""            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}""",
                  """            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}""")]),
    "mistral": ("mistral-instruct-v0.1.jinja", "cl100k_base", ["<s>", "</s>"], "<s>", "</s>", dict(system=0),
                [("{{ message['content'] + eos_token}}",
                  "{% generation %}{{ message['content'] + eos_token}}{% endgeneration %}")]),
    "gemma": ("gemma.jinja", "o200k_base", ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"],
              "<bos>", "<eos>", dict(system=0),
              [("{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}",
                "{% if role == 'model' %}{{ '<start_of_turn>model\n' }}{% generation %}{{ message['content'] | trim + '<end_of_turn>' }}{% endgeneration %}{{ '\n' }}"
                "{% else %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endif %}")]),
    "phi3": ("phi3.jinja", "cl100k_base", ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"],
             None, "<|endoftext|>", dict(),
             [("{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}",
               "{{'<|assistant|>\n'}}{% generation %}{{ message['content'] + '<|end|>' }}{% endgeneration %}{{ '\n' }}")]),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, hf_tokenizer, corpus_documents):
    file, base, specials, bos, eos, conv_options, marks = CASES[request.param]
    source = (TEMPLATES / file).read_text(encoding="utf-8")
    marked = source
    for old, new in marks:
        assert marked.count(old) == 1, (file, old)
        marked = marked.replace(old, new)
    enc = _encoding(base, specials)
    tokens = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v}
    tok = hf_tokenizer(enc, **tokens)
    tools = conv_options.get("tools", False)
    convs = conversations(corpus_documents, 60, seed=sorted(CASES).index(request.param), tools=tools,
                          system=conv_options.get("system", 0.5))
    # The cases must hold what they are meant to test.
    assert any(m["role"] == "assistant" for c in convs for m in c)
    assert not tools or any("tool_calls" in m for c in convs for m in c)
    return request.param, enc, tok, ChatTemplate(source, **tokens), ChatTemplate(marked, **tokens), \
        source, marked, convs, tools


def test_ids_and_mask_match_transformers(case):
    name, enc, tok, template, marked, source, marked_source, convs, tools = case
    kwargs = {"date_string": "25 Nov 2026"} if name == "llama3.1" else {}
    for k, msgs in enumerate(convs):
        call_tools = [WEATHER_TOOL] if tools and k % 2 else None
        ids, mask = render_conversation(enc, msgs, template=template, tools=call_tools, **kwargs)
        want = tok.apply_chat_template(msgs, chat_template=marked_source, tokenize=True, return_dict=True,
                                       return_assistant_tokens_mask=True, tools=call_tools, **kwargs)
        assert ids == tok.apply_chat_template(msgs, chat_template=source, tokenize=True, return_dict=False,
                                              tools=call_tools, **kwargs), msgs
        assert ids == want["input_ids"]
        assert mask == want["assistant_masks"], msgs
        assert render_conversation(enc, msgs, template=marked, tools=call_tools, **kwargs) == (ids, mask)
        prompt = msgs[:-1]
        assert render_for_completion(enc, prompt, template=template, tools=call_tools, **kwargs) == \
            tok.apply_chat_template(prompt, chat_template=source, tokenize=True, return_dict=False,
                                    add_generation_prompt=True, tools=call_tools, **kwargs)


def test_special_spellings_in_content_stay_text(case):
    """Every special token of the encoding, spelled at the end of every message, stays text:
    the special ids are exactly the frame's (those of the clean conversation), and the ids
    decode to transformers' rendered text."""
    name, enc, tok, template, _, source, _, convs, tools = case
    kwargs = {"date_string": "25 Nov 2026"} if name == "llama3.1" else {}
    spellings = " ".join(sorted(enc.special_tokens_set - {f"<|reserved_{i}|>" for i in range(300000)}))
    for msgs in convs[:20]:
        clean_ids, _ = render_conversation(enc, msgs, template=template, **kwargs)
        evil = [dict(m, content=(m["content"] or "") + spellings) if isinstance(m.get("content"), str) else m
                for m in msgs]
        ids, mask = render_conversation(enc, evil, template=template, **kwargs)
        frame = [i for i in ids if enc.is_special_token(i)]
        assert frame == [i for i in clean_ids if enc.is_special_token(i)]
        assert len(mask) == len(ids)
        assert enc.decode(ids) == tok.apply_chat_template(evil, chat_template=source, tokenize=False, **kwargs)


def test_stop_tokens_and_loading(case, tmp_path):
    import json

    name, enc, _, template, _, source, _, _, _ = case
    eot = {"llama3.1": ["<|eot_id|>", "<|eom_id|>"], "qwen2.5": ["<|im_end|>"], "mistral": ["</s>"],
           "gemma": ["<end_of_turn>", "<eos>"], "phi3": ["<|end|>", "<|endoftext|>"]}[name]
    assert sorted(stop_tokens(enc, template=template)) == sorted(enc.encode_single_token(t) for t in eot)
    config = {"chat_template": source, **{k: v for k, v in template.special_tokens_map.items()}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    loaded = load_chat_template(tmp_path / "tokenizer.json")
    assert loaded.source == source and loaded.special_tokens_map == template.special_tokens_map
    (tmp_path / "chat_template.jinja").write_text("{{ 'jinja file wins' }}")
    assert load_chat_template(tmp_path).source == "{{ 'jinja file wins' }}"


def test_template_errors_are_chat_errors(tmp_path):
    enc = bytepair.get_encoding("cl100k_base")
    msgs = [{"role": "user", "content": "x"}]
    with pytest.raises(ChatError, match="not valid Jinja"):
        render_conversation(enc, msgs, template="{% for %}")
    with pytest.raises(ChatError, match="the chat template failed: TemplateError: nope"):
        render_conversation(enc, msgs, template="{{ raise_exception('nope') }}")
    with pytest.raises(ChatError, match="SecurityError"):
        render_conversation(enc, msgs, template="{{ messages.__class__.__mro__ }}{{ ''.__class__.__subclasses__() }}")
    with pytest.raises(ChatError, match="no chat template in"):
        load_chat_template(tmp_path)
    with pytest.raises(ChatError, match="cannot be found; add {% generation %}"):
        # The system line depends on whether the conversation ends here: no prefix to find.
        render_conversation(enc, [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}],
                            template="{{ messages | length }}{% for m in messages %}{{ m.content }}<|endoftext|>{% endfor %}")


def test_hostile_templates_fail_cleanly():
    enc = bytepair.get_encoding("cl100k_base")
    msgs = [{"role": "user", "content": "x"}]
    with pytest.raises(ChatError, match="recursion too deep"):
        render_conversation(enc, msgs, template="{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}")
    with pytest.raises(ChatError, match="the chat template failed"):
        render_conversation(enc, msgs, template="{% for i in range(10**9) %}{% endfor %}")
    with pytest.raises(ChatError, match="SecurityError"):
        render_conversation(enc, msgs, template="{% set ns = namespace(_x=1) %}")
    # A tag opener whose own `%` once closed it (a panic in the {% generation %} rewrite,
    # found by fuzz/run.sh): refused as jinja2 refuses it.
    with pytest.raises(ChatError, match="not valid Jinja"):
        render_conversation(enc, msgs, template="{%}{% generation %}")


def test_masks_that_split_a_sentencepiece_run_are_refused():
    from support import mistral_model

    enc = bytepair.load(mistral_model("tokenizer.model.v1"))
    source = "{% for m in messages %}{{ m.role }}: {% generation %}{{ m.content }}{% endgeneration %}</s>{% endfor %}"
    with pytest.raises(ChatError, match="SentencePiece-style"):
        render_conversation(enc, [{"role": "assistant", "content": "hello"}], template=source)


def test_a_conversation_dict_passes_its_tools(corpus_documents):
    enc = _encoding("cl100k_base", ["<|im_start|>", "<|im_end|>"])
    qwen = ChatTemplate((TEMPLATES / "qwen2.5.jinja").read_text(encoding="utf-8"))
    msgs = conversations(corpus_documents, 1, seed=5, tools=True)[0]
    with_tools = render_conversation(enc, msgs, template=qwen, tools=[WEATHER_TOOL])
    assert render_conversation(enc, {"messages": msgs, "tools": [WEATHER_TOOL]}, template=qwen) == with_tools
    assert with_tools != render_conversation(enc, msgs, template=qwen)
    with pytest.raises(ChatError, match="the llama3 template takes no options, got tools"):
        render_conversation(bytepair.get_encoding("llama3"), {"messages": msgs, "tools": [WEATHER_TOOL]})


# The benchmark's ChatML template (benchmarks/chat.py) is message-local: it reads `messages` only
# as its loop and `add_generation_prompt` only after it, so the core takes each assistant
# message's generation prompt from the conversation's one rendering (crates/core/src/chat/
# prompts.rs) instead of rendering the conversation before it. transformers' mask comes from
# the copy with {% generation %} around each assistant content and end of turn.
CHATML_PLAIN = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
                "+ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
CHATML_GENERATION = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + '<|im_end|>' }}"
    "{% endgeneration %}{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}{{ '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def test_a_message_local_templates_mask_matches_transformers(cl100k_im, hf_tokenizer, corpus_documents):
    tok = hf_tokenizer(cl100k_im)
    convs = conversations(corpus_documents, 200, seed=23, alternate=False)
    # Where the prompts must land besides alternating turns: an assistant message first, two
    # in a row, an empty one, content starting with a newline (merges with the header's).
    convs += [[{"role": "assistant", "content": "first"}, {"role": "user", "content": "u"}],
              [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"},
               {"role": "assistant", "content": ""}, {"role": "assistant", "content": "\nb"}]]
    template = ChatTemplate(CHATML_PLAIN)
    got = render_many(cl100k_im, convs, template=template, num_workers=2)
    assert got == [render_conversation(cl100k_im, c, template=template) for c in convs]
    for msgs, (ids, mask) in zip(convs, got):
        want = tok.apply_chat_template(msgs, chat_template=CHATML_GENERATION, tokenize=True, return_dict=True,
                                       return_assistant_tokens_mask=True)
        assert ids == want["input_ids"], msgs
        assert mask == want["assistant_masks"], msgs
    assert render_many(cl100k_im, convs, template=ChatTemplate(CHATML_GENERATION), num_workers=1) == got
