"""Training a byte-level BPE vocabulary: the Python surface of the trainer.

This module owns the rules and the I/O: pattern presets, argument checks, reading files
(plain text and JSON Lines), batching a stream of documents, the progress bar, logging and
Ctrl-C. The work runs in Rust (``bytepair._core.Trainer``, over ``crates/core/src/train``) with
the GIL released: each batch of documents is split and counted on all cores, then the merge
loop runs a slice of merges per call, so KeyboardInterrupt is seen between calls and nothing
is written or returned half-way.

The algorithm is stated exactly in docs/training.md; ``bytepair.train_reference`` is a plain
Python version of it that the tests compare against.
"""

from __future__ import annotations

import os
import sys
import time

from bytepair import _core
from bytepair.encoding import Encoding
from bytepair.errors import FormatError, PatternError, TrainingError, VocabError

# json, logging and typing are imported where they are used, not here: `import bytepair`
# imports this module, and start-up should not pay for them (see bytepair/__init__.py).
TYPE_CHECKING = False  # for type checkers: a constant, without importing typing
if TYPE_CHECKING:
    from typing import Iterable, Iterator, Sequence

    import numpy as np
    import numpy.typing as npt

__all__ = ["PATTERNS", "TrainedEncoding", "resolve_pattern", "train", "train_files"]


def _log():
    """The "bytepair.train" logger (logging is imported when training first logs)."""
    import logging

    return logging.getLogger("bytepair.train")


# nanochat's split pattern, as nanochat writes it: the GPT-4 pattern in the form minbpe and
# rustbpe use (no possessive `\s++$` branch, `\s+` last) with numbers split 1-2 digits at a time.
# Like every built-in pattern, written once in Rust (crates/core/src/pretokenize/patterns.rs).
NANOCHAT_PATTERN = _core.PATTERNS["nanochat"]

# minbpe's and rustbpe's form of the GPT-4 pattern (rustbpe's default): the same as
# NANOCHAT_PATTERN with digits 1-3 at a time. Not a preset (use "gpt4"); kept for comparisons.
RUSTBPE_GPT4_PATTERN = _core.PATTERNS["rustbpe"]

#: Named split patterns accepted by ``pattern=``. Anything else is taken as a regex. Each is a
#: built-in pattern; "gpt2" is tiktoken's spelling of GPT-2's pattern (as the gpt2 encoding
#: has it), not GPT-2's own (``_core.PATTERNS["gpt2"]``), which splits the same.
PATTERNS: dict[str, str] = {
    "gpt2": _core.PATTERNS["r50k"],
    "r50k": _core.PATTERNS["r50k"],
    "gpt4": _core.PATTERNS["cl100k"],
    "cl100k": _core.PATTERNS["cl100k"],
    "o200k": _core.PATTERNS["o200k"],
    "llama3": _core.PATTERNS["llama3"],
    "nanochat": _core.PATTERNS["nanochat"],
}

# A batch of documents is handed to Rust once it holds this many characters (or documents):
# large enough that every thread gets a useful share, small enough to bound memory and to
# notice Ctrl-C within a fraction of a second.
_BATCH_CHARS = 4 << 20
_BATCH_DOCS = 65536
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
# Merges per call into Rust; between calls the progress bar moves and signals are handled.
_MERGE_SLICE = 64


