"""bytepair: exact, fast byte-pair encoding for language models. tiktoken's API, a Rust core."""

from bytepair.encoding import Encoding
from bytepair.errors import (
    BytepairError,
    FormatError,
    HashMismatchError,
    PatternError,
    TrainingError,
    UnknownTokenError,
    VocabError,
    VocabularyNotFoundError,
)
from bytepair.formats.tiktoken import load_tiktoken_bpe
from bytepair.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)
from bytepair.train import train, train_files

__version__ = "0.1.0"

__all__ = [
    "BytepairError",
    "Encoding",
    "FormatError",
    "HashMismatchError",
    "PatternError",
    "TrainingError",
    "UnknownTokenError",
    "VocabError",
    "VocabularyNotFoundError",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_tiktoken_bpe",
    "train",
    "train_files",
]
