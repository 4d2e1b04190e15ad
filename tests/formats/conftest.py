"""Fixtures for the format tests: the reference vocabularies, the corpora, and the real
SentencePiece models that mistral-common ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import CORPORA, CORPUS_DIR, VOCAB_DIR, mistral_model, require


def vocab_path(name: str) -> Path:
    """A file of the shared vocabularies (../shared/vocab or $BYTEPAIR_VOCAB_DIR)."""
    require((VOCAB_DIR / name).is_file(), f"{VOCAB_DIR / name}")
    return VOCAB_DIR / name


def corpus_docs(limit_bytes: int = 300_000) -> list[str]:
    """Documents from the real corpora: each file cut into paragraphs, up to limit_bytes each."""
    require(all((CORPUS_DIR / f"{c}.txt").is_file() for c in CORPORA), f"the corpora in {CORPUS_DIR}")
    docs = []
    for name in (f"{c}.txt" for c in CORPORA):
        text = (CORPUS_DIR / name).read_text(encoding="utf-8")[:limit_bytes]
        docs.extend(p for p in text.split("\n\n") if p)
    return docs


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
    require((CORPUS_DIR / "en.txt").is_file(), f"the corpora in {CORPUS_DIR}")
    return (CORPUS_DIR / "en.txt").read_text(encoding="utf-8")[:400_000]
