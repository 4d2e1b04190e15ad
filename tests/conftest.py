"""Shared fixtures: where the real vocabularies and corpora are, and reference encoders built by
the real tiktoken with no network.

tiktoken is made to load its own encodings offline by seeding its cache (files named by the
SHA-1 of their URL) from ../shared/vocab; tiktoken then checks the pinned SHA-256 itself, so the
reference is exactly `tiktoken.get_encoding(name)`.

Tests that need data missing here skip locally but fail in CI (CI=true), where .ci/run provides
everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from support import BLOB, CORPORA, CORPUS_DIR, VOCAB_DIR, require


@pytest.fixture(scope="session")
def vocab_dir() -> Path:
    require((VOCAB_DIR / "cl100k_base.tiktoken").is_file(), f"the shared vocabularies ({VOCAB_DIR})")
    return VOCAB_DIR


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    require(all((CORPUS_DIR / f"{c}.txt").is_file() for c in CORPORA),
            f"the corpora in {CORPUS_DIR} (set BYTEPAIR_CORPUS_DIR, or run make_corpus.py and scripts/more_corpora.py)")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def corpus_texts(corpus_dir) -> dict[str, str]:
    return {c: (corpus_dir / f"{c}.txt").read_text(encoding="utf-8") for c in CORPORA}


@pytest.fixture(scope="session")
def corpus_documents(corpus_dir) -> list[str]:
    """The JSONL mix: about 900 documents of 2,000 characters from all three corpora."""
    with open(corpus_dir / "mix.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="session")
def tiktoken_cache(vocab_dir, tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in ("cl100k_base", "o200k_base"):
        key = hashlib.sha1(f"{BLOB}{name}.tiktoken".encode()).hexdigest()
        shutil.copy(vocab_dir / f"{name}.tiktoken", cache / key)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return cache


def _llama3_reference():
    try:
        from llama_models.llama3.tokenizer import Tokenizer
        import llama_models
    except ImportError:
        return None
    return Tokenizer(Path(llama_models.__file__).parent / "llama3" / "tokenizer.model").model


@pytest.fixture(scope="session")
def reference(tiktoken_cache):
    """`reference(name)`: the real library's encoder for a bytepair encoding name."""
    import tiktoken

    made = {}

    def get(name: str):
        if name not in made:
            if name == "llama3":
                ref = _llama3_reference()
                require(ref is not None, "llama-models (the Llama 3 reference)")
                made[name] = ref
            else:
                made[name] = tiktoken.get_encoding(name)
        return made[name]

    return get


# Every encoding whose vocabulary is available offline, with a reference to compare against.
PARITY_ENCODINGS = ["cl100k_base", "o200k_base", "o200k_harmony", "llama3"]


@pytest.fixture(params=PARITY_ENCODINGS)
def pair(request, reference):
    """(bytepair encoding, reference encoding) for each parity encoding."""
    import bytepair

    ref = reference(request.param)
    return bytepair.get_encoding(request.param), ref
