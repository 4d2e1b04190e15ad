"""Fixtures for the chat tests: transformers tokenizers built offline from bytepair's own
tokenizer.json of a real vocabulary, so the transformers side downloads nothing."""

from __future__ import annotations

import pytest

import bytepair
from support import require_module


@pytest.fixture(scope="session")
def hf_tokenizer(tmp_path_factory):
    """``(encoding) -> PreTrainedTokenizerFast`` over the same vocabulary and special tokens."""
    require_module("transformers")
    from transformers import PreTrainedTokenizerFast

    made = {}

    def make(enc: bytepair.Encoding, **special_tokens):
        key = (enc.name, tuple(sorted(special_tokens.items())))
        if key not in made:
            path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
            enc.save(path, format="tokenizer.json")
            made[key] = PreTrainedTokenizerFast(tokenizer_file=str(path), **special_tokens)
        return made[key]

    return make


@pytest.fixture(scope="session")
def cl100k_im():
    from bytepair.chat.chatml import with_chatml_tokens

    return with_chatml_tokens(bytepair.get_encoding("cl100k_base"))
