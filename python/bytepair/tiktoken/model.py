"""``tiktoken.model``: which encoding each OpenAI model uses. The tables and lookups are
bytepair's (``bytepair/registry/models.py``, kept equal to tiktoken's by a test)."""

from bytepair.registry import encoding_for_model, encoding_name_for_model
from bytepair.registry.models import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING

__all__ = ["MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "encoding_for_model",
           "encoding_name_for_model"]
