"""Differential fuzzing: bytepair's hand-written pre-tokenizers (and whole encoder) against
tiktoken on generated text, for cl100k_base, o200k_base, Llama 3 and the GPT-2/r50k pattern.

The reference is the real tiktoken (its fancy-regex split and its merge) built over the same
ranks: the shared .tiktoken file when present, else the ranks in bytepair's bundled table (whose
source hash another test pins). Llama 3 runs when llama-models' tokenizer.model is installed;
the r50k pattern (whose vocabularies need a download) and the Llama 3 pattern also run over the
cl100k ranks, which exercises their splitters just as well. Bounded: a few thousand strings per
pattern; benchmarks/fuzz_long.py runs the same comparison for as long as you like.
"""

from __future__ import annotations

import random

import pytest

from support import VOCAB_DIR, require_module

hypothesis = require_module("hypothesis")
tiktoken = require_module("tiktoken")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import bytepair  # noqa: E402
from bytepair import _core  # noqa: E402
from bytepair.registry import llama, openai  # noqa: E402
from bytepair.train import NANOCHAT_PATTERN, RUSTBPE_GPT4_PATTERN  # noqa: E402

from fuzztext import PALETTE, cjk_text, plain_text, random_text  # noqa: E402
N_GENERATED = 2500


def _ranks(name: str) -> dict[bytes, int]:
    path = VOCAB_DIR / f"{name}.tiktoken"
    if path.is_file():
        from tiktoken.load import load_tiktoken_bpe

        return load_tiktoken_bpe(str(path))
    return bytepair.get_encoding(name)._core_bpe.mergeable_ranks()


def _pair(name: str, ranks_of: str, pattern: str, specials: dict[str, int]):
    ranks = _ranks(ranks_of)
    ref = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    ours = bytepair.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    return ref, ours


CASES = {
    "cl100k_base": ("cl100k_base", openai.CL100K_PATTERN, "cl100k"),
    "o200k_base": ("o200k_base", openai.O200K_PATTERN, "o200k"),
    "llama3-pattern": ("cl100k_base", llama.LLAMA3_PATTERN, "llama3"),
    # cl100k as tokenizer.json holds it (no possessive {1,3}, which Oniguruma lacks)
    "cl100k-hf-pattern": ("cl100k_base", _core.PATTERNS["cl100k_hf"], "cl100k_hf"),
    "r50k-pattern": ("cl100k_base", openai.R50K_PATTERN, "r50k"),
    # nanochat's pattern, and the GPT-4 pattern as minbpe/rustbpe write it: hand-written too
    "nanochat-pattern": ("cl100k_base", NANOCHAT_PATTERN, "nanochat"),
    "rustbpe-gpt4-pattern": ("cl100k_base", RUSTBPE_GPT4_PATTERN, "rustbpe"),
    # a family pattern without a hand-written scanner: the exact regex-automata rewrite
    "gpt4-digits4-pattern": ("cl100k_base", RUSTBPE_GPT4_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}{1,4}"), "automata"),
}


@pytest.fixture(scope="module", params=list(CASES))
def pair(request):
    ranks_of, pattern, splitter = CASES[request.param]
    specials = {"<|endoftext|>": 300_000}
    ref, ours = _pair(request.param, ranks_of, pattern, specials)
    # The point of the test: the hand-written splitter runs, not the regex fallback.
    assert ours._core_bpe.splitter == splitter
    return ref, ours


def _check(ref, ours, text: str) -> None:
    want = ref.encode_ordinary(text)
    got = ours.encode_ordinary(text)
    assert got == want, f"{text!r}: {got} != {want}"


def test_generated_strings(pair):
    ref, ours = pair
    rnd = random.Random(20261122)
    for _ in range(N_GENERATED):
        _check(ref, ours, random_text(rnd))


def test_generated_documents_and_specials(pair):
    """Longer texts (many pieces, the per-call piece cache) and encode() with specials."""
    ref, ours = pair
    rnd = random.Random(7)
    for _ in range(40):
        text = "".join(random_text(rnd) for _ in range(50))
        _check(ref, ours, text)
        with_special = text[: len(text) // 2] + "<|endoftext|>" + text[len(text) // 2 :]
        assert ours.encode(with_special, allowed_special="all") == ref.encode(with_special, allowed_special="all")


def test_plain_documents(pair):
    """Long texts of mostly ASCII and Latin-1: the scanners' 64-byte block path (which short
    strings never reach) meeting every kind of boundary, and the odd complex character."""
    ref, ours = pair
    rnd = random.Random(64)
    for _ in range(300):
        _check(ref, ours, plain_text(rnd, rnd.randrange(64, 2000)))


def test_cjk_documents(pair):
    """Long texts of CJK runs from every `Lo` range with punctuation, marks, numbers, spaces
    and cased letters around them: the scanners' three-byte classification, and the block
    path handing windows with CJK near their start to the scalar scanner."""
    ref, ours = pair
    rnd = random.Random(0x4E00)
    for _ in range(150):
        _check(ref, ours, cjk_text(rnd, rnd.randrange(20, 1500)))


def test_long_runs(pair):
    """Single pieces far above the quadratic scan's limit go through the bucket engine."""
    ref, ours = pair
    rnd = random.Random(3)
    for unit in ["a", " ", "\n", "^", " \n", "ab", "中", "\u0301", "1", "'s"]:
        _check(ref, ours, unit * 3000)
    letters = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(20_000))
    _check(ref, ours, letters)
    _check(ref, ours, "".join(chr(rnd.randrange(0x4E00, 0xA000)) for _ in range(5000)))


_chars = st.one_of(
    st.sampled_from(PALETTE),
    st.characters(exclude_categories=("Cs",)),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(parts=st.lists(_chars, max_size=40))
def test_hypothesis_text(parts):
    text = "".join(parts)
    for name in CASES:
        ref, ours = _pairs()[name]
        _check(ref, ours, text)


_PAIRS: dict = {}


def _pairs() -> dict:
    if not _PAIRS:
        for name, (ranks_of, pattern, _) in CASES.items():
            _PAIRS[name] = _pair(name, ranks_of, pattern, {"<|endoftext|>": 300_000})
    return _PAIRS


def test_llama3_vocabulary():
    """The real Llama 3 vocabulary (from llama-models, when installed) against tiktoken over it."""
    from support import require

    try:
        path = llama.find_llama3_vocab()
    except bytepair.errors.VocabularyNotFoundError:
        path = None
    require(path is not None, "llama-models (the Llama 3 vocabulary)")
    from tiktoken.load import load_tiktoken_bpe

    ours = bytepair.get_encoding("llama3")
    assert ours._core_bpe.splitter == "llama3"
    ref = tiktoken.Encoding("llama3", pat_str=llama.LLAMA3_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=llama.llama3_special_tokens())
    rnd = random.Random(11)
    for _ in range(1500):
        _check(ref, ours, random_text(rnd))


def test_custom_pattern_uses_regex():
    enc = bytepair.Encoding("custom", pat_str=r"\w+|\s+|[^\w\s]+", mergeable_ranks=_ranks("cl100k_base"),
                            special_tokens={})
    assert enc._core_bpe.splitter == "regex"
