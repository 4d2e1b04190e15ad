"""Fixtures for the format tests: the reference vocabularies, the corpora, and the real
SentencePiece models that mistral-common ships."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def vocab_path(name: str) -> Path:
    """/work/shared/vocab-style folder: $BYTEPAIR_VOCAB_DIR, else shared/vocab beside the repo."""
    for d in (os.environ.get("BYTEPAIR_VOCAB_DIR"), REPO.parent / "shared" / "vocab",
              REPO.parent.parent / "shared" / "vocab"):
        if d and (Path(d) / name).is_file():
            return Path(d) / name
    pytest.skip(f"{name} not found (set BYTEPAIR_VOCAB_DIR)")


def corpus_docs(limit_bytes: int = 300_000) -> list[str]:
    """Documents from the real corpora: each file cut into paragraphs, up to limit_bytes each."""
    d = os.environ.get("BYTEPAIR_CORPUS_DIR")
    if not d:
        pytest.skip("BYTEPAIR_CORPUS_DIR is not set")
    docs = []
    for name in ("en.txt", "code.txt", "de.txt"):
        text = (Path(d) / name).read_text(encoding="utf-8")[:limit_bytes]
        docs.extend(p for p in text.split("\n\n") if p)
    return docs


def mistral_model(name: str) -> Path:
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("mistral-common is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / name


@pytest.fixture(scope="session")
def docs() -> list[str]:
    return corpus_docs()


@pytest.fixture(scope="session")
def vocab():
    """vocab("cl100k_base.tiktoken") -> its path (skips when the shared vocabularies are absent)."""
    return vocab_path


@pytest.fixture(scope="session")
def mistral():
    """mistral("tokenizer.model.v1") -> its path (skips when mistral-common is not installed)."""
    return mistral_model


@pytest.fixture(scope="session")
def corpus_text() -> str:
    """The first 400 KB of the English corpus as one text."""
    d = os.environ.get("BYTEPAIR_CORPUS_DIR")
    if not d:
        pytest.skip("BYTEPAIR_CORPUS_DIR is not set")
    return (Path(d) / "en.txt").read_text(encoding="utf-8")[:400_000]
