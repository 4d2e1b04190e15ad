"""Type stubs for bytepair._core, the compiled Rust binding (crates/python).

Checked against the compiled module by tests/api/test_stubs.py (mypy's stubtest).
"""

import os
from typing import Any, Callable, Sequence, final

#: What a chat call gives: the (ids, mask) of each conversation, the first failure (index, why)
#: or None, and the conversations (index, why) the core handed back for jinja2 to render.
_ChatAnswer = tuple[list[tuple[list[int], list[int]]], tuple[int, str] | None, list[tuple[int, str]]]

__all__ = [
    "BYTE_LEVEL_CHARS", "ChatJob", "ChatMLFrame", "ChatSpecials", "IdBuffer", "JinjaConversation", "JinjaPreparer", "JinjaTemplate", "KNOWN_ENCODINGS", "PATTERNS", "Tokenizer", "Trainer",
    "bpe2_info", "gpt2_to_tiktoken", "known_encoding", "known_encoding_by_sha256",
    "parse_tiktoken",
]

#: The built-in split patterns by name (crates/core/src/pretokenize/patterns.rs), each run by a
#: hand-written scanner: "cl100k", "o200k", "r50k" (tiktoken's spelling of GPT-2's), "gpt2"
#: (GPT-2's own spelling, HF's ByteLevel), "llama3", "rustbpe" (GPT-4's as minbpe/rustbpe write
#: it), "nanochat".
PATTERNS: dict[str, str]

#: The names of the encodings whose hash, pattern and specials are pinned
#: (crates/core/src/known.rs), in the table's order; their facts: known_encoding(name).
KNOWN_ENCODINGS: list[str]

#: GPT-2's byte table (crates/core/src/formats/byte_level.rs): character i spells byte i.
BYTE_LEVEL_CHARS: str


@final
class IdBuffer:
    """Token ids (native uint32) or a flat batch's offsets (native int64) exported through the
    buffer protocol, writable; what Tokenizer.encode_to_buffer and the *_batch_to_buffers
    methods return and the *_to_numpy methods wrap. (No __buffer__ here: Python 3.11 does not
    show the slot as a method; memoryview() and numpy take it all the same.)"""

    def __len__(self) -> int: ...


