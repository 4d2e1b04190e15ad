"""Where the tests find their data, and the rule for data that is missing.

Imported by the conftest files and by tests (``from support import ...``): pytest puts this
folder on sys.path.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DIR", REPO.parent / "shared"))
VOCAB_DIR = Path(os.environ.get("BYTEPAIR_VOCAB_DIR", SHARED / "vocab"))
CORPUS_DIR = Path(os.environ.get("BYTEPAIR_CORPUS_DIR", REPO / "corpus"))
# Every corpus ../shared/corpus/make_corpus.py makes (.ci/run installs its Debian packages):
# English prose, Python source, German man pages, Chinese prose and poems, and Ukrainian,
# Turkish and Vietnamese man pages (Cyrillic, dotted/dotless i, stacked diacritics); then
# Japanese and Russian man pages (kana and kanji; Cyrillic), from scripts/more_corpora.py.
CORPORA = ("en", "code", "de", "zh-fortunes", "uk", "tr", "vi", "ja", "ru")
BLOB = "https://openaipublic.blob.core.windows.net/encodings/"


def require(condition: bool, what: str) -> None:
    """Skip when data is missing on a developer machine; fail in CI, where it must be there."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI (.ci/run should have provided it)")
    pytest.skip(f"{what} is missing")


def require_module(name: str):
    """``import name``, under ``require``'s rule: a test dependency missing here skips the
    module's tests locally and fails in CI (unlike ``pytest.importorskip``, which skips in CI
    too). Usable at module level."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing in CI (it is in pyproject.toml's test extra)", pytrace=False)
        pytest.skip(f"{name} is not installed", allow_module_level=True)


def mistral_model(name: str) -> Path:
    """A SentencePiece model that mistral-common ships (``tokenizer.model.v1``, ...)."""
    spec = importlib.util.find_spec("mistral_common")
    require(spec is not None and bool(spec.submodule_search_locations), "mistral-common (the SentencePiece models)")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / name

# The first line of a child process that a test sends Ctrl-C (SIGINT): the handler an
# interactive Python has. A child inherits an ignored SIGINT when the test run was started in
# the background by a shell without job control (`pytest &` in a script), and Python then
# leaves it ignored, so the child never stops: a hang that says nothing about bytepair.
SIGINT_HANDLED = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"
