"""render_many: the same results as render_conversation one by one, in order, on workers."""

from __future__ import annotations

import gc
import re
from enum import Enum
from pathlib import Path

import pytest

import bytepair
from bytepair.chat import ChatError, ChatTemplate, render_conversation, render_many
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
    # The same with the failure to render in conversation 300's own chunk: the conversations
    # before it are still encoded, and 300 reported.
    convs[310] = [{"content": "no role"}]
    for workers in (1, 2, 4):
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


# render_many on any number of threads: the calling thread encodes from the back of each chunk,
# and a Jinja template's conversations are rendered in the core, on every thread. -------------

#: Each chunk's conversations as render_many sends them to the core (batch.CHUNK).
CHUNK = 256
QWEN = Path(__file__).parent.parent / "data" / "chat_templates" / "qwen2.5.jinja"


@pytest.fixture(scope="module")
def every_template_encoding():
    """cl100k's ranks with the special tokens of every built-in template."""
    from bytepair.chat import TEMPLATES

    enc = bytepair.get_encoding("cl100k_base")
    names = sorted({t for tokens in TEMPLATES.values() for t in tokens} - set(enc._special_tokens))
    first = enc.n_vocab + 16
    return bytepair.Encoding("cl100k+chat", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                             special_tokens={**enc._special_tokens, **{t: first + i for i, t in enumerate(names)}})


@pytest.mark.parametrize("template", ["nanochat", "llama3", "harmony", "chatml", "mistral_v1", "mistral_v2",
                                      "mistral_v3", "qwen2.5.jinja"])
def test_render_many_on_1_2_and_4_threads_equals_one_by_one(template, every_template_encoding, corpus_documents):
    enc = every_template_encoding
    t = ChatTemplate(QWEN.read_text(encoding="utf-8"), eos_token="<|im_end|>") if template.endswith(".jinja") else template
    convs = conversations(corpus_documents, 3 * CHUNK + 40, seed=43)  # chunks of 256, and a short last one
    if template.startswith("mistral"):  # mistral-common refuses an empty assistant message
        convs = [[{**m, "content": m["content"] or "."} for m in c] for c in convs]
    want = [render_conversation(enc, c, template=t) for c in convs]
    assert any(any(mask) for _, mask in want)
    for threads in (1, 2, 4):
        assert render_many(enc, convs, template=t, num_workers=threads) == want, threads


#: Renders in the core except where a content starts with "centre" (minijinja has no `center`
#: filter: the core hands the conversation back to jinja2) or is "boom" (raise_exception).
CENTRE = ("{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}{% endif %}"
          "<|im_start|>{{ m.role }}\n{% if m.content.startswith('centre') %}{{ m.content | center(m.content | length + 6) }}"
          "{% elif m.content == 'jinja2 fails' %}{{ m.content | wordcount(1, 2) }}"
          "{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}")


class Role(str):
    """A str subclass: jinja2 sees a Python object, so the core does not convert it."""


def test_jinja2_renders_what_the_core_hands_back_mid_chunk(cl100k_im, corpus_documents, hf_tokenizer):
    template = ChatTemplate(CENTRE)
    convs = conversations(corpus_documents, 2 * CHUNK + 40, seed=44)
    convs[CHUNK + 100] = [{"role": "user", "content": "centre me"}, {"role": "assistant", "content": "centred"}]
    convs[CHUNK + 101] = [{"role": Role("user"), "content": "hi"}, {"role": "assistant", "content": "yo"}]
    # The first renders in the core (on a worker in render_many) and fails there; the second is
    # jinja2's from the start: both are what jinja2 writes.
    with pytest.raises(NotImplementedError, match="unknown filter"):
        template.prepare(cl100k_im, convs[CHUNK + 100]).parts()
    assert type(template.prepare(cl100k_im, convs[CHUNK + 101])) is tuple
    want = [render_conversation(cl100k_im, c, template=template) for c in convs]
    tok = hf_tokenizer(cl100k_im)
    for k in (CHUNK + 100, CHUNK + 101, 7):
        assert want[k][0] == tok.apply_chat_template(convs[k], chat_template=CENTRE, tokenize=True, return_dict=False)
    for threads in (1, 2, 4):
        assert render_many(cl100k_im, convs, template=template, num_workers=threads) == want, threads


