"""The Rust engine (minijinja, crates/core/src/chat/jinja.rs) against jinja2 set up as
transformers sets it up: the same rendered text for the five published templates over the
corpus conversations (with tools, special spellings in the contents, broken role orders that
make the templates raise), for template features one at a time, and for any message content
(Hypothesis). A conversation rendered by jinja2 (the fallback) and by the Rust engine, both
framed by the core (chat/frame.rs): the same parts and trains.

The Rust engine is called directly (``_core.JinjaTemplate``), so a render it hands back to
jinja2 (NotImplementedError) fails these tests instead of passing through the fallback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair.chat import ChatError, ChatTemplate
from bytepair.chat.jinja import _compile_jinja2, _prepare, _specials
from chat_cases import WEATHER_TOOL, conversations
from support import require_module

require_module("jinja2")
import jinja2  # noqa: E402

TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "chat_templates"
# Each template's own special tokens (added to the encoding so the frame comparison splits at them).
SPECIALS = {
    "gemma.jinja": ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"],
    "llama3.1.jinja": ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                       "<|eom_id|>", "<|python_tag|>"],
    "mistral-instruct-v0.1.jinja": ["<s>", "</s>"],
    "phi3.jinja": ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"],
    "qwen2.5.jinja": ["<|im_start|>", "<|im_end|>"],
}
TOKENS = {"gemma.jinja": ("<bos>", "<eos>"), "llama3.1.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
          "mistral-instruct-v0.1.jinja": ("<s>", "</s>"), "phi3.jinja": (None, "<|endoftext|>"),
          "qwen2.5.jinja": (None, "<|im_end|>")}
CHATML_MARKED = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + '<|im_end|>' }}"
    "{% endgeneration %}{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}{{ '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def _encoding(specials):
    enc = bytepair.get_encoding("cl100k_base")
    first = enc.n_vocab + 16
    return bytepair.Encoding("cl100k+engine", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                             special_tokens={**enc._special_tokens, **{t: first + i for i, t in enumerate(specials)}})


def _template_and_encoding(file):
    """A published template (or the ChatML one with {% generation %}) and cl100k with its specials."""
    if file == "chatml-generation":
        source, specials, tokens = CHATML_MARKED, ["<|im_start|>", "<|im_end|>"], {}
    else:
        source, specials, tokens = (TEMPLATES / file).read_text(encoding="utf-8"), SPECIALS[file], _tokens(file)
    return ChatTemplate(source, **tokens), _encoding(specials)


def _tokens(file):
    bos, eos = TOKENS[file]
    return {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v}


def _both(source: str, context: dict):
    """(jinja2's text or its error message, the Rust engine's text or its error message)."""
    try:
        want = _compile_jinja2(source).render(**context)
    except jinja2.TemplateError as e:
        want = f"TemplateError: {e}"
    try:
        got = _core.JinjaTemplate(source).render(context)
    except ChatError as e:
        got = re.sub(r"^the chat template failed: ", "", str(e))
    return want, got


@pytest.fixture(scope="module")
def cases(corpus_documents):
    """Conversations: clean ones with tool calls, ones whose contents spell special tokens and
    the private-use markers, and ones with broken role orders (the templates raise)."""
    out = conversations(corpus_documents, 25, seed=11, tools=True)
    out += conversations(corpus_documents, 15, seed=12, clean=False, alternate=False)
    specials = [t for ts in SPECIALS.values() for t in ts]
    out += [[{"role": "user", "content": f"a {s} b \ue000{s}\ue001 \ue002c\ue003"},
             {"role": "assistant", "content": f"{s}"}] for s in specials]
    return out


@pytest.mark.parametrize("file", sorted(SPECIALS))
def test_rust_renders_what_jinja2_renders(file, cases):
    source = (TEMPLATES / file).read_text(encoding="utf-8")
    raised = 0
    for k, msgs in enumerate(cases):
        for add_generation_prompt in (False, True):
            context = {**_tokens(file), "messages": _prepare(msgs), "tools": [WEATHER_TOOL] if k % 3 == 0 else None,
                       "documents": None, "add_generation_prompt": add_generation_prompt}
            if k % 2 and file == "llama3.1.jinja":
                context["date_string"] = "26 Jul 2024"  # else strftime_now("%d %b %Y"): both today
            want, got = _both(source, context)
            assert got == want, (file, msgs)
            raised += want.startswith("TemplateError: ")
    # The broken conversations must reach raise_exception in the templates that check roles.
    assert raised or file in ("llama3.1.jinja", "qwen2.5.jinja", "phi3.jinja")


@pytest.mark.parametrize("file", sorted(SPECIALS) + ["chatml-generation"])
def test_jinja2_fallback_parts_equal_the_core_engines(file, cases):
    """The jinja2 fallback's parts (jinja2 renders, the core marks and frames) == the Rust
    engine's, masks and errors included."""
    template, enc = _template_and_encoding(file)
    checked = 0
    for k, msgs in enumerate(cases):
        tools = [WEATHER_TOOL] if k % 3 == 0 else None
        for mask in (True, False):
            try:
                want = template._parts_jinja2("test", enc, _specials(enc), _prepare(msgs), False, mask, tools, None, {})
            except ChatError as e:
                with pytest.raises(ChatError, match=re.escape(str(e)[:60])):
                    template.parts(enc, msgs, mask=mask, tools=tools)
                continue
            assert template.parts(enc, msgs, mask=mask, tools=tools) == want, msgs
            checked += 1
    assert checked > len(cases)  # most conversations render (the rest raise in both)


