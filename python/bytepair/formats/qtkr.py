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
        specials = {}
        for i in (core.bos_id, core.eos_id, pad):
            if i is not None:
                try:
                    specials[core.decode_single_token_bytes(i).decode("utf-8")] = i
                except UnicodeDecodeError:
                    pass
    except FormatError as e:
        e.path = source
        raise
    except VocabError as e:
        raise FormatError(str(e), "tokens/merges", source) from None
    # Converted from tiktoken vocabularies, QTKR keeps tiktoken's special-token defaults.
    return Encoding._from_core(name, core, pat_str, specials, source_format="qtkr", source=data, pad_id=pad,
                               load_options={"pat_str": pat_str} if pat_str is not None else None)


def dumps_encoding(enc) -> bytes:
    """A rank Encoding as QTKR: every id's bytes (special tokens included, at their ids) and the
    merge list that reproduces its ranks."""
    n = enc.n_vocab
    tokens = [b""] * n
    for token, rank in enc._mergeable_ranks.items():
        tokens[rank] = token
    for s, i in enc._special_tokens.items():
        tokens[i] = s.encode("utf-8")
    long = [i for i, t in enumerate(tokens) if len(t) > 255]
    if long:
        raise VocabError(f"token {long[0]} is {len(tokens[long[0]])} bytes; QTKR stores lengths in one "
                         f"byte, so tokens longer than 255 bytes cannot be written ({len(long)} such tokens)")
    merges = enc._core_bpe.merges_from_ranks()
    core = _core.Tokenizer.from_merges(tokens, merges, None, False, None, False, list(enc._special_tokens.items()))
    eot = enc._special_tokens.get("<|endoftext|>")
    return core.to_qtkr(None, eot, None)
