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
from bytepair.formats import load
from bytepair.formats.tiktoken import load_tiktoken_bpe
from bytepair.merged import MergeEncoding
from bytepair.registry import (
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)
from bytepair.scored import ScoreEncoding
from bytepair.train import train, train_files

__version__ = "0.1.0"

__all__ = [
    "BytepairError",
    "Encoding",
    "FormatError",
    "HashMismatchError",
    "MergeEncoding",
    "PatternError",
    "ScoreEncoding",
    "TrainingError",
    "UnknownTokenError",
    "VocabError",
    "VocabularyNotFoundError",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "load_tiktoken_bpe",
    "train",
    "train_files",
]
