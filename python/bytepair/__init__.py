"""bytepair: exact, fast byte-pair encoding for language models. tiktoken's API, a Rust core.

Importing the package loads only what ``get_encoding`` needs (the errors, ``Encoding``, the
registry and the light ``train`` entry points); the file formats and the other submodules load
on first use through the module ``__getattr__`` below, so
``import bytepair; bytepair.get_encoding("o200k_base")`` pays for none of them.

``import bytepair as tiktoken`` gives tiktoken's top-level names; ``bytepair.tiktoken`` has
tiktoken's module layout (``core``, ``load``, ``registry``, ``model``, ``_educational``), and
``bytepair.install_as_tiktoken()`` makes ``import tiktoken`` itself give bytepair.
"""

from bytepair.encoding import Encoding
from bytepair.errors import (
    BytepairError,
    FormatError,
    HashMismatchError,
    LossyFormatError,
    PatternError,
    TrainingError,
    UnknownTokenError,
    VocabError,
    VocabularyNotFoundError,
)
from bytepair.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

# Eager, unlike the names below: `bytepair.train` is also a submodule, and importing it
# (`from bytepair.train import ...`) would bind the module over a lazily loaded function. The
# module imports nothing heavy at load (json, logging and tqdm only when training runs).
from bytepair.train import train, train_files

__version__ = "0.1.0"

__all__ = [
    "BytepairError",
    "Encoding",
    "FormatError",
    "HashMismatchError",
    "LossyFormatError",
    "PatternError",
    "StreamDecoder",
    "TrainingError",
    "count_messages",
    "UnknownTokenError",
    "VocabError",
    "VocabularyNotFoundError",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "install_as_tiktoken",
    "list_encoding_names",
    "load",
    "load_tiktoken_bpe",
    "train",
    "train_files",
]

# For type checkers and IDEs only (a constant False at run time, without importing typing).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bytepair.formats import load
    from bytepair.messages import count_messages
    from bytepair.formats.tiktoken import load_tiktoken_bpe
    from bytepair.stream import StreamDecoder
del TYPE_CHECKING

# Public names loaded on first use: name -> (module, attribute).
_LAZY = {
    "load": ("bytepair.formats", "load"),
    "count_messages": ("bytepair.messages", "count_messages"),
    "load_tiktoken_bpe": ("bytepair.formats.tiktoken", "load_tiktoken_bpe"),
    "StreamDecoder": ("bytepair.stream", "StreamDecoder"),
}

# Submodules reachable as attributes (`bytepair.formats.detect(...)`) after `import bytepair`.
_SUBMODULES = frozenset({"chat", "cli", "encoding", "errors", "fetch", "formats", "messages", "models",
                         "pricing", "registry", "stream", "tiktoken", "train_reference"})


def install_as_tiktoken() -> None:
    """Makes ``import tiktoken`` give bytepair, as ``pymysql.install_as_MySQLdb()`` does for
    MySQLdb: ``tiktoken``, ``tiktoken.core``, ``tiktoken.load``, ``tiktoken.registry``,
    ``tiktoken.model`` and ``tiktoken._educational`` become the modules of
    :mod:`bytepair.tiktoken` in ``sys.modules``.

    Call it before the code that imports tiktoken (llama-models' tokenizer, nanochat, ...) is
    imported: a module that has already bound the real tiktoken keeps it. Calling it again
    changes nothing. The real tiktoken need not be installed.

    >>> import bytepair
    >>> bytepair.install_as_tiktoken()
    >>> import tiktoken.load
    >>> tiktoken.Encoding is bytepair.Encoding and tiktoken.load.load_tiktoken_bpe is bytepair.load_tiktoken_bpe
    True
    """
    import sys

    from bytepair import tiktoken as layout

    sys.modules["tiktoken"] = layout
    for name, module in layout.SUBMODULES.items():
        sys.modules[f"tiktoken.{name}"] = module


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"bytepair.{name}")
    else:
        raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