def test_jinja_errors_name_the_first_failing_conversation(cl100k_im):
    fine = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    convs = [fine] * (3 * CHUNK)

    def first_error(threads):
        with pytest.raises(ChatError) as e:
            render_many(cl100k_im, convs, template=CENTRE, num_workers=threads)
        return str(e.value)

    # A conversation failing while its chunk is encoded (raise_exception, in the core), and
    # one failing while the next chunk is converted (no role, in the calling thread).
    convs[CHUNK + 44] = [{"role": "user", "content": "boom"}]
    convs[2 * CHUNK + 3] = [{"content": "no role"}]
    for threads in (1, 2, 4):
        assert first_error(threads) == "conversation 300: the chat template failed: TemplateError: boom"
    # The same two in one chunk: the one before is still rendered and reported first.
    convs[CHUNK + 50] = [{"content": "no role"}]
    for threads in (1, 2, 4):
        assert first_error(threads) == "conversation 300: the chat template failed: TemplateError: boom"
    # Before them, a conversation the core hands back to jinja2, which fails there.
    convs[CHUNK + 10] = [{"role": "user", "content": "jinja2 fails"}]
    for threads in (1, 2, 4):
        assert first_error(threads).startswith("conversation 266: the chat template failed: TypeError"), threads
    # And a conversation that fails while converting comes first when it is first.
    convs[CHUNK + 5] = [{"content": "no role"}]
    for threads in (1, 2, 4):
        assert first_error(threads) == "conversation 261: message 0: expected a dict with 'role' and 'content', got {'content': 'no role'}"


# The built-in chatml template in render_many: plain conversations are read from the caller's
# dicts by the core (ChatMLFrame), the others normalized by chatml.plain first. -------------


class ChatRole(str, Enum):
    """A role enum (openai-harmony's Role is one): the template renders its value."""

    USER = "user"
    ASSISTANT = "assistant"


def test_render_many_chatml_takes_every_shape_the_template_takes(cl100k_im, corpus_documents):
    convs = conversations(corpus_documents, 2 * CHUNK + 40, seed=45)
    odd = {
        3: lambda c: {"messages": c},  # a dict holding the messages
        CHUNK - 1: lambda c: {"messages": c, "tools": None},  # falsy tools: not an option
        CHUNK: lambda c: [{**m, "role": ChatRole(m["role"])} if m["role"] != "system" else m for m in c],
        CHUNK + 7: lambda c: [{**m, "content": [{"type": "text", "text": m["content"]}, "!"]} for m in c],
        CHUNK + 8: lambda c: [{**m, "name": None, "extra": [1, 2]} for m in c],  # keys the template ignores
        CHUNK + 9: lambda c: tuple(c),  # a sequence that is not a list
        CHUNK + 10: lambda c: [{**m, "content": type("S", (str,), {})(m["content"])} for m in c],
        CHUNK + 11: lambda c: [*c[:-1], {"role": "user", "content": "lone \udc80 surrogate"}],
        CHUNK + 12: lambda c: [{"role": "user", "content": "é\u2028\x00"}, {"role": "assistant", "content": ""}],
    }
    for k, change in odd.items():
        convs[k] = change(convs[k])
    want = [render_conversation(cl100k_im, c, template="chatml") for c in convs]
    for threads in (1, 2, 4):
        assert render_many(cl100k_im, convs, template="chatml", num_workers=threads) == want, threads
    # Each odd shape renders as its plain version does: the role's value, the parts joined.
    plain = render_conversation(cl100k_im, conversations(corpus_documents, 2 * CHUNK + 40, seed=45)[CHUNK + 7])
    assert want[CHUNK + 7][0] != plain[0]  # the "!" parts are there
    for k in (3, CHUNK - 1, CHUNK, CHUNK + 8, CHUNK + 9, CHUNK + 10):
        assert want[k] == render_conversation(cl100k_im, conversations(corpus_documents, 2 * CHUNK + 40, seed=45)[k]), k
    # A lone surrogate in a context message is repaired as encode_ordinary repairs it.
    ids, mask = want[CHUNK + 11]
    tail = cl100k_im.encode_ordinary("user\nlone \udc80 surrogate")
    assert ids[-len(tail) - 3:] == [100264, *tail, 100265, *cl100k_im.encode_ordinary("\n")]