class TrainedEncoding(Encoding):
    """The :class:`~bytepair.Encoding` that training returns, plus what trainers want to keep.

    ``merges`` lists each merge as ``(left id, right id, id, count)`` in the order made.
    """

    merges: list[tuple[int, int, int, int]] = []

    def __getstate__(self) -> object:
        state = super().__getstate__()
        if isinstance(state, dict):
            state = {**state, "merges": self.merges}
        return state

    def __setstate__(self, value: object) -> None:
        merges = []
        if isinstance(value, dict) and "merges" in value:
            value = dict(value)
            merges = value.pop("merges")
        super().__setstate__(value)
        self.merges = merges

    def token_bytes(self) -> npt.NDArray[np.int32]:
        """Each token's length in bytes, indexed by id; 0 for special tokens and unused ids.

        This is what nanochat's bits-per-byte evaluation weighs tokens by.
        """
        import numpy as np

        out = np.zeros(self.n_vocab, dtype=np.int32)
        for token, rank in self._mergeable_ranks.items():
            out[rank] = len(token)
        return out

    def save(self, path: str | os.PathLike, format: str | None = None, *, lossy: bool = False) -> list[str]:
        """Writes the vocabulary (atomically) in ``format``, by default the one the file name's
        suffix names, and BPE2 when the name names none: BPE2 keeps the ranks, the split pattern
        and the special tokens. A format that cannot carry all three (a ``.tiktoken`` file holds
        the ranks only) is refused with a LossyFormatError unless ``lossy=True``; the list
        returned names what was dropped."""
        from bytepair.formats import format_for_path

        if format is None:
            try:
                format = format_for_path(path)
            except ValueError:
                format = "bpe2"
        return super().save(path, format, lossy=lossy)

    @property
    def pat_str(self) -> str:
        return self._pat_str

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)


def resolve_pattern(pattern: str) -> str:
    """A preset name (``gpt2``, ``gpt4``/``cl100k``, ``o200k``, ``llama3``, ``nanochat``) to its
    regex; any other string is returned as is (it is compiled, and checked, by the trainer)."""
    if not isinstance(pattern, str) or not pattern:
        raise TypeError("pattern must be a preset name or a non-empty regex string")
    return PATTERNS.get(pattern.lower(), pattern)


def train(
    texts: Iterable[str],
    vocab_size: int,
    *,
    pattern: str = "gpt4",
    special_tokens: Sequence[str] | None = None,
    min_frequency: int = 1,
    num_threads: int | None = None,
    show_progress: bool | None = None,
    name: str = "trained",
) -> TrainedEncoding:
    """Learns a byte-level BPE vocabulary from ``texts`` (any iterable of str, read once, as a
    stream) and returns it as an Encoding, ready to encode.

    Ids 0-255 are the single bytes; merge k makes id 256 + k; training stops at
    ``vocab_size - len(special_tokens)`` tokens or when no pair occurs ``min_frequency`` times;
    the special tokens take the next ids, in the order given. Ties go to the smallest pair of
    ids. See docs/training.md for the exact algorithm.

    >>> enc = bytepair.train(["hello world"] * 10, 260)
    >>> enc.decode(enc.encode("hello"))
    'hello'
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str documents, not a single "
                        f"{type(texts).__name__} (wrap it in a list)")
    pat, specials, threads = _check_arguments(vocab_size, pattern, special_tokens, min_frequency, num_threads)
    trainer = _new_trainer(pat, threads)
    with _progress(show_progress, "counting", unit="B", unit_scale=True) as bar:
        _count(trainer, texts, bar, None)
    return _merge(trainer, pat, vocab_size, specials, min_frequency, show_progress, name, "the corpus")


def train_files(
    paths: Sequence[str | os.PathLike] | str | os.PathLike,
    vocab_size: int,
    *,
    text_field: str = "text",
    errors: str = "strict",
    pattern: str = "gpt4",
    special_tokens: Sequence[str] | None = None,
    min_frequency: int = 1,
    num_threads: int | None = None,
    show_progress: bool | None = None,
    name: str = "trained",
) -> TrainedEncoding:
    """:func:`train` on files, read as a stream. ``.jsonl``/``.ndjson`` files hold one JSON
    object per line and the text of each is its ``text_field``; any other file is plain UTF-8
    text with one document per line (as HF tokenizers and rustbpe read text files). Plain text
    goes to Rust in blocks of bytes, with no Python object per line.

    ``errors="strict"`` turns bytes that are not UTF-8 into a FormatError naming the file and
    byte offset; ``errors="replace"`` reads them as U+FFFD.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    pat, specials, threads = _check_arguments(vocab_size, pattern, special_tokens, min_frequency, num_threads)
    sizes = []
    for p in paths:
        try:
            sizes.append(os.path.getsize(p))
        except OSError as e:
            raise FileNotFoundError(e.errno, f"cannot read training file: {e.strerror}", p) from None
    trainer = _new_trainer(pat, threads)
    with _progress(show_progress, "counting", unit="B", unit_scale=True, total=sum(sizes)) as bar:
        for p in paths:
            if p.endswith(_JSONL_SUFFIXES):
                _count(trainer, _read_jsonl(p, text_field, errors), None, p)
                if bar is not None:
                    bar.update(os.path.getsize(p))
            else:
                _count_text_file(trainer, p, errors, bar)
    what = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    return _merge(trainer, pat, vocab_size, specials, min_frequency, show_progress, name, what)