@final
class Tokenizer:
    """One tokenizer over any model (rank, score or merge-list BPE). Every method that loops
    over text releases the GIL. Model-specific methods raise TypeError on another model."""

    # construction
    @staticmethod
    def from_ranks(mergeable_ranks: dict[bytes, int], special_tokens: list[tuple[str, int]], pattern: str) -> Tokenizer: ...
    @staticmethod
    def from_tiktoken(data: bytes, special_tokens: list[tuple[str, int]], pattern: str) -> Tokenizer: ...
    @staticmethod
    def from_bpe2(data: bytes, special_tokens: list[tuple[str, int]] | None = None, pattern: str | None = None) -> Tokenizer:
        """From a BPE2 or BPZ2 file; None takes what the file's trailing section records."""
    @staticmethod
    def from_bpe2_file(path: str | os.PathLike[str], special_tokens: list[tuple[str, int]] | None = None, pattern: str | None = None) -> Tokenizer:
        """from_bpe2 of the file at path, read in Rust straight into the table; OSError if unreadable."""
    @staticmethod
    def from_sentencepiece(data: bytes) -> Tokenizer: ...
    @staticmethod
    def from_leap(data: bytes, dummy_prefix: bool | None = None) -> Tokenizer:
        """BOS = 1 / EOS = 2 when those ids hold <s> / </s>; dummy prefix by default for such tables."""
    @staticmethod
    def from_scored(tokens: list[tuple[bytes, float]], bos_id: int | None = None, eos_id: int | None = None, dummy_prefix: bool = False) -> Tokenizer: ...
    @staticmethod
    def from_merges(
        tokens: list[bytes],
        merges: list[tuple[int, int, int]],
        char_level: tuple[bool, int | None, bool] | None = None,
        ignore_merges: bool = False,
        pattern: str | None = None,
        emit_gaps: bool = False,
        special_tokens: list[tuple[str, int]] = ...,
        bos_id: int | None = None,
        eos_id: int | None = None,
    ) -> Tokenizer: ...
    @staticmethod
    def from_qtkr(data: bytes, pattern: str | None = None) -> tuple[Tokenizer, int | None]:
        """(tokenizer, pad id); BOS/EOS are the tokenizer's bos_id/eos_id."""
    @staticmethod
    def from_tokenizer_json(data: bytes) -> tuple[Tokenizer, dict[str, Any]]:
        """Parsed in Rust; info: pattern, space_symbol, byte_level, added_tokens [(content, id, special)]."""
    # every model
    def encode_ordinary(self, text: str) -> list[int]: ...
    def encode(self, text: str, **kwargs: Any) -> list[int]:
        """kwargs: allowed_special, disallowed_special (left out: the home default; None:
        nothing), add_bos, add_eos."""
    def encode_to_buffer(self, text: str, **kwargs: Any) -> IdBuffer:
        """encode's ids in a buffer of their own, for np.frombuffer(..., np.uint32) (no copy)."""
    def count(self, text: str, **kwargs: Any) -> int: ...
    def encode_ordinary_parallel(self, text: str, num_threads: int | None = None) -> list[int]:
        """encode_ordinary of one long text, cut at provably safe offsets and encoded on threads."""
    def encode_batch(self, texts: Sequence[str], **kwargs: Any) -> list[list[int]]:
        """kwargs: encode's, and num_threads (default 8)."""
    def encode_ordinary_batch(self, texts: Sequence[str], num_threads: int | None = None) -> list[list[int]]: ...
    def encode_batch_to_buffers(self, texts: Sequence[str], **kwargs: Any) -> tuple[IdBuffer, IdBuffer]:
        """encode_batch's ids as one flat batch: (ids uint32, offsets int64), text i's ids at
        ids[offsets[i]:offsets[i + 1]]. kwargs as encode_batch's."""
    def encode_ordinary_batch_to_buffers(
        self, texts: Sequence[str], num_threads: int | None = None
    ) -> tuple[IdBuffer, IdBuffer]: ...
    def encode_chat(
        self, conversations: Sequence[Any], num_threads: int = 1,
        chatml: tuple[ChatMLFrame, Callable[[Any], list[dict[str, str]]]] | None = None,
        jinja: tuple[JinjaPreparer, Callable[[Any], Any]] | None = None,
    ) -> _ChatAnswer:
        """(results, failed (index, why) or None, [(index, why) jinja2 is to render]).
        ``conversations``: ``(parts, trains)`` pairs and ``JinjaConversation``s, or with
        ``chatml`` (the frame, and the function giving a conversation it does not read as it is
        as plain messages) or ``jinja`` (the preparer, and the function preparing a
        conversation it does not convert as it is) the caller's conversations."""
    def encode_chat_start(
        self, conversations: Sequence[Any], num_threads: int = 1,
        chatml: tuple[ChatMLFrame, Callable[[Any], list[dict[str, str]]]] | None = None,
        jinja: tuple[JinjaPreparer, Callable[[Any], Any]] | None = None,
    ) -> ChatJob: ...
    def clear_cache(self) -> None: ...
    def encode_single_token(self, bytes: bytes) -> int: ...
    def token_id(self, bytes: bytes) -> int | None: ...
    def special_tokens(self) -> list[tuple[str, int]]: ...
    def decode_bytes(self, tokens: Sequence[int], lossy: bool = False) -> bytes: ...
    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], num_threads: int | None = None) -> list[bytes]: ...
    def decode_single_token_bytes(self, token: int) -> bytes: ...
    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]: ...
    @property
    def n_vocab(self) -> int: ...
    @property
    def kind(self) -> str:
        """"rank", "score" or "merge"."""
    @property
    def bos_id(self) -> int | None: ...
    @property
    def eos_id(self) -> int | None: ...
    # rank models
    def encode_single_piece(self, piece: bytes) -> list[int]: ...
    def token_byte_values(self) -> list[bytes]: ...
    def mergeable_ranks(self) -> dict[bytes, int]: ...
    def to_bpe2(self, source_hash: bytes, name: str = "", zstd_level: int | None = None, trailer: bool = True) -> bytes: ...
    def to_tiktoken(self) -> bytes: ...
    def merges_from_ranks(self) -> list[tuple[int, int, int]]: ...
    def encode_with_last_piece(self, text: str, **kwargs: Any) -> tuple[list[int], int]:
        """encode's ids and how many of them the last piece gave (tiktoken's CoreBPE::encode)."""
    @property
    def n_mergeable(self) -> int: ...
    @property
    def max_rank(self) -> int: ...
    @property
    def pattern(self) -> str: ...
    @property
    def splitter(self) -> str:
        """Which pre-tokenizer runs the pattern: the name of a built-in pattern (a key of
        PATTERNS, run by its hand-written scanner), "automata" (an exact regex-automata rewrite
        of another GPT-2/GPT-4-family pattern) or "regex"."""
    # score models
    def score(self, id: int) -> float: ...
    def piece_kind(self, id: int) -> int:
        """The piece type (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)."""
    def pieces(self) -> list[tuple[bytes, float, int]]: ...
    def to_sentencepiece(self, data: bytes) -> bytes: ...
    def to_leap(self) -> bytes: ...
    @property
    def unk_id(self) -> int | None: ...
    @property
    def flavor(self) -> str: ...
    # merge-list models
    def tokens(self) -> list[bytes]: ...
    def added_tokens(self) -> list[tuple[str, int, bool]]: ...
    def merges(self) -> list[tuple[int, int, int]]: ...
    def to_qtkr(self, bos: int | None = None, eos: int | None = None, pad: int | None = None) -> bytes: ...