FEATURES = [
    "{{ x | tojson }}|{{ x | tojson(indent=2) }}|{{ x | tojson(indent='\t', sort_keys=true) }}",
    "{{ x | tojson(separators=(',', ':')) }}|{{ x | tojson(ensure_ascii=true) }}|{{ x.s | tojson(true) }}",
    "{{ f }} {{ f | string }} {{ 0.1 + 0.2 }} {{ n }} {{ b }} {{ none }} [{{ missing }}] {{ 3 / 2 }} {{ 7 // 2 }} {{ 2 ** 10 }}",
    "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.upper() }}|{{ s.title() }}|{{ s.replace('a', 'b') }}|{{ s.split() | join(',') }}",
    "{{ s.startswith(' ') }} {{ s.endswith(('x', 'é ')) }} {{ 'é' in s }} {{ s | trim | capitalize }} {{ s[1:4] }} {{ s | length }}",
    "{% for k, v in x.items() %}{{ k }}={{ v | tojson }};{% endfor %}{{ x.get('n', 'dflt') }} {{ x.get('q', 'dflt') }}",
    "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ loop.index }}{{ i }}{% endfor %}",
    "{% set ns = namespace(found=false, n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% if m.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}",
    "{{ messages | selectattr('role', 'equalto', 'user') | list | length }} {{ messages | map(attribute='role') | join(', ') }} {{ messages[-1].content[:5] }}",
    "{% if x is mapping %}map{% endif %}{% if x.l is iterable %} it{% endif %}{% if s is string %} str{% endif %}{% if n is number %} num{% endif %}{% if missing is defined %} def{% endif %}{% if none is none %} none{% endif %}",
    "{{ 'a' ~ 1 ~ none ~ true }} {{ 'x' * 3 }} {{ [1, 2] | length }} {{ x | length }} {{ x.l | first }} {{ x.l[1] }} {{ x.l[:3] | last }}",
    "{%- for m in messages -%}\n  {%- if loop.first %}[{{ m.role }}]{% endif %}\n  {{ m.content }}\n{% endfor %}\n  {% if true %}\nend\n  {% endif %}\n",
    "{% macro line(m) %}{{ m.role | upper }}: {{ m.content }}\n{% endmacro %}{% for m in messages %}{{ line(m) }}{% endfor %}",
    "{{ raise_exception('Only user and assistant roles are supported!') }}",
    "{{ z | default('D') }}|{{ missing | default('D') }}|{{ '' | default('D') }}|{{ z | default('D', true) }}|{{ missing is none }}|{{ z is none }}|{{ z is defined }}",
    "{{ 10 / 5 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ '%.2f' | format(f) }} {{ f | int }} {{ '3.5' | int }} {{ f | round(1) }} {{ 2.5 | round }} {{ 0.5 | round }} {{ -3 | abs }} {{ 2 ** 0.5 }}",
    "{{ t | capitalize }}|{{ t | title }}|{{ t.upper() }}|{{ t.lower() }}|{{ t.find('l') }}|{{ t.count('l') }}|{{ t[::-1] }}|{{ t | replace('l', 'L', 1) }}|{{ t | indent(2, true) }}|{{ '<a>&' | e }}",
    "{{ (x.l[:1] + [5, 4]) | sort | join }} {{ [3, 1, 2] | max }} {{ [3, 1, 2] | min }} {{ [3, 1, 2] | sum }} {% for k, v in x.d | dictsort %}{{ k }}{{ v }}{% endfor %} {% for i in [3, 1] %}{{ loop.revindex }}{{ loop.previtem }}{{ loop.length }}{% endfor %}",
    # Python's whitespace counts U+001C..U+001F, Rust's does not; line breaks differ too.
    "{{ w | trim }}|{{ w.strip() }}|{{ w.lstrip() }}|{{ w.rstrip() }}|{{ w.split() | join(',') }}|{{ w.isspace() }}",
    "{{ w.splitlines() | join('/') }}|{{ w.splitlines(true) | length }}|{{ w.strip('\x1c\x1f') }}|{{ w | trim('\x1c') }}",
]
FEATURE_CONTEXT = {
    "x": {"s": "a<b>&\"q\" é 東京 \U0001F600\n\t\x01", "n": 1, "f": 2.5, "z": None, "t": True, "l": [1, 2.0, "3", [], {}],
          "d": {"b": 1, "a": 2}, "big": 10 ** 20, "neg": -0.0},
    "w": "\x1c\x1f\x85\u2028\u3000 a\u200b b\x0b\x0c\x1d\r\nc\x1ed\r",
    "z": None, "t": "hÉllo wORLD they're",
    "f": 2.5, "n": 42, "b": False, "s": " a é ",
    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello world"}],
}