# ------------------------------------------------------------------------------- the stages


# The trainer's thread limit (crates/python/src/train.rs MAX_THREADS).
_MAX_THREADS = 1024


def _check_arguments(vocab_size, pattern, special_tokens, min_frequency, num_threads):
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a sequence of str, not one str")
    specials = list(special_tokens or ())
    seen: set[str] = set()
    for s in specials:
        if not isinstance(s, str) or not s:
            raise VocabError(f"special tokens must be non-empty str, got {s!r}")
        if s in seen:
            raise VocabError(f"special token {s!r} is given twice")
        seen.add(s)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256 + len(specials):
        raise VocabError(
            f"vocab_size {vocab_size} is too small: the 256 byte tokens"
            + (f" and {len(specials)} special tokens" if specials else "")
            + f" need at least {256 + len(specials)}"
        )
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an int >= 1, got {min_frequency!r}")
    if num_threads is None:
        try:
            num_threads = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            num_threads = os.cpu_count() or 1
    elif isinstance(num_threads, bool) or not isinstance(num_threads, int) or not 1 <= num_threads <= _MAX_THREADS:
        # Bounded: each thread has its own count table and OS thread (2**31 aborted).
        raise ValueError(f"num_threads must be an int from 1 to {_MAX_THREADS}, got {num_threads!r}")
    pat = resolve_pattern(pattern)
    return pat, specials, num_threads


def _new_trainer(pattern: str, threads: int):
    try:
        return _core.Trainer(pattern, threads)
    except PatternError as e:
        raise PatternError(f"invalid split pattern {pattern!r}: {e}") from None


def _count(trainer, texts: Iterable[str], bar, source: str | None) -> None:
    """Feeds documents to the trainer in batches. One batch is counted (in Rust, GIL released,
    on all cores) while this thread collects the next."""
    from concurrent.futures import ThreadPoolExecutor

    in_flight = None
    # On Ctrl-C or bad input the batch in flight cannot be stopped half-way: leaving the `with`
    # waits for it, then the exception goes on up.
    with ThreadPoolExecutor(1, thread_name_prefix="bytepair-count") as pool:
        for batch in _batches(texts, source):
            if in_flight is not None:
                in_flight.result()
            in_flight = pool.submit(_count_batch, trainer, batch, bar)
        if in_flight is not None:
            in_flight.result()


def _batches(texts: Iterable[str], source: str | None) -> Iterator[list[str]]:
    batch: list[str] = []
    chars = 0
    for doc in texts:
        if not isinstance(doc, str):
            where = f" in {source}" if source else ""
            raise TypeError(f"training texts must be str, got {type(doc).__name__}{where}")
        batch.append(doc)
        chars += len(doc)
        if chars >= _BATCH_CHARS or len(batch) >= _BATCH_DOCS:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def _count_batch(trainer, batch: list[str], bar) -> None:
    try:
        trainer.count(batch)
    except UnicodeEncodeError:
        # Lone surrogates cannot be UTF-8; count them as U+FFFD, as encoding does.
        batch = [d.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for d in batch]
        trainer.count(batch)
    if bar is not None:
        bar.update(sum(len(d) for d in batch))  # characters: close enough to bytes for a bar


