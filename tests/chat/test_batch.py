"""render_many: the same results as render_conversation one by one, in order, on workers."""

from __future__ import annotations

import pytest

import bytepair
from bytepair.chat import ChatError, render_conversation, render_many
from chat_cases import conversations


def test_render_many_equals_one_by_one(cl100k_im, corpus_documents):
    convs = conversations(corpus_documents, 600, seed=41)
    want = [render_conversation(cl100k_im, c) for c in convs]
    assert render_many(cl100k_im, convs, num_workers=2) == want
    assert render_many(cl100k_im, convs, num_workers=1) == want
    limited = render_many(cl100k_im, convs, num_workers=2, max_tokens=100, drop_long=True)
    assert limited == [w if len(w[0]) <= 100 else None for w in want]
    assert None in limited
    cut = render_many(cl100k_im, convs, num_workers=2, max_tokens=100)
    assert cut == [(ids[:100], mask[:100]) for ids, mask in want]


def test_render_many_with_a_jinja_template_on_workers(cl100k_im, corpus_documents):
    source = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}{% generation %}"
              "{{ m.content }}<|im_end|>{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}")
    convs = conversations(corpus_documents, 600, seed=42)
    got = render_many(cl100k_im, convs, template=source, num_workers=2)
    assert got == [render_conversation(cl100k_im, c, template=source) for c in convs]
    assert any(any(mask) for _, mask in got)


def test_render_many_errors_name_the_conversation(cl100k_im):
    convs = [[{"role": "user", "content": "x"}]] * 400 + [[{"role": "user", "content": 5}]]
    with pytest.raises(ChatError, match="conversation 400: message 0: content must be a string"):
        render_many(cl100k_im, convs, num_workers=2)
    with pytest.raises(ChatError, match="drop_long needs max_tokens"):
        render_many(bytepair.get_encoding("o200k_harmony"), convs, drop_long=True)