@pytest.mark.parametrize("source", FEATURES)
def test_template_features(source):
    want, got = _both(source, FEATURE_CONTEXT)
    assert got == want


@pytest.mark.parametrize("source", ["{{ x }}", "{{ x.l }}", "{{ messages[0] }}", "{{ 'a' | list | string }}",
                                    "{{ 'd: ' ~ x.d }}", "{{ x.l | join(',') }}", "{{ '%s' | format(messages) }}"])
def test_printing_a_container_falls_back_to_jinja2(source):
    """jinja2 writes a list or dict as its Python repr: the core refuses it rather than write
    something else (printed, or a caller's one turned into text by `~`, join or format), and
    the ChatTemplate renders that call with jinja2."""
    with pytest.raises(NotImplementedError, match="printing a|turned into text"):
        _core.JinjaTemplate(source).render(FEATURE_CONTEXT)
    template = ChatTemplate(source)
    want = _compile_jinja2(source).render(**FEATURE_CONTEXT, tools=None, documents=None, add_generation_prompt=False)
    assert template.render_text(FEATURE_CONTEXT["messages"], x=FEATURE_CONTEXT["x"]) == want


def test_values_jinja2_sees_as_python_objects_fall_back():
    class Role(str):
        pass

    with pytest.raises(NotImplementedError, match="type Role"):
        _core.JinjaTemplate("{{ r }}").render({"r": Role("user")})
    with pytest.raises(NotImplementedError, match="lone surrogates"):
        _core.JinjaTemplate("{{ r }}").render({"r": "a\ud800"})
    template = ChatTemplate("{% for m in messages %}{{ m.role }}{% endfor %}")
    assert template.render_text([{"role": Role("user")}]) == "user"


@pytest.mark.parametrize("file", ["qwen2.5.jinja", "chatml-generation"])
def test_lone_surrogates_frame_as_any_other_character(file):
    """jinja2 renders strings the core cannot take as UTF-8 (lone surrogates); the fallback
    frames them as it frames any character: the parts equal those of the conversation with a
    plain character in each surrogate's place. Characters from the supplementary private-use
    planes, where the surrogates are stood in for, stay what they are."""
    template, enc = _template_and_encoding(file)
    stand_ins = {"\ud83d": "\u2460", "\ude00": "\u2461", "\udc80": "\u2462"}
    contents = ["a\ud83d\ude00b", "\udc80<|im_end|>\U000f0000\U000f0001", "\ud83d", "\U000f0000\ud83d\ue002"]
    msgs = [{"role": r, "content": c} for r, c in zip(["system", "user", "assistant", "user", "assistant"], ["s", *contents])]
    plain = [{**m, "content": m["content"].translate(str.maketrans(stand_ins))} for m in msgs]
    back = str.maketrans({v: k for k, v in stand_ins.items()})
    for mask in (True, False):
        for gen in (True, False):
            want_parts, want_trains = template._parts_jinja2("test", enc, _specials(enc), _prepare(plain), gen, mask,
                                                             None, None, {})
            assert not any(isinstance(p, str) and "\ud83d" in p for p in want_parts)
            got = template._parts_jinja2("test", enc, _specials(enc), _prepare(msgs), gen, mask, None, None, {})
            assert got == ([p.translate(back) if isinstance(p, str) else p for p in want_parts], want_trains)
            assert any(isinstance(p, str) and "\ud83d" in p for p in got[0])
            assert any(isinstance(p, str) and "\U000f0001" in p for p in got[0])
            assert any(t not in (0, 1) for t in got[1]) or not mask  # a partial mask: offsets in play


