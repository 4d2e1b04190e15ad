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