def _merge(trainer, pat, vocab_size, specials, min_frequency, show_progress, name, what) -> TrainedEncoding:
    docs, nbytes = trainer.seen()
    t0 = time.perf_counter()
    distinct, total = trainer.start_merging()
    if total == 0:
        raise TrainingError(f"{what} is empty: no text to train on ({docs} documents, {nbytes} bytes)")
    _log().info("counted %d documents, %d bytes: %d chunks, %d distinct", docs, nbytes, total, distinct)
    target = vocab_size - len(specials)
    done = False
    n_tokens = 256
    with _progress(show_progress, "merging", total=target - 256, unit="tok") as bar:
        while not done:
            n_tokens, done = trainer.merge(target, min_frequency, _MERGE_SLICE)
            if bar is not None:
                bar.update(n_tokens - 256 - bar.n)
    _log().info("made %d tokens in %.2f s", n_tokens, time.perf_counter() - t0)
    if n_tokens < target:
        _log().warning(
            "stopped at %d tokens (asked for %d): no pair occurs %d or more times",
            n_tokens, target, min_frequency,
        )
    tokens = trainer.tokens()
    ranks = {t: i for i, t in enumerate(tokens)}
    special_ids = {s: n_tokens + i for i, s in enumerate(specials)}
    enc = TrainedEncoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=special_ids)
    enc.merges = trainer.merges()
    return enc


# ------------------------------------------------------------------------------- input


def _count_text_file(trainer, path: str, errors: str, bar, block: int = 4 << 20) -> None:
    """Hands a plain text file to Rust a block at a time (cut at a newline); Rust checks the
    UTF-8, cuts the lines and counts them, so no Python object is made per line."""
    offset = 0  # file offset of `pending`
    pending = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(block)
            if data:
                pending += data
                cut = pending.rfind(b"\n") + 1
                if cut == 0:
                    continue  # one long line: read on until it ends
            else:
                cut = len(pending)
                if not cut:
                    break
            bad = trainer.count_lines(pending[:cut], errors == "replace")
            if bad is not None:
                pos, reason = bad
                raise FormatError(f"not valid UTF-8 ({reason})", f"byte {offset + pos}", path)
            if bar is not None:
                bar.update(cut)
            offset += cut
            pending = pending[cut:]
            if not data:
                break


def _decode(data: bytes, path: str, offset: int, errors: str) -> str:
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise FormatError(f"not valid UTF-8 ({e.reason})", f"byte {offset + e.start}", path) from None


def _read_jsonl(path: str, text_field: str, errors: str) -> Iterator[str]:
    import json

    offset = 0
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            line = _decode(raw, path, offset, errors)
            offset += len(raw)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise FormatError(f"not JSON: {e.msg}", f"line {lineno}", path) from None
            except RecursionError:  # Python's json parser recurses once per nesting level
                raise FormatError("JSON nested too deeply", f"line {lineno}", path) from None
            if not isinstance(record, dict) or text_field not in record:
                raise FormatError(f"no {text_field!r} field", f"line {lineno}", path)
            text = record[text_field]
            if not isinstance(text, str):
                raise FormatError(f"field {text_field!r} is {type(text).__name__}, not a string",
                                  f"line {lineno}", path)
            yield text


# ------------------------------------------------------------------------------- progress


class _NoBar:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _progress(show: bool | None, desc: str, **kw):
    """A tqdm bar on a terminal (or when ``show`` is True); nothing otherwise."""
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        _log().info("install tqdm for a progress bar")
        return _NoBar()
    return tqdm(desc=desc, dynamic_ncols=True, **kw)
