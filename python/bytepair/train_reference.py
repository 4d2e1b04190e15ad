"""The BPE training algorithm in plain Python: the specification the fast trainer must match.

Readable rather than fast: every merge recounts every pair, so use it on small corpora only.
``bytepair.train`` (Rust, incremental) must produce the same ranks, byte for byte; the tests
check that. Splitting uses the ``regex`` module (tiktoken's own dependency), so the comparison
also checks the Rust pre-tokenizer.

The algorithm (docs/training.md states it with its edge cases):

1. Split each document with the pattern; count each distinct chunk.
2. Tokens 0-255 are the single bytes; each chunk starts as its bytes.
3. Repeat until there are ``vocab_size - len(special_tokens)`` tokens:
   count every adjacent pair (each position, weighted by its chunk's count); take the pair with
   the highest count, ties to the smallest ``(left id, right id)``; stop if that count is below
   ``min_frequency``; replace its occurrences in every chunk, left to right, without overlap
   (``a a a`` with the pair ``(a, a)`` gives ``aa a``). The merged bytes become the next id,
   unless they are already a token (two merges can spell the same bytes), whose id is reused.
4. Special tokens take the ids after the last token, in the order given.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence


def count_chunks(texts: Iterable[str], pattern: str) -> Counter[bytes]:
    """``{chunk bytes: count}`` over all documents (chunks never span two documents).

    >>> count_chunks(["ab ab"], r"\\w+|\\s")
    Counter({b'ab': 2, b' ': 1})
    """
    import regex

    from bytepair.train import resolve_pattern

    compiled = regex.compile(resolve_pattern(pattern))
    counts: Counter[bytes] = Counter()
    for text in texts:
        for piece in compiled.findall(text):
            if piece:
                counts[piece.encode("utf-8")] += 1
    return counts


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replaces each occurrence of ``pair`` in ``ids``, left to right, without overlap.

    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> merge([7, 7, 7], (7, 7), 9)
    [9, 7]
    """
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_from_counts(
    chunk_counts: dict[bytes, int], n_tokens: int, min_frequency: int = 1
) -> list[bytes]:
    """The token list (index = id) learned from chunk counts, up to ``n_tokens`` tokens."""
    vocab = [bytes([b]) for b in range(256)]
    ids_of = {tok: i for i, tok in enumerate(vocab)}
    words = [(list(chunk), n) for chunk, n in chunk_counts.items() if len(chunk) >= 2]
    while len(vocab) < n_tokens:
        pair_counts: Counter[tuple[int, int]] = Counter()
        for ids, n in words:
            for pair in zip(ids, ids[1:]):
                pair_counts[pair] += n
        if not pair_counts:
            break
        # Highest count first; among equal counts, the smallest pair.
        best = min(pair_counts, key=lambda p: (-pair_counts[p], p))
        if pair_counts[best] < max(min_frequency, 1):
            break
        token = vocab[best[0]] + vocab[best[1]]
        if token not in ids_of:
            ids_of[token] = len(vocab)
            vocab.append(token)
        new_id = ids_of[token]
        words = [(merge(ids, best, new_id), n) for ids, n in words]
    return vocab


def train_reference(
    texts: Iterable[str],
    vocab_size: int,
    *,
    pattern: str = "gpt4",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
) -> tuple[dict[bytes, int], dict[str, int]]:
    """``(mergeable_ranks, special_tokens)`` as :func:`bytepair.train` must return them."""
    counts = count_chunks(texts, pattern)
    vocab = train_from_counts(counts, vocab_size - len(special_tokens), min_frequency)
    ranks = {tok: i for i, tok in enumerate(vocab)}
    specials = {s: len(vocab) + i for i, s in enumerate(special_tokens)}
    return ranks, specials
