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


def _reference(enc, parts, trains):
    """What the templates did before encode_parts: each text through encode_ordinary, and for
    a text with spans the mask from the tokens' byte offsets (the former ``run_ids``)."""
    from bisect import bisect_left, bisect_right
    from itertools import accumulate

    ids, mask = [], []
    for part, train in zip(parts, trains):
        if isinstance(part, int):
            ids.append(part)
            mask.append(train)
            continue
        run = enc.encode_ordinary(part)
        if not isinstance(train, list):
            ids += run
            mask += [train] * len(run)
            continue
        ends = list(accumulate(len(b) for b in enc.decode_tokens_bytes(run)))
        run_mask = [0] * len(run)
        for s, e in train:
            b_start, b_end = len(part[:s].encode()), len(part[:e].encode())
            first, last = bisect_right(ends, b_start), min(bisect_left(ends, b_end), len(run) - 1)
            run_mask[first:last + 1] = [1] * max(0, last + 1 - first)
        ids += run
        mask += run_mask
    return ids, mask


def test_encode_parts_equals_encoding_each_text(cl100k_im, corpus_documents):
    import random

    from bytepair.chat._render import encode_parts

    rng = random.Random(7)
    docs = corpus_documents[:300]
    rendered = []
    for _ in range(400):
        parts, trains = [], []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.4:
                parts.append(rng.choice([100264, 100265, 100257]))
                trains.append(rng.randint(0, 1))
                continue
            doc = rng.choice(docs)
            start = rng.randrange(len(doc))
            text = rng.choice(["", "assistant\n", "\n", " "]) + doc[start:start + rng.choice([1, 5, 80, 700])]
            cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 2 * rng.randint(1, 3))))
            spans = [(s, e) for s, e in zip(cuts[::2], cuts[1::2]) if s < e]
            parts.append(text)
            trains.append(rng.choice([0, 1, spans]) if spans else rng.randint(0, 1))
        rendered.append((parts, trains))
    want = [_reference(cl100k_im, p, t) for p, t in rendered]
    assert any(isinstance(t, list) for _, ts in rendered for t in ts)
    assert encode_parts(cl100k_im, rendered, 1) == want
    assert encode_parts(cl100k_im, rendered, 2) == want


def test_errors_come_in_conversation_order_across_chunks():
    from support import mistral_model

    enc = bytepair.load(mistral_model("tokenizer.model.v1"))
    source = ("{% for m in messages %}{{ m.role }}: {% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
              "{% endgeneration %}{% else %}{{ m.content }}{% endif %}</s>{% endfor %}")
    fine = [{"role": "user", "content": "hello"}]
    convs = [fine] * 700
    convs[610] = [{"content": "no role"}]
    with pytest.raises(ChatError, match="conversation 610: message 0: expected a dict with 'role'"):
        render_many(enc, convs, template=source, num_workers=2)
    # Conversation 300's mask cannot be placed (SentencePiece): found while encoding, after
    # conversation 610 was rendered, and still reported first.
    convs[300] = [{"role": "assistant", "content": "hello"}]
    for workers in (1, 2):
        with pytest.raises(ChatError, match="conversation 300: encoding .* SentencePiece-style"):
            render_many(enc, convs, template=source, num_workers=workers)


def test_a_partial_mask_on_lone_surrogates_is_refused(cl100k_im):
    # Repairing a split surrogate pair would shift the mask's character offsets.
    convs = [[{"role": "assistant", "content": "ok"}]] * 3 + [[{"role": "assistant", "content": "a\ud83d\ude00b"}]]
    with pytest.raises(ChatError, match="conversation 3: a text whose mask splits it holds lone surrogates"):
        render_many(cl100k_im, convs, num_workers=1)
    with pytest.raises(ChatError, match="^a text whose mask splits it holds lone surrogates"):
        render_conversation(cl100k_im, convs[3])


def test_a_chat_job_gives_encode_chats_result_once(cl100k_im):
    rendered = [([100264, "user\nhi"], [0, 0]), (["assistant\n\nHi", 100265], [[(10, 13)], 1])]
    job = cl100k_im._core_bpe.encode_chat_start(rendered, 2)
    assert job.result() == cl100k_im._core_bpe.encode_chat(rendered, 1)
    with pytest.raises(RuntimeError, match="already taken"):
        job.result()
