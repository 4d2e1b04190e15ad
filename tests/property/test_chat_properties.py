"""Chat rendering on any conversation (Hypothesis): the Python fuzz target issue 15 asks for
beside load, encode/decode and the stream decoder.

For ChatML on cl100k with tiktoken's ChatML ids, whatever the roles and contents (any
character, special-token spellings, empty, newlines): the ids decode to exactly the ChatML
text, the only special tokens are the frame's own (a spelling in a message stays text), the
mask has one 0/1 per id and marks nothing when no assistant speaks, and ``render_many``, on one
thread or two, gives what ``render_conversation`` gives. A lone surrogate becomes U+FFFD in a
message that is not trained and is a ``ChatError`` in one that is.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.chat import ChatError, render_conversation, render_many

SPELLINGS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "assistant", "user", "\n", " ", "é", "日本", "😀", "a"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80) | st.lists(
    st.sampled_from(SPELLINGS), max_size=12).map("".join)
MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": TEXT})
CONVERSATION = st.lists(MESSAGE, min_size=1, max_size=5)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def enc():
    from bytepair.chat.chatml import with_chatml_tokens

    return with_chatml_tokens(bytepair.get_encoding("cl100k_base"))


@SETTINGS
@given(conversation=CONVERSATION)
def test_chatml_renders_exactly_its_text_with_only_its_own_specials(enc, conversation):
    ids, mask = render_conversation(enc, conversation)
    want = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in conversation)
    assert enc.decode(ids) == want
    specials = [enc.decode([i]) for i in ids if enc.is_special_token(i)]
    assert specials == ["<|im_start|>", "<|im_end|>"] * len(conversation)
    assert len(mask) == len(ids) and set(mask) <= {0, 1}
    if all(m["role"] != "assistant" for m in conversation):
        assert not any(mask)


@SETTINGS
@given(conversations=st.lists(CONVERSATION, max_size=6), threads=st.sampled_from([1, 2]))
def test_render_many_is_render_conversation(enc, conversations, threads):
    assert render_many(enc, conversations, num_workers=threads) == [render_conversation(enc, c) for c in conversations]


@SETTINGS
@given(before=TEXT, after=TEXT, surrogate=st.sampled_from(["\ud800", "\udfff", "\udc80"]))
def test_lone_surrogates_are_replaced_or_a_chat_error(enc, before, after, surrogate):
    # A message that is not trained is encoded as encode does (a lone surrogate becomes U+FFFD,
    # as in tiktoken); an assistant message, whose mask needs character offsets, is refused.
    ids, _ = render_conversation(enc, [{"role": "user", "content": before + surrogate + after}])
    assert enc.decode(ids) == f"<|im_start|>user\n{before}\ufffd{after}<|im_end|>\n"
    with pytest.raises(ChatError, match="lone surrogates"):
        render_conversation(enc, [{"role": "assistant", "content": before + surrogate + after}])


#: Prints every field a message has, so a value the core's conversion of the caller's dicts
#: (``JinjaPreparer.convert``) got wrong would show: each key and value (a container turns into
#: text here, which jinja2 renders), the conversation's tools, and the mask's placement.
FIELDS = ("{% if tools %}<|im_start|>system\n{{ tools | tojson }}<|im_end|>\n{% endif %}"
          "{% for m in messages %}<|im_start|>{{ m.role }}\n{% for k, v in m | items %}{% if k != 'role' %}"
          "{{ k }}={{ v | tojson }};{% endif %}{% endfor %}{% if m.content is string %}{{ m.content }}{% endif %}"
          "<|im_end|>\n{% endfor %}")
SCALAR = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.sampled_from([0.5, 1e-05, 1e20, -0.0, 3.25])
          | TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
                     | st.dictionaries(st.sampled_from(["a", "b", "c"]) | st.integers(0, 3), inner, max_size=3),
                     max_leaves=6)
EXTRA = st.dictionaries(st.sampled_from(["name", "thinking", "reasoning", "extra", "tool_calls"]), VALUE, max_size=2)
FIELD_MESSAGE = st.builds(lambda m, extra: {**m, **extra}, MESSAGE, EXTRA)
SHAPED = st.lists(FIELD_MESSAGE, max_size=4).flatmap(lambda messages: st.sampled_from([
    messages, {"messages": messages}, {"messages": messages, "tools": [{"name": "f"}]}, tuple(messages)]))


@SETTINGS
@given(conversations=st.lists(SHAPED, max_size=6), threads=st.sampled_from([1, 2]))
def test_render_many_jinja_is_render_conversation_on_any_values(enc, conversations, threads):
    # The core converts the plain conversations itself and Python the others; either way the
    # results are render_conversation's, and the first error is the first failing
    # conversation's, named for it.
    results, first_error = {}, None
    for i, c in enumerate(conversations):
        try:
            results[i] = render_conversation(enc, c, template=FIELDS)
        except ChatError as e:
            first_error = first_error or f"conversation {i}: {e}"
    fine = [conversations[i] for i in results]
    assert render_many(enc, fine, template=FIELDS, num_workers=threads) == list(results.values())
    if first_error:
        with pytest.raises(ChatError) as raised:
            render_many(enc, conversations, template=FIELDS, num_workers=threads)
        assert str(raised.value) == first_error
