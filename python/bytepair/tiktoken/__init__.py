"""tiktoken's module layout over bytepair: code written for tiktoken, submodule imports
included, runs on bytepair unchanged.

    tiktoken                bytepair.tiktoken: Encoding, get_encoding, list_encoding_names,
                            encoding_for_model, encoding_name_for_model
    tiktoken.core           Encoding (bytepair.Encoding itself)
    tiktoken.load           load_tiktoken_bpe, data_gym_to_mergeable_bpe_ranks, read_file,
                            read_file_cached, check_hash, dump_tiktoken_bpe
    tiktoken.registry       get_encoding, list_encoding_names, ENCODINGS, ENCODING_CONSTRUCTORS
    tiktoken.model          encoding_for_model, encoding_name_for_model, MODEL_TO_ENCODING,
                            MODEL_PREFIX_TO_ENCODING
    tiktoken._educational   SimpleBytePairEncoding: readable BPE training and encoding

Each module only names bytepair's own implementation (bytepair.encoding, bytepair.registry,
bytepair.fetch, bytepair.formats); none holds logic of its own except ``_educational``, which
is meant to be read. ``bytepair.install_as_tiktoken()`` registers these modules under the name
``tiktoken``, so that third-party code importing tiktoken gets bytepair. docs/tiktoken.md says
what is mapped and what differs.
"""

from bytepair.tiktoken import _educational, core, load, model, registry
from bytepair.tiktoken.core import Encoding
from bytepair.tiktoken.model import encoding_for_model, encoding_name_for_model
from bytepair.tiktoken.registry import get_encoding, list_encoding_names

# The tiktoken release whose API this layout mirrors (tests/api/test_tiktoken_dropin.py checks
# the names against the installed tiktoken). Code that compares tiktoken versions before using a
# feature reads this; bytepair's own version is bytepair.__version__.
__version__ = "0.14.0"

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]

# The submodules that install_as_tiktoken() registers as tiktoken.<name>.
SUBMODULES = {"core": core, "load": load, "registry": registry, "model": model,
              "_educational": _educational}
