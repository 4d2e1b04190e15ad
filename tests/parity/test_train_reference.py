"""The Rust trainer against the plain Python reference trainer (bytepair.train_reference):
the same ranks, byte for byte, on hand-made corpora that force ties and overlapping pairs,
on Hypothesis corpora, and on slices of the real corpora."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.train_reference import merge, train_reference
from support import CORPORA, CORPUS_DIR, require


def corpus_lines(name: str, limit: int) -> list[str]:
    path = CORPUS_DIR / f"{name}.txt"
    require(path.is_file(), f"{path} (set BYTEPAIR_CORPUS_DIR)")
    out, size = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.append(line)
            size += len(line)
            if size >= limit:
                break
    return out


def check(texts, vocab_size, **kw):
    threads = kw.pop("num_threads", None)
    ranks, specials = train_reference(texts, vocab_size, **kw)
    enc = bytepair.train(texts, vocab_size, num_threads=threads, show_progress=False, **kw)
    assert enc._mergeable_ranks == ranks
    assert enc._special_tokens == specials
    return enc


HAND_MADE = {
    "overlap": ["aaaa"],
    "overlap runs": ["a", "aa", "aaa", "aaaa", "aaaaa", "aaaaaaa", "baaab aabaa"],
    "all ties": ["ab cd ef gh", "ba dc fe hg"],
    "tie with overlap": ["abab abab", "bbbb", "aaaa"],
    "alternating": ["abababababa", "babababab"],
    "repeated merges": ["hello hello hello world world", "help helmet hell"],
    "unicode": ["naïve café ñandú", "日本語の日本語", "🙂🙂🙂 🙃"],
    "whitespace": ["a  b   c\n\n\n  d\t\te", "   ", "\n"],
}


@pytest.mark.parametrize("name", sorted(HAND_MADE))
@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "o200k", "llama3", "nanochat"])
def test_hand_made_until_exhausted(name, pattern):
    # vocab_size beyond what the corpus can make: training runs until no pair is left.
    check(HAND_MADE[name], 1000, pattern=pattern)


@pytest.mark.parametrize("vocab_size", [256, 257, 258, 260, 270])
def test_small_vocab_sizes(vocab_size):
    check(HAND_MADE["tie with overlap"] + HAND_MADE["repeated merges"], vocab_size)


def test_special_tokens_take_the_ids_after_the_merges():
    enc = check(["aaaa bbbb"], 262, special_tokens=["<|bos|>", "<|eos|>"])
    assert enc._special_tokens == {"<|bos|>": 260, "<|eos|>": 261}
    assert enc.n_vocab == 262


@pytest.mark.parametrize("min_frequency", [1, 2, 3, 5, 100])
def test_min_frequency(min_frequency):
    check(["the cat the hat the bat", "a cat sat", "aaaa"], 1000, min_frequency=min_frequency)


def test_custom_pattern():
    check(["x=1+22 y=333 ; z"], 1000, pattern=r"\d|[a-z]+|\s+|[^\sa-z\d]+")


def test_ids_are_contiguous_and_bytes_unique():
    # Runs of one letter merge with themselves in overlapping ways (aa+a, a+aa, aa+aa ...).
    texts = ["baaa", "baaa", "baaa", "aaac", "aaa", "aaa", "aaa aaaaa aaaaaaa", "abababa"]
    enc = check(texts, 1000, pattern=r"\S+|\s+")
    assert sorted(enc._mergeable_ranks.values()) == list(range(len(enc._mergeable_ranks)))


def test_merge_helper_examples():
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert merge([7, 7, 7, 7], (7, 7), 9) == [9, 9]
    assert merge([7, 7, 7], (7, 7), 9) == [9, 7]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab c\n", max_size=40), max_size=12),
    extra=st.integers(0, 40),
    min_frequency=st.integers(1, 3),
    threads=st.sampled_from([1, 2, 3]),
)
def test_hypothesis_small_alphabet(texts, extra, min_frequency, threads):
    # A three-letter alphabet makes ties and overlapping pairs the rule, not the exception.
    if not "".join(texts):
        return  # an empty corpus is an error, tested in tests/hostile
    check(texts, 256 + extra, pattern="gpt4", min_frequency=min_frequency, num_threads=threads)


# Characters assigned in this Python's Unicode version (unassigned code points may be letters in
# the newer tables of the Rust or `regex` engines), no surrogates.
ANY_CHAR = st.characters(exclude_categories=("Cs", "Cn", "Co"))


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.text(ANY_CHAR, max_size=30), min_size=1, max_size=8), extra=st.integers(0, 30))
def test_hypothesis_any_text(texts, extra):
    if not "".join(texts):
        return
    check(texts, 256 + extra, pattern="gpt2")


@pytest.mark.parametrize("name", CORPORA)
def test_real_corpus_slices(name):
    lines = corpus_lines(name, 30_000)
    check(lines, 256 + 200, pattern="gpt4")
