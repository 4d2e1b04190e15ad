"""The trainer against rustbpe (karpathy/rustbpe, a test dependency) on the real corpora.

rustbpe implements the same algorithm (window pair counts weighted by chunk counts,
non-overlapping left-to-right merges, max count with ties to the smallest pair, lazy heap), so
on the same documents and the same pattern the ranks must be identical. Where the two differ
by design (docs/training.md: rustbpe has no min_frequency or special tokens, counts in 32 bits
and would list a token twice if two merges spelled the same bytes) these tests stay on the
common ground. Also: the same ranks for any thread count and on repeated runs, and the result
encodes exactly as tiktoken does with the same ranks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from bytepair.train import NANOCHAT_PATTERN, RUSTBPE_GPT4_PATTERN, resolve_pattern

from support import CORPORA, CORPUS_DIR, require, require_module

rustbpe = require_module("rustbpe")

# rustbpe's default pattern (minbpe's form of the GPT-4 pattern; tests/parity/test_patterns.py
# checks it is rustbpe's).
RUSTBPE_GPT4 = RUSTBPE_GPT4_PATTERN


def corpus_dir() -> Path:
    require(CORPUS_DIR.is_dir(), f"the corpora in {CORPUS_DIR} (set BYTEPAIR_CORPUS_DIR)")
    return CORPUS_DIR


def lines(name: str, limit: int | None = None) -> list[str]:
    out, size = [], 0
    with open(corpus_dir() / f"{name}.txt", encoding="utf-8") as f:
        for line in f:
            out.append(line)
            size += len(line)
            if limit and size >= limit:
                break
    return out


def rustbpe_ranks(texts, vocab_size, pattern) -> dict[bytes, int]:
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(texts), vocab_size=vocab_size, pattern=pattern)
    pairs = [(bytes(b), r) for b, r in tok.get_mergeable_ranks()]
    ranks = dict(pairs)
    assert len(ranks) == len(pairs), "rustbpe made the same bytes twice; not comparable"
    return ranks


def ours(texts, vocab_size, pattern, threads=None):
    return bytepair.train(texts, vocab_size, pattern=pattern, num_threads=threads, show_progress=False)


@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("pattern", [RUSTBPE_GPT4, "gpt4", "o200k", "nanochat"])
def test_corpus_slices_vocab_2048(name, pattern):
    texts = lines(name, 1_000_000)
    pat = resolve_pattern(pattern)
    assert ours(texts, 2048, pat)._mergeable_ranks == rustbpe_ranks(texts, 2048, pat)


def test_mixed_jsonl_documents_vocab_4096():
    with open(corpus_dir() / "mix.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    assert ours(texts, 4096, NANOCHAT_PATTERN)._mergeable_ranks == rustbpe_ranks(texts, 4096, NANOCHAT_PATTERN)


def test_whole_corpus_vocab_8192():
    texts = lines("en") + lines("code") + lines("de")
    assert ours(texts, 8192, RUSTBPE_GPT4)._mergeable_ranks == rustbpe_ranks(texts, 8192, RUSTBPE_GPT4)


def test_same_result_for_any_thread_count_and_run():
    texts = lines("de", 400_000) + lines("code", 400_000)
    first = ours(texts, 3000, "gpt4", threads=1)
    for threads in (1, 2, 3, 8):
        again = ours(texts, 3000, "gpt4", threads=threads)
        assert again._mergeable_ranks == first._mergeable_ranks
        assert again.merges == first.merges


def test_trained_encoding_encodes_like_tiktoken():
    tiktoken = require_module("tiktoken")
    texts = lines("en", 300_000) + lines("code", 300_000)
    enc = bytepair.train(texts, 2000, special_tokens=["<|endoftext|>"], show_progress=False)
    ref = tiktoken.Encoding("ref", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                            special_tokens=enc._special_tokens)
    sample = "".join(lines("de", 200_000))
    assert enc.encode(sample) == ref.encode(sample)
    assert enc.decode(enc.encode(sample)) == sample
    assert enc.encode("<|endoftext|>", allowed_special="all") == [1999]
