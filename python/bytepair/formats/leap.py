"""LEAP / llama2.c scored vocabularies (``tokenizer.bin``): ``max_token_length`` (i32), then per
token id a score (f32), a length (i32) and the bytes. Read and written in Rust
(``crates/core/src/formats/leap.rs``).

The file records neither the vocabulary size, nor which tokens are special, nor BOS/EOS:
llama2.c hard-codes BOS = 1 and EOS = 2, and so does :func:`load` when those ids hold ``<s>``
and ``</s>``.

A rank vocabulary exports with score = -rank (``Encoding.save(path, format="leap")``). Such a
byte-level table (all 256 single bytes, no ``<0xHH>`` pieces) is encoded from bytes, so score
BPE merges the lowest rank first, leftmost on ties: within one pre-tokenized piece, exactly
tiktoken's ids. (llama2.c would start from characters, which differs on rare inputs such as
``"\x80µ"``.) The split pattern, the special tokens and holes in the id range cannot be carried.
"""

from __future__ import annotations

from bytepair import _core
from bytepair.errors import FormatError, VocabError
from bytepair.encoding import Encoding


def load(data: bytes, source: str = "<bytes>", name: str = "leap",
         dummy_prefix: bool | None = None) -> Encoding:
    """``dummy_prefix``: prepend a space to non-empty text as llama2.c does; by default on for
    tables that look like llama2.c's (``<s>`` at id 1), off otherwise (rank exports)."""
    try:
        core = _core.Tokenizer.from_leap(data, dummy_prefix)
    except (FormatError, VocabError) as e:
        if isinstance(e, FormatError):
            e.path = source
            raise
        raise FormatError(str(e), "tokens", source) from None
    # llama2.c has no special-token spellings in text: BOS/EOS come from add_bos/add_eos.
    return Encoding._from_core(name, core, None, source_format="leap", source=data,
                               load_options={"dummy_prefix": dummy_prefix} if dummy_prefix is not None else None,
                               default_allowed=None, default_disallowed=None)


def dumps_encoding(enc) -> bytes:
    """A rank Encoding as a LEAP table with score = -rank (mergeable tokens only)."""
    ranks = enc._mergeable_ranks
    n = len(ranks)
    by_rank = [b""] * n
    for token, rank in ranks.items():
        if rank >= n:
            raise ValueError(f"LEAP cannot hold holes in the id range: rank {rank} of {n} tokens")
        by_rank[rank] = token
    core = _core.Tokenizer.from_scored([(t, -float(r)) for r, t in enumerate(by_rank)])
    return core.to_leap()
