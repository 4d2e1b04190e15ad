"""Llama 3: 128,000 ranks in tiktoken text format plus 256 special tokens, with its own split
pattern.

Meta's license does not let us bundle the vocabulary, so it is read from the user's copy:
``get_encoding("llama3", path=...)``, else ``$BYTEPAIR_LLAMA3_PATH``, else the
``tokenizer.model`` that the ``llama-models`` package installs.
"""

from __future__ import annotations

import os

from bytepair import _core
from bytepair.encoding import Encoding
from bytepair.errors import FormatError, VocabularyNotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# Written once, in Rust (crates/core/src/pretokenize/patterns.rs).
LLAMA3_PATTERN = _core.PATTERNS["llama3"]


def llama3_special_tokens() -> dict[str, int]:
    """Llama 3's 256 special tokens from id 128000 on, pinned in crates/core/src/known.rs."""
    return dict(_core.known_encoding("llama3")[2])


def find_llama3_vocab(path: str | os.PathLike | None = None) -> Path:
    # Imported here, not at the top: the registry imports this module at start-up.
    import importlib.util
    from pathlib import Path

    if path is not None:
        return Path(path)
    if os.environ.get("BYTEPAIR_LLAMA3_PATH"):
        return Path(os.environ["BYTEPAIR_LLAMA3_PATH"])
    spec = importlib.util.find_spec("llama_models")
    if spec is not None and spec.submodule_search_locations:
        candidate = Path(next(iter(spec.submodule_search_locations))) / "llama3" / "tokenizer.model"
        if candidate.is_file():
            return candidate
    raise VocabularyNotFoundError(
        "The Llama 3 vocabulary is not bundled (its license does not allow it). Pass its path, "
        "get_encoding('llama3', path='.../tokenizer.model'), set BYTEPAIR_LLAMA3_PATH, or "
        "`pip install llama-models`, which ships it."
    )


def is_available(name: str = "llama3") -> bool:
    """Whether the Llama 3 vocabulary file can be found here (``find_llama3_vocab``)."""
    try:
        return find_llama3_vocab().is_file()
    except VocabularyNotFoundError:
        return False


def llama3(path: str | os.PathLike | None = None) -> Encoding:
    file = find_llama3_vocab(path)
    data = file.read_bytes()
    specials = llama3_special_tokens()
    try:
        core = _core.Tokenizer.from_tiktoken(data, list(specials.items()), LLAMA3_PATTERN)
    except FormatError as e:
        e.path = str(file)
        raise
    return Encoding._from_core("llama3", core, LLAMA3_PATTERN, specials,
                               explicit_n_vocab=_core.known_encoding("llama3")[3])


ENCODING_CONSTRUCTORS = {"llama3": llama3}
