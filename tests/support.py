"""Where the tests find their data, and the rule for data that is missing.

Imported by the conftest files and by tests (``from support import ...``): pytest puts this
folder on sys.path.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DIR", REPO.parent / "shared"))
VOCAB_DIR = Path(os.environ.get("BYTEPAIR_VOCAB_DIR", SHARED / "vocab"))
CORPUS_DIR = Path(os.environ.get("BYTEPAIR_CORPUS_DIR", REPO / "corpus"))
CORPORA = ("en", "code", "de")
BLOB = "https://openaipublic.blob.core.windows.net/encodings/"


def require(condition: bool, what: str) -> None:
    """Skip when data is missing on a developer machine; fail in CI, where it must be there."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI (.ci/run should have provided it)")
    pytest.skip(f"{what} is missing")


def mistral_model(name: str) -> Path:
    """A SentencePiece model that mistral-common ships (``tokenizer.model.v1``, ...)."""
    spec = importlib.util.find_spec("mistral_common")
    require(spec is not None and bool(spec.submodule_search_locations), "mistral-common (the SentencePiece models)")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / name
