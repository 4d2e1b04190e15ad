"""The pinned facts of the known encodings (crates/core/src/known.rs) against tiktoken's own
definitions: each encoding's special tokens, split pattern, explicit n_vocab and the SHA-256 of
the file it loads. The core's table is the one place these are written (the C library and the
Python registry both read it), so this is where a wrong id would show."""

from __future__ import annotations

import pytest

from bytepair import _core

OPENAI = ["r50k_base", "gpt2", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture
def tiktoken_definitions(monkeypatch):
    """tiktoken's constructor of each name, with its file loaders stubbed out (they would
    download): the dict it returns still holds the specials, pattern and n_vocab, and the
    stub records the SHA-256 each constructor pins for its ranks."""
    import tiktoken_ext.openai_public as op

    pinned: dict[str, str | None] = {}

    def load_tiktoken_bpe(url, expected_hash=None):
        pinned["sha256"] = expected_hash
        return {}

    def data_gym(vocab_bpe_file, encoder_json_file, vocab_bpe_hash=None, encoder_json_hash=None):
        pinned["sha256"] = None  # GPT-2's two files: their hashes are not of a .tiktoken file
        return {}

    monkeypatch.setattr(op, "load_tiktoken_bpe", load_tiktoken_bpe)
    monkeypatch.setattr(op, "data_gym_to_mergeable_bpe_ranks", data_gym)

    def definition(name):
        pinned.clear()
        return op.ENCODING_CONSTRUCTORS[name](), pinned.get("sha256")

    return definition


@pytest.mark.parametrize("name", OPENAI)
def test_known_encoding_is_tiktokens(name, tiktoken_definitions):
    theirs, their_sha = tiktoken_definitions(name)
    sha256, pattern, specials, n_vocab = _core.known_encoding(name)
    assert dict(specials) == theirs["special_tokens"]
    assert list(dict(specials)) == list(theirs["special_tokens"]), "tiktoken's order"
    assert n_vocab == theirs.get("explicit_n_vocab")
    assert pattern == theirs["pat_str"] or name in ("r50k_base", "gpt2", "p50k_base", "p50k_edit")
    if their_sha is not None:
        assert sha256 == their_sha


def test_gpt2_family_pattern_splits_as_tiktokens():
    """tiktoken spells GPT-2's pattern without possessive quantifiers; the core's spelling
    (``_core.PATTERNS["r50k"]``) is the possessive one, which splits alike and is held to it by
    tests/parity/test_patterns.py. Here: the four encodings share that one spelling."""
    assert {_core.known_encoding(n)[1] for n in ("r50k_base", "gpt2", "p50k_base", "p50k_edit")} == {_core.PATTERNS["r50k"]}


def test_a_shared_file_is_named_after_its_first_encoding():
    for name in _core.KNOWN_ENCODINGS:
        sha = bytes.fromhex(_core.known_encoding(name)[0])
        first = next(n for n in _core.KNOWN_ENCODINGS if _core.known_encoding(n)[0] == sha.hex())
        assert _core.known_encoding_by_sha256(sha) == first
    assert _core.known_encoding_by_sha256(bytes(32)) is None
    with pytest.raises(KeyError):
        _core.known_encoding("o300k")