@pytest.mark.parametrize("x", [1e20, 1.5e-7, -3e-9, float("inf"), float("nan")])
def test_floats_python_writes_in_exponent_form_fall_back(x):
    """`~`, `join` and `format` write a float with minijinja's Display, positional where Python
    writes `1e-05`; the core refuses such a float in the context, so the text is jinja2's."""
    source = "{{ x }}|{{ 'x=' ~ x }}|{{ [x, 1] | join(',') }}"
    with pytest.raises(NotImplementedError, match="exponent form"):
        _core.JinjaTemplate(source).render({"x": x})
    messages = [{"role": "user", "content": "hi"}]
    want = _compile_jinja2(source).render(x=x, messages=messages, tools=None, documents=None, add_generation_prompt=False)
    assert ChatTemplate(source).render_text(messages, x=x) == want


CONTENT = st.lists(st.sampled_from(list("ab \n\t<|>é東_\r\x0b\x1c\x1f\x85\u2028\u3000") + ["<|im_end|>", "<start_of_turn>", "</s>", "[INST]",
                                                            "\ue000", "\ue001", "\ue002", "{{", "%}"]),
                   max_size=20).map("".join)


@settings(max_examples=60, deadline=None)
@given(contents=st.lists(CONTENT, min_size=1, max_size=5), file=st.sampled_from(sorted(SPECIALS)),
       system=st.booleans(), add_generation_prompt=st.booleans())
def test_any_content_renders_as_jinja2_renders(contents, file, system, add_generation_prompt):
    roles = ["user", "assistant"]
    msgs = ([{"role": "system", "content": "be brief "}] if system else []) + \
        [{"role": roles[k % 2], "content": c} for k, c in enumerate(contents)]
    source = (TEMPLATES / file).read_text(encoding="utf-8")
    context = {**_tokens(file), "messages": _prepare(msgs), "tools": None, "documents": None,
               "add_generation_prompt": add_generation_prompt, "date_string": "26 Jul 2024"}
    want, got = _both(source, context)
    assert got == want


@pytest.mark.parametrize("source", ["{{ s | center(9) }}|{{ s | wordcount }}", "{{ s.rsplit(' ', 1) | join('+') }}",
                                    "{{ '%s!' % s }}", "{% set café = s %}{{ café }}"])
def test_what_minijinja_lacks_renders_with_jinja2(source):
    """A filter, Python method or operator minijinja lacks (a render error there), and syntax
    its parser refuses: the call renders with jinja2, as transformers renders it."""
    context = {"s": "a é b", "messages": [{"role": "user", "content": "x"}]}
    try:
        _core.JinjaTemplate(source).render(context)
        raise AssertionError("minijinja rendered it: the case tests nothing")
    except (NotImplementedError, ChatError):
        pass
    want = _compile_jinja2(source).render(**context, tools=None, documents=None, add_generation_prompt=False)
    assert ChatTemplate(source).render_text(context["messages"], s=context["s"]) == want


def test_without_jinja2_the_core_errors_are_chat_errors(monkeypatch):
    msgs = [{"role": "user", "content": "x"}]
    monkeypatch.setitem(__import__("sys").modules, "jinja2", None)  # `import jinja2` fails
    with pytest.raises(ChatError, match="unknown filter"):
        ChatTemplate("{{ s | center(9) }}").render_text(msgs, s="a")
    with pytest.raises(ChatError, match="needs jinja2 .printing a map"):
        ChatTemplate("{{ messages[0] }}").render_text(msgs)
    with pytest.raises(ChatError, match="not valid Jinja"):
        ChatTemplate("{% set café = 1 %}")
    assert ChatTemplate("{{ messages[0].content }}").render_text(msgs) == "x"


@settings(max_examples=60, deadline=None)
@given(contents=st.lists(CONTENT, min_size=1, max_size=5), marked=st.booleans(), mask=st.booleans(),
       add_generation_prompt=st.booleans())
def test_any_content_splits_as_the_python_frame_splits(contents, marked, mask, add_generation_prompt):
    """The core's marking, split and spans == the Python path's, on contents that spell special
    tokens and private-use markers, with and without {% generation %}."""
    source = CHATML_MARKED if marked else (TEMPLATES / "qwen2.5.jinja").read_text(encoding="utf-8")
    enc = _encoding(["<|im_start|>", "<|im_end|>", "<start_of_turn>"])
    template = ChatTemplate(source, eos_token="<|im_end|>")
    msgs = [{"role": ["user", "assistant"][k % 2], "content": c} for k, c in enumerate(contents)]
    try:
        want = template._parts_jinja2("test", enc, _specials(enc), _prepare(msgs), add_generation_prompt, mask,
                                      None, None, {})
    except ChatError as e:
        with pytest.raises(ChatError, match=re.escape(str(e)[:60])):
            template.parts(enc, msgs, mask=mask, add_generation_prompt=add_generation_prompt)
        return
    assert template.parts(enc, msgs, mask=mask, add_generation_prompt=add_generation_prompt) == want
