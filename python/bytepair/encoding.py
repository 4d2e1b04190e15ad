"""`Encoding`: tiktoken's public surface over any bytepair tokenizer.

One class for every model and every file format: rank BPE (tiktoken's encodings, Llama 3,
``.tiktoken``/BPE2/GPT-2 files), score BPE (SentencePiece, LEAP) and merge-list BPE (QTKR,
tokenizer.json). Every method has the same parameters and meaning whatever the model; what
only one model has (ranks, scores, piece types, merge lists) is on :attr:`Encoding.model`.

This module owns what tiktoken keeps in Python around its core: decode error handling, numpy
output, pickling and the constructor's checks. The special-token policy (`allowed_special` /
`disallowed_special`), the `str` checks and the repair of lone surrogates run in the Rust
`Tokenizer` (crates/python/src/policy.rs, text.rs), in the same call as the encoding, so a
short text pays for one call and a batch checks its texts on the worker threads.

**Defaults are each home system's.** tiktoken refuses special-token spellings in text unless
allowed (``allowed_special=set()``, ``disallowed_special="all"``), and so do rank vocabularies
and QTKR files; tokenizer.json splits every added token out, as HF ``tokenizers`` does
(``allowed_special="all"``); SentencePiece and LEAP treat the spellings of control pieces as
text, as ``sentencepiece`` does (nothing allowed, nothing refused). Passing either argument
explicitly overrides the default, with tiktoken's meaning.
"""

from __future__ import annotations

import operator

from bytepair import _core
from bytepair.errors import UnknownTokenError, VocabError

# typing and functools stay out of the import: `get_encoding` in a fresh process should pay
# for nothing it does not use. TYPE_CHECKING is a constant that type checkers read as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import AbstractSet, Any, Collection, Literal, Sequence, TypeAlias

    import numpy as np
    import numpy.typing as npt

    from bytepair.models import MergeModel, RankModel, ScoreModel

    AllowedSpecial: TypeAlias = Literal["all"] | AbstractSet[str]
    DisallowedSpecial: TypeAlias = Literal["all"] | Collection[str]


class _Home:
    """The default of ``allowed_special`` / ``disallowed_special``: this tokenizer's home
    system's rule (see the module docstring). A sentinel, since ``None`` already means
    "nothing" to tiktoken's ``disallowed_special``."""

    def __repr__(self) -> str:
        return "<home default>"


HOME = _Home()


class _cached:
    """``functools.cached_property`` without importing functools: computed on first access,
    then kept in the instance dict, which later lookups find first (a non-data descriptor)."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


# Methods an Encoding takes straight from its core (see `Encoding._init`).
_BOUND = ("encode", "encode_ordinary", "count", "encode_batch")


def _options(allowed_special, disallowed_special, add_bos, add_eos, **more) -> dict:
    """The keyword arguments the core takes: only those given (one left out is the home
    default)."""
    kw = {k: v for k, v in more.items()}
    if allowed_special is not HOME:
        kw["allowed_special"] = allowed_special
    if disallowed_special is not HOME:
        kw["disallowed_special"] = disallowed_special
    if add_bos:
        kw["add_bos"] = True
    if add_eos:
        kw["add_eos"] = True
    return kw


def _frombuffer_u32(buf) -> npt.NDArray[np.uint32]:
    """``np.frombuffer(buf, np.uint32)``; numpy is imported on the first call (not with
    bytepair), then this function is replaced by a closure that skips the import statement."""
    global _frombuffer_u32
    import numpy as np

    frombuffer, uint32 = np.frombuffer, np.dtype(np.uint32)

    def wrap(buf):
        return frombuffer(buf, uint32)  # positional, a dtype object: half the cost of dtype=np.uint32

    _frombuffer_u32 = wrap
    return wrap(buf)


def _flat_arrays(buffers) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """The numpy arrays over a flat batch's ``(ids, offsets)`` buffers (no copy)."""
    import numpy as np

    ids, offsets = buffers
    return _frombuffer_u32(ids), np.frombuffer(offsets, np.int64)


