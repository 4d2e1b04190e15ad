"""QTKR merge-list vocabularies: a 32-byte header, each token as a length byte and its bytes,
then (token_id1, token_id2, merged_id) merges applied in table order. Read and written in Rust
(``crates/core/src/formats/qtkr.rs``); encoded by merge-list BPE from single bytes.

QTKR carries no split pattern and no list of special tokens (only BOS/EOS/PAD ids); tokens
longer than 255 bytes cannot be written (a FormatError/VocabError says so, nothing is
truncated). A rank vocabulary exports with every two-token cut of each token as a merge, in
rank order (``Encoding.save(path, format="qtkr")``).
"""

from __future__ import annotations

from bytepair import _core
from bytepair.errors import FormatError, VocabError
from bytepair.encoding import Encoding


def load(data: bytes, source: str = "<bytes>", name: str = "qtkr", pat_str: str | None = None) -> Encoding:
    """``pat_str``: split pattern to pre-tokenize with (the file has none: without one the text
    is one piece)."""
    try:
        core, pad = _core.Tokenizer.from_qtkr(data, pat_str)
    except FormatError as e:
        e.path = source
        raise
    except VocabError as e:
        raise FormatError(str(e), "tokens/merges", source) from None
    # The special tokens (BOS/EOS/PAD spelled as UTF-8) are the core's, derived once in Rust.
    # Converted from tiktoken vocabularies, QTKR keeps tiktoken's special-token defaults (the
    # core's default for merge-list models read from it).
    return Encoding._from_core(name, core, pat_str, None, source_format="qtkr", source=data, pad_id=pad,
                               load_options={"pat_str": pat_str} if pat_str is not None else None)


def dumps_encoding(enc) -> tuple[bytes, list[str]]:
    """A rank Encoding as QTKR: every id's bytes (special tokens included, at their ids; an id
    with two spellings keeps its first, the one it decodes to) and the merge list that
    reproduces its ranks; and what the file cannot carry: the split pattern, and every special
    token but ``<|endoftext|>`` (written as EOS, which loading makes special again)."""
    from bytepair.formats import lost_specials

    n = enc.n_vocab
    tokens = [b""] * n
    for token, rank in enc._mergeable_ranks.items():
        tokens[rank] = token
    ordinary = set(enc._mergeable_ranks)
    for s, i in enc._special_tokens.items():
        # A special whose bytes are already a token (an ordinary one, or an earlier special at
        # another id) is not written at its id: a QTKR table holding the same bytes twice does
        # not load. The id stays a hole, and the special is named as dropped (below).
        if not tokens[i] and s.encode("utf-8") not in ordinary:
            tokens[i] = s.encode("utf-8")
            ordinary.add(tokens[i])
    long = [i for i, t in enumerate(tokens) if len(t) > 255]
    if long:
        raise VocabError(f"token {long[0]} is {len(tokens[long[0]])} bytes; QTKR stores lengths in one "
                         f"byte, so tokens longer than 255 bytes cannot be written ({len(long)} such tokens)")
    merges = enc._core_bpe.merges_from_ranks()
    # The first spelling of each special id (the bytes the table holds), not its second names.
    specials = [(s, i) for s, i in enc._special_tokens.items() if tokens[i] == s.encode("utf-8")]
    core = _core.Tokenizer.from_merges(tokens, merges, None, False, None, False, specials)
    eot = enc._special_tokens.get("<|endoftext|>")
    if eot is not None and tokens[eot] != b"<|endoftext|>":
        eot = None  # the id's bytes are another spelling's: loading would not call it <|endoftext|>
    kept = {"<|endoftext|>": eot} if eot is not None else {}
    return core.to_qtkr(None, eot, None), ["split pattern"] + lost_specials(enc._special_tokens, kept)


def check_readable(data: bytes, source_format: str) -> None:
    """QTKR is byte-level (encoding starts from single bytes): a character-level model
    (Metaspace, byte fallback) written as QTKR would not read back, so it is refused."""
    try:
        _core.Tokenizer.from_qtkr(data)
    except FormatError as e:
        raise ValueError(f"a {source_format} model cannot be written as qtkr: {e}") from None


def dropped_from_merge_model(pat_str: str | None, special_tokens: dict[str, int], added_tokens: dict[str, int],
                             kept_ids: tuple, tokenizer_json: bytes | None) -> list[str]:
    """What a merge-list model loses as QTKR, which holds the tokens, the merges and the
    BOS/EOS/PAD ids (``kept_ids``; loading makes those three special again), and nothing else: no
    split pattern, no other special or added token, and none of a tokenizer.json's normalizer
    or ``ignore_merges`` (read from the file's own bytes, ``tokenizer_json``)."""
    from bytepair.formats import lost_specials, names

    dropped = ["split pattern"] if pat_str else []
    dropped += lost_specials(special_tokens, {s: i for s, i in special_tokens.items() if i in kept_ids})
    added = [s for s in added_tokens if s not in special_tokens]
    if added:
        dropped.append(f"added tokens {names(added)}")
    if tokenizer_json is not None:
        import json

        doc = json.loads(tokenizer_json)
        if doc.get("normalizer"):
            dropped.append("normalizer")
        if (doc.get("model") or {}).get("ignore_merges"):
            dropped.append("ignore_merges (a piece that is a token stays whole)")
    return dropped
