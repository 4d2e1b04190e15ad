"""Parity with the reference tokenizers on hand-picked inputs where pre-tokenizers go wrong."""

from __future__ import annotations

import pytest

EDGE_CASES = [
    "",
    " ",
    "\n",
    "\r\n",
    "\r\n\r\n\r\n  \r\n",
    "a\r\nb\r\n\r\nc",
    "hello   \n\n  world",
    "trailing spaces   ",
    "   leading",
    "tabs\t\t\tand\u00a0nbsp\u2028line sep\u3000ideographic space",
    "1234567890 12 123 1234 12345 ١٢٣٤٥ ๑๒๓",
    "3.14159e-10 0x1F 1,000,000",
    "it's I'M we'VE they'll she'd 'tis ''quoted''",
    "DON'T Don't don't DoN'T",
    "Ünïcödé façade naïve Ångström",
    "日本語のテキストと漢字、ひらがな。",
    "한국어 텍스트 中文文本 العربية עברית",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🇩🇪 ❤️ 🫠",
    "combining e\u0301 a\u0308 \u0915\u094d\u0937",
    "<|endoftext|> in the middle <|endoftext|>",
    "<|endoftext|",
    "<<|endoftext|>>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>",
    "<|eot_id|><|start_header_id|>user<|end_header_id|>",
    "def foo(x):\n    return x ** 2  # comment\n\n\n",
    '{"key": [1, 2, 3], "nested": {"a": null}}',
    "https://example.com/path?q=1&r=2#frag",
    "a" * 1000,
    " " * 1000 + "x",
    "\n" * 500,
    "ab" * 700,
    "!@#$%^&*()_+-=[]{}|;':\",./<>?`~",
    "mixed/slashes\\and//double",
    "x\u200by\u200dz\ufeff",
    "\x00\x01\x02 control \x7f",
]


@pytest.mark.parametrize("text", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_case(pair, text):
    ours, ref = pair
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.count(text, allowed_special="all") == len(ref.encode(text, allowed_special="all"))
    # The default refuses special-token spellings; both must agree on whether it raises.
    try:
        want = ref.encode(text)
    except ValueError:
        with pytest.raises(ValueError, match="disallowed special token"):
            ours.encode(text)
    else:
        assert ours.encode(text) == want


LONE_SURROGATES = ["\ud800", "abc\udfffdef", "\ud83d\ude00 paired as two", "x\ud800\ud800y"]


@pytest.mark.parametrize("text", LONE_SURROGATES)
def test_surrogates_replaced_like_reference(pair, text):
    ours, ref = pair
    assert ours.encode(text) == ref.encode(text)
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode_batch([text, "ok"]) == [ref.encode(text), ref.encode("ok")]


def test_partial_allowed_special(pair):
    ours, ref = pair
    specials = sorted(ref.special_tokens_set)
    one = specials[0]
    text = f"a{specials[-1]}b{one}c"
    assert ours.encode(text, allowed_special={one}, disallowed_special=()) == ref.encode(
        text, allowed_special={one}, disallowed_special=()
    )
    if specials[-1] != one:
        with pytest.raises(ValueError) as got:
            ours.encode(text, allowed_special={one})
        with pytest.raises(ValueError) as want:
            ref.encode(text, allowed_special={one})
        assert str(got.value) == str(want.value)


def test_disallowed_subset(pair):
    ours, ref = pair
    specials = sorted(ref.special_tokens_set)
    text = f"x {specials[0]} y"
    with pytest.raises(ValueError):
        ref.encode(text, disallowed_special={specials[0]})
    with pytest.raises(ValueError):
        ours.encode(text, disallowed_special={specials[0]})
    other = [s for s in specials if s != specials[0]][:1]
    assert ours.encode(text, disallowed_special=other) == ref.encode(text, disallowed_special=other)


def test_single_token_and_piece_helpers(pair):
    ours, ref = pair
    for tok in [b"hello", b" world", b"\n", b"!"]:
        assert ours.encode_single_token(tok) == ref.encode_single_token(tok)
    for special in list(ref.special_tokens_set)[:5]:
        assert ours.encode_single_token(special) == ref.encode_single_token(special)
    with pytest.raises(KeyError):
        ours.encode_single_token(b"definitely not one token at all")
    for piece in [b"helloqqqq", b"\xff\xfe\x00abc", "naïveté".encode()]:
        assert ours._encode_single_piece(piece) == ref._encode_single_piece(piece)