class Encoding:
    """A tokenizer: its model (rank, score or merge-list BPE), split pattern, special tokens.

    The constructor takes tiktoken's arguments, so ``tiktoken.Encoding(...)`` calls work
    unchanged. Named encodings come from :func:`bytepair.get_encoding`, files of any format
    from :func:`bytepair.load`.
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ):
        if not isinstance(mergeable_ranks, dict):
            raise TypeError(f"mergeable_ranks must be a dict[bytes, int], got {type(mergeable_ranks).__name__}")
        core = _core.Tokenizer.from_ranks(mergeable_ranks, list(special_tokens.items()), pat_str)
        self._init(name, core, pat_str, dict(special_tokens), explicit_n_vocab)
        # Keep the caller's dict: tiktoken users read enc._mergeable_ranks.
        self.__dict__["_mergeable_ranks"] = mergeable_ranks

    @classmethod
    def _from_core(
        cls,
        name: str,
        core: _core.Tokenizer,
        pat_str: str | None,
        special_tokens: dict[str, int] | None = None,
        explicit_n_vocab: int | None = None,
        *,
        source_format: str | None = None,
        source: bytes | None = None,
        load_options: dict[str, Any] | None = None,
        pad_id: int | None = None,
    ) -> Encoding:
        """An Encoding over a core built directly from a file (no dict of ranks in between).

        ``special_tokens`` None takes the core's. ``source``/``load_options``: the file's
        bytes and how it was loaded, kept so that the Encoding pickles (as those bytes) and
        can write its own format back unchanged. The home system's special-token policy is
        the core's (set by the reader that built it)."""
        self = cls.__new__(cls)
        if special_tokens is None:
            special_tokens = dict(core.special_tokens())
        self._init(name, core, pat_str, dict(special_tokens), explicit_n_vocab)
        self.source_format = source_format
        self._source = source
        self._load_options = dict(load_options or {})
        self.pad_id = pad_id
        return self

    def _init(self, name, core, pat_str, special_tokens, explicit_n_vocab) -> None:
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = special_tokens
        self._core_bpe = core
        self.max_token_value = max(core.n_vocab - 1, max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            total = core.n_mergeable + len(special_tokens)
            if total != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise VocabError(
                    f"{name}: explicit_n_vocab is {explicit_n_vocab}, but there are {total} tokens "
                    f"and the largest id is {self.max_token_value}"
                )
        self._special_token_values = frozenset(special_tokens.values())
        # The core's methods take the same arguments with the same meaning (an argument left
        # out is the home default, kept in the core), so this instance hands them out as its
        # own: a Python frame in between cost 6-10% of a one-line call. A subclass that
        # overrides one keeps its override.
        cls = type(self)
        for method in _BOUND:
            if getattr(cls, method) is getattr(Encoding, method):
                self.__dict__[method] = getattr(core, method)

    # Class-level defaults, overridden by _from_core for tokenizers read from files.
    source_format: str | None = None
    _source: bytes | None = None
    _load_options: dict[str, Any] = {}
    pad_id: int | None = None

    def __repr__(self) -> str:
        if self.source_format is None or self._core_bpe.kind == "rank":
            return f"<Encoding {self.name!r}>"
        return f"<Encoding {self.name!r} ({self.source_format}, {self._core_bpe.kind} BPE, {self.n_vocab} tokens)>"

    @property
    def model(self) -> RankModel | ScoreModel | MergeModel:
        """What only this tokenizer's model has: ranks (rank BPE), scores and piece types
        (score BPE), the merge list (merge-list BPE). See :mod:`bytepair.models`."""
        from bytepair import models

        return models.model_of(self)

    @property
    def bos_id(self) -> int | None:
        """The id ``add_bos=True`` puts first (None: this tokenizer has none)."""
        return self._core_bpe.bos_id

    @property
    def eos_id(self) -> int | None:
        """The id ``add_eos=True`` puts last (None: this tokenizer has none)."""
        return self._core_bpe.eos_id

    # ---------------------------------------------------------------- encoding

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text into token ids, treating special-token spellings as ordinary text.

        >>> enc.encode_ordinary("hello world")
        [15339, 1917]
        """
        return self._core_bpe.encode_ordinary(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = HOME,  # type: ignore[assignment]
        disallowed_special: DisallowedSpecial = HOME,  # type: ignore[assignment]
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> list[int]:
        """Encodes text into token ids.

        Special-token spellings in ``allowed_special`` become their ids. For tiktoken's
        encodings, any other special-token spelling in the text raises ValueError by default
        (text from users should not be able to smuggle in control tokens); pass
        ``disallowed_special=()`` to encode them as text. Other formats default to their home
        system's rule (module docstring). ``add_bos`` / ``add_eos`` put the tokenizer's BOS /
        EOS id first / last (VocabError if it has none).

        >>> enc.encode("hello <|endoftext|>", allowed_special="all")
        [15339, 220, 100257]
        """
        return self._core_bpe.encode(text, **_options(allowed_special, disallowed_special, add_bos, add_eos))

    def count(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = HOME,  # type: ignore[assignment]
        disallowed_special: DisallowedSpecial = HOME,  # type: ignore[assignment]
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> int:
        """The number of tokens ``encode`` would return, without building the list.

        >>> enc.count("hello world")
        2
        """
        return self._core_bpe.count(text, **_options(allowed_special, disallowed_special, add_bos, add_eos))

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = HOME,  # type: ignore[assignment]
        disallowed_special: DisallowedSpecial = HOME,  # type: ignore[assignment]
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> npt.NDArray[np.uint32]:
        """Encodes text into a numpy ``uint32`` array: the ids are encoded into a buffer of
        their own, which the array wraps (no copy)."""
        if allowed_special is HOME and disallowed_special is HOME and not add_bos and not add_eos:
            # The common call, without building keyword arguments: on short texts those
            # and numpy's argument parsing were most of the call.
            return _frombuffer_u32(self._core_bpe.encode_to_buffer(text))
        buf = self._core_bpe.encode_to_buffer(text, **_options(allowed_special, disallowed_special, add_bos, add_eos))
        return _frombuffer_u32(buf)

    def encode_ordinary_parallel(self, text: str, *, num_threads: int = 8) -> list[int]:
        """``encode_ordinary`` of one long text on several threads, with the same ids.

        A text of 1 MB or more is cut where every serial run starts a new piece (a letter
        right after a newline, for the built-in patterns) and the parts are encoded at once;
        shorter texts, and custom patterns, are encoded serially.

        >>> enc.encode_ordinary_parallel("hello world") == enc.encode_ordinary("hello world")
        True
        """
        return self._core_bpe.encode_ordinary_parallel(text, num_threads)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encodes many texts in parallel (all cores), ignoring special tokens.

        >>> enc.encode_ordinary_batch(["hello world", "goodbye world"])
        [[15339, 1917], [19045, 29474, 1917]]
        """
        return self._core_bpe.encode_ordinary_batch(text, num_threads)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = HOME,  # type: ignore[assignment]
        disallowed_special: DisallowedSpecial = HOME,  # type: ignore[assignment]
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> list[list[int]]:
        """Encodes many texts in parallel; special tokens, BOS and EOS as in :meth:`encode`."""
        return self._core_bpe.encode_batch(
            text, **_options(allowed_special, disallowed_special, add_bos, add_eos, num_threads=num_threads))

    def encode_ordinary_batch_to_numpy(
        self, text: Sequence[str], *, num_threads: int = 8
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Encodes many texts in parallel, ignoring special tokens, into one flat array.

        Returns ``(ids, offsets)``: text ``i``'s ids are ``ids[offsets[i]:offsets[i + 1]]``,
        with ``len(offsets) == len(text) + 1`` and ``offsets[0] == 0``. That is Arrow's list
        layout (``pyarrow.LargeListArray.from_arrays(offsets, ids)`` takes it as it is), built
        with no Python object per text; the arrays wrap the buffers the ids were encoded into.

        >>> ids, offsets = enc.encode_ordinary_batch_to_numpy(["hello world", "goodbye world"])
        >>> ids.tolist(), offsets.tolist()
        ([15339, 1917, 19045, 29474, 1917], [0, 2, 5])
        """
        return _flat_arrays(self._core_bpe.encode_ordinary_batch_to_buffers(text, num_threads))

    def encode_batch_to_numpy(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = HOME,  # type: ignore[assignment]
        disallowed_special: DisallowedSpecial = HOME,  # type: ignore[assignment]
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """:meth:`encode_batch` into one flat array: ``(ids, offsets)`` as in
        :meth:`encode_ordinary_batch_to_numpy`; special tokens, BOS and EOS as in
        :meth:`encode`."""
        return _flat_arrays(self._core_bpe.encode_batch_to_buffers(
            text, **_options(allowed_special, disallowed_special, add_bos, add_eos, num_threads=num_threads)))

    def clear_cache(self) -> None:
        """Forgets the pieces this encoding has merged so far.

        Words that are not one token are merged once and remembered, so a stream of short
        documents pays for each such word about once. Rank models keep a table per thread (up
        to 1 MB, for the encoding it used last; each thread frees it when it next encodes);
        score and merge-list models one shared, bounded cache per tokenizer. The ids never
        depend on it. Call this to time cold encoding, or to let the memory go.

        >>> enc.clear_cache()
        """
        self._core_bpe.clear_cache()

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text that is exactly one token (special tokens included); KeyError if not.

        >>> enc.encode_single_token("hello")
        15339
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_token(text_or_bytes)

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of one piece with no pattern split (tiktoken's private helper)."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_piece(text_or_bytes)

    # ---------------------------------------------------------------- decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Decodes ids into bytes, as the model's home system decodes (SentencePiece drops
        control pieces and its dummy prefix; bytes that are not UTF-8 are kept as they are).

        >>> enc.decode_bytes([15339, 1917])
        b'hello world'
        """
        try:
            return self._core_bpe.decode_bytes(tokens)
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            raise self._bad_token(tokens) from None

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids into text. Bytes that are not valid UTF-8 become U+FFFD unless
        ``errors`` says otherwise (``"strict"`` raises). SentencePiece models replace as
        ``sentencepiece`` does (one U+FFFD per bad byte).

        >>> enc.decode([15339, 1917])
        'hello world'
        """
        if errors == "replace" and self.source_format == "sentencepiece":
            try:
                return self._core_bpe.decode_bytes(tokens, True).decode("utf-8")
            except UnknownTokenError as e:
                raise UnknownTokenError(e.token, self.n_vocab) from None
            except (OverflowError, TypeError):
                raise self._bad_token(tokens) from None
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included); KeyError if there is no such id.

        >>> enc.decode_single_token_bytes(15339)
        b'hello'
        """
        try:
            return self._core_bpe.decode_single_token_bytes(token)
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            raise self._bad_token([token]) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token.

        >>> enc.decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        try:
            return self._core_bpe.decode_tokens_bytes(tokens)
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            raise self._bad_token(tokens) from None

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Decodes ids into text and the character offset where each token starts.

        A token that begins inside a multi-byte character gets the offset of that character.
        Raises UnicodeDecodeError if the bytes are not valid UTF-8 (as tiktoken does).

        >>> enc.decode_with_offsets([15339, 1917])
        ('hello world', [0, 5])
        """
        if self._core_bpe.kind != "rank":
            # Other models' decoders look past one token (a dummy prefix to drop, U+2581 to
            # turn into a space): the streaming decoder applies them token by token.
            from bytepair.stream import StreamDecoder

            stream = StreamDecoder(self, errors="strict")
            offsets, parts, n = [], [], 0
            for token in tokens:
                offsets.append(n)  # a token that only starts a character adds nothing yet
                parts.append(stream.step(token))
                n += len(parts[-1])
            parts.append(stream.flush())
            return "".join(parts), offsets
        pieces = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0  # characters started so far = bytes that are not UTF-8 continuation bytes
        for piece in pieces:
            starts_inside = bool(piece) and 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += len(piece) - sum(0x80 <= b < 0xC0 for b in piece)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """Decodes many id lists (on up to ``num_threads`` threads, in Rust)."""
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """Decodes many id lists into bytes (on up to ``num_threads`` threads, in Rust)."""
        try:
            return self._core_bpe.decode_bytes_batch(batch, num_threads)
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            for tokens in batch:
                try:
                    self._core_bpe.decode_bytes(tokens)
                except (OverflowError, TypeError):
                    raise self._bad_token(tokens) from None
            raise

    def _call_core(self, f, tokens):
        """Runs a core call about ``tokens``; a bad id becomes UnknownTokenError naming it and
        the range, a non-int a TypeError."""
        try:
            return f()
        except UnknownTokenError as e:
            raise UnknownTokenError(e.token, self.n_vocab) from None
        except (OverflowError, TypeError):
            raise self._bad_token(tokens) from None

    def _bad_token(self, tokens) -> Exception:
        """The error for the first bad id of ``tokens`` (called only after the core refused
        them). An integer of any type that has ``__index__`` (numpy's int64, uint32, ...) is an
        id like an ``int``: the core takes them, so only its value can be what is wrong
        (``decode(np.array([15339, -1]))`` used to blame the valid 15339 for being an int64)."""
        for t in tokens:
            try:
                value = operator.index(t)
            except TypeError:
                return TypeError(f"token ids must be int, got {type(t).__name__} ({t!r})")
            if not 0 <= value < self.n_vocab:
                return UnknownTokenError(value, self.n_vocab)
        return TypeError("token ids must be a sequence of int")

    # ---------------------------------------------------------------- vocabulary

    def token_byte_values(self) -> list[bytes]:
        """Every mergeable token's bytes, sorted."""
        return self._core_bpe.token_byte_values()

    @_cached
    def _mergeable_ranks(self) -> dict[bytes, int]:
        # Built on first use only: bundled encodings load straight from a binary table.
        return self._core_bpe.mergeable_ranks()

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special tokens, spelling -> id (a copy; tiktoken keeps it as ``_special_tokens``)."""
        return dict(self._special_tokens)

    @_cached
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """The largest token id + 1 (tiktoken's definition)."""
        return self.max_token_value + 1

    def save(self, path, format: str | None = None, *, lossy: bool = False) -> list[str]:
        """Writes the encoding to ``path`` (format from the suffix unless given); a format that
        cannot carry its pattern or special tokens is refused unless ``lossy=True``, and the
        list returned names what was dropped: see :func:`bytepair.formats.save`."""
        from bytepair.formats import save

        return save(self, path, format, lossy=lossy)

    # ---------------------------------------------------------------- pickling

    def __getstate__(self) -> object:
        """Registered encodings pickle as their name; tokenizers read from a file as the
        file's bytes and load options (unpickling parses them again: no file, no network);
        rank tokenizers built in memory as tiktoken's constructor arguments."""
        from bytepair import registry

        if registry.is_registered_instance(self):
            return self.name
        if self._source is not None and self.source_format is not None:
            return {"source_format": self.source_format, "source": self._source, "name": self.name,
                    "load_options": dict(self._load_options)}
        if self._core_bpe.kind != "rank":
            raise TypeError(f"this {self._core_bpe.kind}-BPE Encoding was not loaded from a file and cannot be pickled")
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        from bytepair import registry

        if isinstance(value, str):
            self.__dict__ = registry.get_encoding(value).__dict__
            return
        assert isinstance(value, dict)
        if "source" in value:
            from bytepair.formats import loads

            loaded = loads(value["source"], format=value["source_format"], name=value["name"], **value["load_options"])
            self.__dict__ = loaded.__dict__
            return
        self.__init__(**value)  # type: ignore[misc]

    # =============================================================================================
    # tiktoken's unstable-token API and private encoders: one block, kept together.
    #
    # encode_with_unstable, _encode_bytes and _encode_only_native_bpe with tiktoken 0.14's
    # behaviour (tests/api/test_tiktoken_dropin.py compares them with the real tiktoken), and
    # their helpers. The Rust core adds one primitive, `Tokenizer.encode_with_last_piece` (the ids of
    # `encode` and how many of them the last piece gave; crates/core/src/unstable.rs); the rest
    # is Python, off the encode hot path. `_encode_single_piece` (above) already behaves as
    # tiktoken's, except that an empty piece gives [] where tiktoken panics.
    # =============================================================================================

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = set(),  # noqa: B006
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """Encodes text into stable ids and the id sequences that could complete it.

        The last piece of ``text`` (with any whitespace tokens just before it) is left out of
        the stable ids: text that follows could merge with it. Each completion is a list of ids
        whose bytes start with that piece's bytes, so ``decode_bytes(stable + completion)``
        starts with ``text``'s bytes. Special tokens as in :meth:`encode`; the completions come
        in no particular order. tiktoken calls this API unstable itself.

        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        >>> stable, [8755, 519] in completions, len(completions)
        ([15339], True, 2233)
        """
        tokens, n_last = self._core_bpe.encode_with_last_piece(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        if n_last == 0:
            # The text ends with a special token, or has no piece: nothing can merge with it.
            return tokens, []
        n_last = self._widen_over_blanks(tokens, n_last)
        unstable = self._core_bpe.decode_bytes(tokens[len(tokens) - n_last:])
        return tokens[: len(tokens) - n_last], self._completions(unstable)

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encodes bytes that need not be valid UTF-8 (tiktoken's private helper).

        Valid UTF-8 is ``encode_ordinary`` of its text. Otherwise the longest valid prefix is
        encoded, the ids of its last piece (see :meth:`encode_with_unstable`) are taken back,
        and that piece's bytes with all the bytes after the prefix are encoded as one piece, as
        truncated text most likely continues.

        >>> enc._encode_bytes(b"hello \\xe4\\xb8")
        [15339, 220, 3574]
        """
        if not isinstance(text, bytes):
            raise TypeError(f"expected bytes, got {type(text).__name__}")
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start
        tokens, n_last = self._core_bpe.encode_with_last_piece(text[:valid].decode("utf-8"), allowed_special=(), disallowed_special=())
        if n_last:
            n_last = self._widen_over_blanks(tokens, n_last)
            unstable = self._core_bpe.decode_bytes(tokens[len(tokens) - n_last:]) + text[valid:]
            del tokens[len(tokens) - n_last:]
        else:
            unstable = text[valid:]
        tokens.extend(self._core_bpe.encode_single_piece(unstable))
        return tokens

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """Encodes text splitting it with the ``regex`` module in Python (tiktoken's private
        helper, which compares its regex engine with Python's). The ``regex`` module knows a
        newer Unicode than the Rust engines, so on characters new to it the ids can differ from
        :meth:`encode_ordinary`'s, exactly as tiktoken's do.

        >>> enc._encode_only_native_bpe("hello world")
        [15339, 1917]
        """
        try:
            import regex
        except ImportError:
            raise ImportError(
                "_encode_only_native_bpe splits text with the `regex` module, as tiktoken does: "
                "pip install regex"
            ) from None
        ids: list[int] = []
        for piece in regex.findall(self._pat_str, text):
            ids.extend(self._core_bpe.encode_single_piece(piece.encode("utf-8")))
        return ids

    def _widen_over_blanks(self, tokens: list[int], n_last: int) -> int:
        """tiktoken's ``_increase_last_piece_token_len``: when the last piece's first token is
        all spaces, tabs and newlines, the run of such tokens before it joins the unstable end.
        Where whitespace splits can move as text is appended (cl100k's ``\\s*[\\r\\n]+`` turns
        "\\n" + " " + "\\n" into one piece), those tokens are not stable either."""
        if self._is_blank(tokens[-n_last]):
            while n_last < len(tokens) and self._is_blank(tokens[-n_last - 1]):
                n_last += 1
        return n_last

    def _is_blank(self, token: int) -> bool:
        # Mergeable tokens only (tiktoken asks its mergeable decoder), so a special token's
        # spelling never counts, but an id a special token shares with a mergeable one does.
        piece = self._core_bpe.decode_single_token_bytes(token)
        if token in self._special_token_values and self._core_bpe.encode_single_piece(piece) != [token]:
            return False
        return all(b in b" \n\t" for b in piece)

    @_cached
    def _sorted_token_bytes(self) -> list[bytes]:
        return self.token_byte_values()

    def _completions(self, unstable: bytes) -> list[list[int]]:
        """The id sequences that could follow the stable ids, given the unstable end's bytes."""
        from bisect import bisect_left

        tokens = self._sorted_token_bytes
        ranks = self._mergeable_ranks

        def starting_with(prefix: bytes):
            i = bisect_left(tokens, prefix)
            while i < len(tokens) and tokens[i].startswith(prefix):
                yield tokens[i]
                i += 1

        found: dict[tuple[int, ...], None] = {}  # an ordered set
        # Every token that starts with the unstable bytes (or is them).
        for token in starting_with(unstable):
            found[(ranks[token],)] = None
        # Or a token straddles the end: for each cut, the bytes after it are the start of some
        # token. Encode the bytes before the cut with each such token, as text when they are
        # UTF-8 (appending can create a split: cl100k splits "  !" into " " + " !"), and keep
        # the ids up to the first that reaches the end of the unstable bytes.
        for cut in range(1, len(unstable)):
            prefix = unstable[:cut]
            for token in starting_with(unstable[cut:]):
                possibility = prefix + token
                try:
                    ids = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    ids = self._byte_pair_encode(possibility)
                seq, covered = [], 0
                for t, piece in zip(ids, self._core_bpe.decode_tokens_bytes(ids)):
                    seq.append(t)
                    covered += len(piece)
                    if covered >= len(unstable):
                        break
                found[tuple(seq)] = None
        # A whitespace character at the end can be split off what comes before it once more
        # text follows (`\s+(?!\S)`): "\n\n" + "0" is "\n" + "\n" + "0".
        if len(unstable) > 1:
            size = _last_char_size(unstable)
            if size and size < len(unstable) and _is_white_space(unstable[-size:].decode("utf-8")):
                seq = self._byte_pair_encode(unstable[:-size]) + self._byte_pair_encode(unstable[-size:])
                found[tuple(seq)] = None
        return [list(seq) for seq in found]

    def _byte_pair_encode(self, piece: bytes) -> list[int]:
        """tiktoken's ``byte_pair_encode``: merges pair by pair, without first looking the whole
        piece up. That differs from ``_encode_single_piece`` only when the piece is one token
        that the merges never reach (a hand-made table can have one), so only then does it take
        the readable, slow path."""
        ids = self._core_bpe.encode_single_piece(piece)
        if len(ids) == 1 and len(piece) > 1:
            from bytepair.tiktoken._educational import bpe_encode

            ids = bpe_encode(self._mergeable_ranks, piece, visualise=None)
        return ids


# Unicode's White_Space characters (what Rust's char::is_whitespace tests, as tiktoken does).
# Python's str.isspace() also counts U+001C..U+001F, which are not.
_WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                         "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _is_white_space(char: str) -> bool:
    return char in _WHITE_SPACE


def _last_char_size(data: bytes) -> int:
    """The length in bytes of the UTF-8 character that ends ``data``; 0 if its last bytes are
    not one (2 for ``"aé".encode()``, 0 for ``b"a\\xc3"`` or ``b"\\x80"``)."""
    for size in range(1, min(4, len(data)) + 1):
        if not 0x80 <= data[-size] < 0xC0:  # the lead byte of the last character
            try:
                return size if len(data[-size:].decode("utf-8")) == 1 else 0
            except UnicodeDecodeError:
                return 0
    return 0
