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
                               load_options={"dummy_prefix": dummy_prefix} if dummy_prefix is not None else None)


def dumps_encoding(enc) -> tuple[bytes, list[str]]:
    """A rank Encoding as a LEAP table with score = -rank (mergeable tokens only), and what the
    file cannot carry: the split pattern and the special tokens."""
    from bytepair.formats import lost_specials

    ranks = enc._mergeable_ranks
    n = len(ranks)
    by_rank = [b""] * n
    for token, rank in ranks.items():
        if rank >= n:
            raise ValueError(f"LEAP cannot hold holes in the id range: rank {rank} of {n} tokens")
        by_rank[rank] = token
    dropped = ["split pattern"] + lost_specials(enc._special_tokens, {})
    if n > 2 and by_rank[1] == b"<s>" and by_rank[2] == b"</s>":
        # llama2.c's rule, which the reader follows: such a table is read with BOS/EOS and a
        # space prepended to the text, so it would no longer encode from bytes as ranks do.
        dropped.append("byte-level reading (ranks 1 and 2 are <s> and </s>, which a LEAP reader "
                       "takes for llama2.c's BOS and EOS and so prepends a space to every text)")
    core = _core.Tokenizer.from_scored([(t, -float(r)) for r, t in enumerate(by_rank)])
    return core.to_leap(), dropped


# SentencePiece piece types (ModelProto.SentencePiece.Type) that a LEAP reader cannot recover:
# it knows byte pieces by their <0xHH> spelling and BOS/EOS by llama2.c's rule, nothing else.
_LOST_TYPES = {4: "user-defined", 5: "unused"}


def dropped_from_sentencepiece(special_tokens: dict[str, int], pieces) -> list[str]:
    """What a SentencePiece model loses as a LEAP table (``pieces``: (bytes, score, type) by id).
    LEAP holds pieces and scores only: a reader takes ``<s>``/``</s>`` at ids 1 and 2 for BOS/EOS
    (llama2.c's rule) and nothing else for special, and runs llama2.c's normalisation (a space
    prepended, nothing else) whatever the model's own settings were."""
    from bytepair.formats import lost_specials, names

    kept = {s: i for s, i in (("<s>", 1), ("</s>", 2)) if special_tokens.get(s) == i}
    dropped = lost_specials(special_tokens, kept)
    by_type: dict[str, list[str]] = {}
    for piece, _score, kind in pieces:
        if kind in _LOST_TYPES:
            by_type.setdefault(_LOST_TYPES[kind], []).append(piece.decode("utf-8", "replace"))
    for kind, spelled in by_type.items():
        dropped.append(f"{kind} piece type of {names(spelled)}")
    dropped.append("normalizer settings (dummy prefix, whitespace handling, unknown-piece surface)")
    return dropped


def dropped_load_options(dummy_prefix: bool | None, bos_id: int | None) -> list[str]:
    """``dummy_prefix`` given to ``load``, when it is not what the table itself implies
    (llama2.c's rule: on when id 1 is ``<s>``, which is when the table has a BOS)."""
    if dummy_prefix is None or dummy_prefix == (bos_id is not None):
        return []
    return [f"dummy_prefix={dummy_prefix} (a loaded copy has dummy_prefix={not dummy_prefix})"]