@final
class Trainer:
    """The BPE trainer's state (crates/python/src/train.rs), driven by bytepair/train.py."""

    def __new__(cls, pattern: str, num_threads: int) -> Trainer: ...
    def count(self, docs: list[str]) -> None: ...
    def count_lines(self, data: bytes, lossy: bool) -> tuple[int, str] | None: ...
    def seen(self) -> tuple[int, int]: ...
    def start_merging(self) -> tuple[int, int]: ...
    def merge(self, n_tokens: int, min_frequency: int, max_steps: int) -> tuple[int, bool]: ...
    def tokens(self) -> list[bytes]: ...
    def merges(self) -> list[tuple[int, int, int, int]]: ...

def bpe2_info(data: bytes) -> dict[str, Any]:
    """The header and trailing section of a BPE2/BPZ2 file (the table is not read)."""

def parse_tiktoken(data: bytes) -> list[tuple[bytes, int]]: ...
def known_encoding(name: str) -> tuple[str, str, list[tuple[str, int]], int | None]:
    """The pinned facts of a known encoding (crates/core/src/known.rs): (SHA-256 hex of its
    ranks as a .tiktoken file, split pattern, special tokens in order, explicit n_vocab or
    None). KeyError for a name the table does not hold."""
def known_encoding_by_sha256(digest: bytes) -> str | None:
    """The known encoding a ranks file with this SHA-256 (32 bytes) is named after, or None."""
def gpt2_to_tiktoken(vocab_bpe: bytes, encoder_json: bytes) -> bytes:
    """GPT-2's two files as a .tiktoken file's bytes (ranks checked to agree)."""


@final
class ChatJob:
    def result(self) -> _ChatAnswer: ...
    @property
    def stopped(self) -> bool:
        """A conversation was refused while converting (no later chunk is worth starting)."""

@final
class ChatMLFrame:
    """An encoding's ChatML frame: ``<|im_start|>``, ``<|im_end|>``, the ids of ``"\\n"``."""
    def __new__(cls, im_start: int, im_end: int, newline: list[int]) -> ChatMLFrame: ...
    def parts(self, messages: list[dict[str, str]]) -> tuple[list[int | str], list[Any]] | None:
        """Plain messages framed as ``(parts, trains)``; None if an assistant's content holds
        lone surrogates."""

@final
class ChatSpecials:
    """An encoding's special tokens (spelling -> id) for marking and splitting conversations."""
    def __new__(cls, tokens: dict[str, int]) -> ChatSpecials: ...
    def mark(self, text: str) -> str:
        """Each special spelling and private-use marker wrapped (the same str when none);
        UnicodeEncodeError for lone surrogates."""
    def frame(self, text: str, *, mask: bool, generation: bool, prompts: list[tuple[int, str]],
              end_of_turn: list[int], names: str) -> tuple[list[int | str], list[Any]]:
        """A rendering of marked strings as ``(parts, trains)``, framed as the core frames its
        own; ChatError when an assistant message's part cannot be placed, UnicodeEncodeError
        for lone surrogates."""

@final
class JinjaConversation:
    """A conversation prepared by ``JinjaPreparer.prepare``; ``encode_chat`` takes it too."""
    def parts(self) -> tuple[list[int | str], list[Any]]:
        """Rendered, marked and split: ``(parts, trains)``; ChatError, or NotImplementedError
        for what jinja2 must render."""

@final
class JinjaTemplate:
    """A Jinja chat template compiled by the Rust engine (minijinja); ChatError if invalid."""
    def __new__(cls, source: str) -> JinjaTemplate: ...
    @property
    def has_generation(self) -> bool: ...
    def render(self, context: dict[str, Any]) -> str:
        """ChatError for raise_exception; NotImplementedError for what jinja2 must render."""
    def preparer(self, specials: ChatSpecials, special_tokens: dict[str, str], variables: dict[str, Any],
                 add_generation_prompt: bool, mask: bool, end_of_turn: list[int], names: str,
                 own_tools: bool) -> JinjaPreparer:
        """Conversations' preparer with these options (the variables converted and marked
        once); NotImplementedError for a value jinja2 must render."""
    def render_json(self, context: str) -> str: ...

@final
class JinjaPreparer:
    """One template with one set of options, converting conversations for the core."""
    def prepare(self, messages: list[Any]) -> JinjaConversation:
        """Prepared messages converted (their strings marked) for the core to render and split;
        NotImplementedError for a value jinja2 must render."""
