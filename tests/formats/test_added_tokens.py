"""HF added tokens with their flags (`lstrip`, `rstrip`, `single_word`, `normalized`, `special`):
ids identical to `tokenizers` on hand-picked texts that exercise each flag and on Hypothesis
text built from the same fragments.

Each case is a small tokenizer.json built here from a golden file (byte-level BPE, or a
Llama-style byte-fallback model under each of its pipelines) with added tokens appended at the
next free ids, so HF gives them the ids the file states (checked first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

import bytepair

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
SPACE = "\u2581"


def added(content, special=False, lstrip=False, rstrip=False, single_word=False, normalized=None):
    return {"content": content, "special": special, "lstrip": lstrip, "rstrip": rstrip,
            "single_word": single_word, "normalized": (not special) if normalized is None else normalized}


# Each flag alone and in combination; tokens overlap so raw/normalized order and leftmost-longest
# matching both matter.
TOKENS = [
    added("<mask>", special=True, lstrip=True),
    added("<r>", special=True, rstrip=True),
    added("[both]", special=True, lstrip=True, rstrip=True),
    added("sw", single_word=True),
    added("<w>", special=True, single_word=True, lstrip=True),
    added("hello", normalized=True),
    added("lo wo", normalized=False),
    added("ell", normalized=True, single_word=True),
    added("é!", normalized=True, rstrip=True),
]

FRAGMENTS = ["<mask>", "<r>", "[both]", "sw", "<w>", "hello", "lo wo", "ell", "é!", " ", "  ", "\t", "\n",
             "\u2000", "a", "x", "é", "_", "-", "1", "\u0301", "world", "<", ">", "s", "w", "he", "!"]

TEXTS = [
    "I saw a <mask> here", "a  \t<mask>", "<mask><mask>", "x <r>  y", "<r>\t\u2000z", "a [both] b", "[both]",
    "sw", "a sw b", "asw", "swb", "sw_", "-sw-", "1sw", "é sw", "sw\u0301", "<w> x<w> <w>y <w>",
    "hello world", "hellohello", "say hello", "yellow", "shell", "ell", " ell ", "ell_", "hello wo",
    "lo world", "é! x", "é!", "café!  !", "", " ", "  <mask>  ", "<r><r>  <mask>",
]


def doc_with(base: str, tokens: list[dict], **changes) -> dict:
    doc = json.loads((GOLDEN / base).read_text(encoding="utf-8"))
    doc.update(changes)
    model = doc["model"]
    next_id = max(max(model["vocab"].values()), max((t["id"] for t in doc["added_tokens"]), default=-1)) + 1
    for k, t in enumerate(tokens):
        doc["added_tokens"].append({"id": next_id + k, **t})
    return doc


LLAMA_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": SPACE},
    {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}

CASES = {
    "byte_level": ("tiny_hf.json", {}),
    "byte_level_prefix_space": ("tiny_hf.json", {"pre_tokenizer": {
        "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}}),
    "metaspace_first": ("tiny_hf_fallback.json", {}),
    "metaspace_always": ("tiny_hf_fallback.json", {"pre_tokenizer": {
        "type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": False}}),
    "llama_normalizer": ("tiny_hf_fallback.json", {"pre_tokenizer": None, "normalizer": LLAMA_NORMALIZER}),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, tmp_path_factory):
    base, changes = CASES[request.param]
    path = tmp_path_factory.mktemp("added") / "tokenizer.json"
    doc = doc_with(base, TOKENS, **changes)
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    ref = Tokenizer.from_file(str(path))
    for t in doc["added_tokens"]:
        assert ref.token_to_id(t["content"]) == t["id"], t  # HF kept the ids the file states
    return ref, bytepair.load(path)


def hf_ids(ref: Tokenizer, text: str) -> list[int]:
    return ref.encode(text, add_special_tokens=False).ids


def test_flags_on_chosen_texts(pair):
    ref, ours = pair
    mismatches = [t for t in TEXTS if ours.encode(t) != hf_ids(ref, t)]
    assert mismatches == [], [(t, ours.encode(t), hf_ids(ref, t)) for t in mismatches[:3]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join))
def test_flags_on_hypothesis_text(pair, text):
    ref, ours = pair
    assert ours.encode(text) == hf_ids(ref, text)


def test_batch_matches_hf_batch(pair):
    ref, ours = pair
    assert ours.encode_batch(TEXTS, num_threads=2) == [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=False)]


def test_special_tokens_as_text_like_hf_encode_special_tokens(pair):
    """``disallowed_special=()`` with nothing allowed takes special spellings as text, which is
    HF's ``encode_special_tokens = True`` (non-special added tokens still match)."""
    ref, ours = pair
    ref.encode_special_tokens = True
    try:
        want = [hf_ids(ref, t) for t in TEXTS]
    finally:
        ref.encode_special_tokens = False
    assert [ours.encode(t, allowed_special=set(), disallowed_special=()) for t in TEXTS] == want
    assert [ours.encode_ordinary(t) for t in TEXTS] == want


def test_disallowed_special_raises_naming_the_token(pair):
    _, ours = pair
    with pytest.raises(ValueError, match="<r>"):
        ours.encode("a <r> b", allowed_special=set())
    with pytest.raises(ValueError, match=r"\[both\]"):
        ours.encode("[both]", allowed_special={"<r>"})
    # Allowed tokens split out; the other special spelling is text when not disallowed.
    ids = ours.encode("<r>[both]", allowed_special={"<r>"}, disallowed_special=())
    assert ids[0] == ours.encode_single_token("<r>") and ours.encode_single_token("[both]") not in ids
    with pytest.raises(ValueError, match="<r>"):
        ours.encode_batch(["fine", "a <r>"], allowed_special=set())