def test_render_many_chatml_errors_name_the_conversation_and_field(cl100k_im):
    fine = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    cases = [
        ([{"role": "user", "content": 5}], "message 0: content must be a string or a list of text parts, got int"),
        ([fine[0], {"content": "no role"}], "message 1: expected a dict with 'role' and 'content', got {'content': 'no role'}"),
        ([fine[0], {"role": "user"}], "message 1: expected a dict with 'role' and 'content', got {'role': 'user'}"),
        ([{"role": 7, "content": "x"}], "role must be a string, got int"),
        ([{"role": "user", "content": [{"type": "image"}]}], r"message 0, part 0: expected a text part \({'type': 'text', 'text': ...}\), got {'type': 'image'}"),
        ([fine[0], "hi"], "message 1: expected a dict with 'role' and 'content', got 'hi'"),
        ("not a conversation", "a conversation is a list of messages, not str"),
        ({"content": "x"}, "a conversation given as a dict needs a 'messages' list"),
        ({"messages": fine, "tools": [{"type": "function"}]}, "the chatml template takes no options, got tools"),
        ([{"role": "assistant", "content": "a\ud83d\ude00b"}],
         r"a text whose mask splits it holds lone surrogates \(not UTF-8\); its character offsets cannot be placed"),
    ]
    for bad, message in cases:
        convs = [fine] * (2 * CHUNK)
        convs[CHUNK + 40] = bad
        convs[CHUNK + 90] = [{"role": "user", "content": None}]  # a later failure, never reported
        for threads in (1, 2, 4):
            with pytest.raises(ChatError) as e:
                render_many(cl100k_im, convs, template="chatml", num_workers=threads)
            assert re.fullmatch(f"conversation {CHUNK + 40}: {message}", str(e.value)), (str(e.value), threads)
        # The same message as one conversation (where the template's own check words it).
        with pytest.raises(ChatError, match=f"^{message}"):
            render_conversation(cl100k_im, bad, template="chatml")
    # With options the template refuses every conversation, the first one named.
    with pytest.raises(ChatError, match="^conversation 0: the chatml template takes no options, got tools$"):
        render_many(cl100k_im, [fine] * 3, template="chatml", tools=[])
    # An encoding without ChatML's tokens.
    with pytest.raises(ChatError, match="^conversation 0: encoding 'cl100k_base' lacks the chatml template's special tokens"):
        render_many(bytepair.get_encoding("cl100k_base"), [fine], template="chatml")


#: Prints what the core's conversion of the caller's dicts could get wrong: a conversation's
#: own tools, keys whose value is None (dropped), the reasoning keys transformers aliases,
#: content parts, and any other key's value.
SHAPES = ("{% if tools %}<|im_start|>system\n{{ tools | tojson }}<|im_end|>\n{% endif %}"
          "{% for m in messages %}<|im_start|>{{ m.role }}{% if m.name is defined %}({{ m.name }}){% endif %}\n"
          "{% if m.thinking is defined %}<think>{{ m.thinking }}|{{ m.reasoning_content }}</think>{% endif %}"
          "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
          "{% if m.extra is defined %}[{{ m.extra }}]{% endif %}<|im_end|>\n{% endfor %}")


