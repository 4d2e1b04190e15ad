"""The exceptions bytepair raises, every one of them defined here (a test checks that no other
module defines one). Each is also a built-in type (ValueError, KeyError, ...), so code written
for tiktoken that catches those keeps working."""

from __future__ import annotations


class BytepairError(Exception):
    """Base of every bytepair-specific error."""


class FormatError(BytepairError, ValueError):
    """A vocabulary file is malformed.

    ``str(err)`` reads ``"<path>: <location>: <message>"``; the parts are also attributes.
    """

    def __init__(self, message: str, location: str | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.path = path

    def __str__(self) -> str:
        return ": ".join(p for p in (self.path, self.location, self.message) if p)

    def __reduce__(self):
        return (type(self), (self.message, self.location, self.path))


class VocabError(BytepairError, ValueError):
    """A vocabulary is inconsistent: duplicate ranks, a missing byte token, a special token
    colliding with a rank, ..."""


class PatternError(BytepairError, ValueError):
    """A split pattern does not compile."""


class UnknownTokenError(BytepairError, KeyError):
    """A token id that the encoding does not have (decode of an out-of-range id)."""

    def __init__(self, token: object, n_vocab: int | None = None):
        super().__init__(token)
        self.token = token
        self.n_vocab = n_vocab

    def __str__(self) -> str:
        limit = f" (valid ids are 0 to {self.n_vocab - 1})" if self.n_vocab else ""
        return f"token id {self.token!r} is not in the vocabulary{limit}"

    def __reduce__(self):
        return (type(self), (self.token, self.n_vocab))


class VocabularyNotFoundError(BytepairError, FileNotFoundError):
    """A vocabulary file is neither bundled, cached nor downloadable here."""


class HashMismatchError(BytepairError, ValueError):
    """A file's SHA-256 is not the one pinned for it."""

    def __init__(self, what: str, expected: str, actual: str):
        super().__init__(f"{what}: SHA-256 is {actual}, expected {expected}")
        self.expected = expected
        self.actual = actual


class TrainingError(BytepairError, ValueError):
    """Training cannot run on this input (for example the corpus is empty)."""


class LossyFormatError(BytepairError, ValueError):
    """A vocabulary format cannot carry everything the tokenizer needs to encode as it does, so
    nothing was written. ``.format`` is the target format, ``.dropped`` what it would lose
    (``["split pattern", "special tokens <|bos|>, <|eos|>"]``), ``.path`` the file not written
    and ``.keeps`` a format that would keep everything. ``save(..., lossy=True)`` writes it
    anyway and returns ``.dropped``."""

    def __init__(self, format: str, dropped: list[str], path: str | None = None, keeps: str | None = None):
        self.format = format
        self.dropped = list(dropped)
        self.path = path
        self.keeps = keeps
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        keep = f"save as {self.keeps} to keep everything, or " if self.keeps else ""
        return (f"{where}{self.format} cannot carry the {'; the '.join(self.dropped)}; nothing was written "
                f"({keep}pass lossy=True to write it without them)")

    def __reduce__(self):
        return (type(self), (self.format, self.dropped, self.path, self.keeps))


class ChatError(BytepairError, ValueError):
    """A conversation the chat template cannot render; the message names the message and field."""


class PricesError(BytepairError, ValueError):
    """A price list (LiteLLM's ``model_prices_and_context_window.json`` schema) cannot be read or
    used: malformed, a field of the wrong type, or a price the computation needs is missing."""


class UnknownModelError(BytepairError, KeyError):
    """A model name neither the encoding registry nor the price list knows; the message names
    the closest known names."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MessagesError(BytepairError, ValueError):
    """A chat request that OpenAI's published token-counting recipe does not cover (a model
    family it does not name, content that is not text, a tool without descriptions)."""