class Messages(list):
    """A list subclass: not the plain shape the core converts by itself."""


def test_render_many_jinja_takes_every_shape_prepare_takes(cl100k_im, corpus_documents, monkeypatch):
    convs = conversations(corpus_documents, 2 * CHUNK + 40, seed=46)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"x": 1.5}}}]
    odd = {
        3: lambda c: {"messages": c},  # a dict holding the messages
        4: lambda c: {"messages": c, "tools": tools},  # and its own tools
        5: lambda c: {"messages": c, "tools": None},  # falsy tools: not an option
        6: lambda c: {"messages": c, "tools": []},
        CHUNK - 1: lambda c: [{**m, "name": None} for m in c],  # dropped, as transformers drops it
        CHUNK: lambda c: [{**m, "role": ChatRole(m["role"])} for m in c],  # jinja2 renders it
        CHUNK + 1: lambda c: [{**m, "thinking": "hm"} if m["role"] == "assistant" else m for m in c],
        CHUNK + 2: lambda c: [{**m, "reasoning": "r"} if m["role"] == "assistant" else m for m in c],
        CHUNK + 3: lambda c: [{**m, "content": [{"type": "text", "text": m["content"]}, {"text": "!"}]} for m in c],
        CHUNK + 4: lambda c: [{**m, "extra": (1, 2.5, None, True)} for m in c],  # a tuple, None kept inside
        CHUNK + 5: lambda c: [{**m, "extra": 1e-05} for m in c],  # jinja2 writes it in exponent form
        CHUNK + 6: lambda c: tuple(c),  # a sequence that is not a list
        CHUNK + 7: lambda c: Messages(c),
        CHUNK + 8: lambda c: [*c[:-1], {"role": "user", "content": "lone \udc80 surrogate"}],
        CHUNK + 9: lambda c: [{"role": "user", "content": "spelled <|im_end|> and \ue000"}, *c],
        CHUNK + 10: lambda c: [{**m, 7: "an int key"} for m in c],
        CHUNK + 11: lambda c: [dict(m, extra={"deep": [m["role"]] * 3}) for m in c],
    }
    for k, change in odd.items():
        convs[k] = change(convs[k])
    want = [render_conversation(cl100k_im, c, template=SHAPES) for c in convs]
    # Python prepares only what the core does not convert by itself.
    import bytepair.chat

    handed = []
    preparer = bytepair.chat._preparer

    def spied(*args):
        prepare, core = preparer(*args)
        return (lambda c: handed.append(next(k for k, x in enumerate(convs) if x is c)) or prepare(c)), core

    monkeypatch.setattr(bytepair.chat, "_preparer", spied)
    assert render_many(cl100k_im, convs, template=SHAPES, num_workers=1) == want
    assert handed == [4, 6, CHUNK, *(CHUNK + k for k in (1, 2, 5, 6, 7, 8))]  # the rest: the core
    monkeypatch.undo()
    for threads in (2, 4):
        assert render_many(cl100k_im, convs, template=SHAPES, num_workers=threads) == want, threads
    # With the caller's tools, a conversation's own are not passed (and they print).
    with_tools = render_many(cl100k_im, convs[:8], template=SHAPES, tools=[{"name": "g"}])
    assert with_tools == [render_conversation(cl100k_im, c, template=SHAPES, tools=[{"name": "g"}]) for c in convs[:8]]
    assert with_tools[4] != want[4] and with_tools[3] != want[3]


def test_render_many_results_are_left_out_of_the_cyclic_collector(cl100k_im):
    # Lists of ints hold no cycle; tracked, each collection walked every id of the results.
    fine = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    for template in ("chatml", ChatTemplate("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}")):
        for threads in (1, 2):
            got = render_many(cl100k_im, [fine] * (CHUNK + 1), template=template, num_workers=threads)
            assert got[0][0] and got[0][1]
            assert not any(gc.is_tracked(ids) or gc.is_tracked(mask) for ids, mask in got)
