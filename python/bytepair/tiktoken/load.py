"""``tiktoken.load``: reading vocabulary files by path or URL, with tiktoken's names and
arguments. The work is bytepair's: ``bytepair/fetch.py`` (cache, download, pinned hashes) and
``bytepair/formats/`` (the parsers, in Rust).

Where the behaviour differs from tiktoken's (docs/tiktoken.md lists it all):

- ``read_file`` of a URL uses the cache first (tiktoken's always downloads).
- ``read_file_cached`` also looks in ``$BYTEPAIR_CACHE_DIR`` and under the file's own name; a
  cached copy with the wrong hash raises HashMismatchError instead of being downloaded again;
  local files are read in place, not copied into the cache; ``TIKTOKEN_CACHE_DIR=""`` does not
  turn the cache off.
- ``load_tiktoken_bpe`` refuses a token listed twice (FormatError naming the line), where
  tiktoken silently keeps the last rank; a malformed line is a FormatError (a ValueError, as
  tiktoken's error is).
- ``data_gym_to_mergeable_bpe_ranks`` raises FormatError (tiktoken: AssertionError) when
  ``encoder.json`` disagrees with ``vocab.bpe``, and NotImplementedError for
  ``clobber_one_byte_tokens=True``.
- ``dump_tiktoken_bpe`` writes a local file (atomically); tiktoken writes through blobfile.
"""

from __future__ import annotations

import os

from bytepair import fetch
from bytepair.errors import FormatError
from bytepair.fetch import check_hash
from bytepair.formats import gpt2
from bytepair.formats import tiktoken as tiktoken_format
from bytepair.formats.tiktoken import load_tiktoken_bpe

__all__ = ["check_hash", "data_gym_to_mergeable_bpe_ranks", "dump_tiktoken_bpe", "load_tiktoken_bpe",
           "read_file", "read_file_cached"]


def read_file(blobpath: str) -> bytes:
    """The bytes of a local file or a URL (through bytepair's cache)."""
    return fetch.read_file(blobpath)


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """The bytes of a local file or a URL, through the cache, checked against
    ``expected_hash`` (SHA-256 hex) when given: HashMismatchError (a ValueError) if they differ."""
    return fetch.read_file(blobpath, expected_hash)


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """``{token bytes: rank}`` from GPT-2's ``vocab.bpe`` and ``encoder.json`` (paths or URLs).

    Unlike ``bytepair.formats.gpt2.data_gym_to_mergeable_bpe_ranks``, which takes the files'
    contents, this takes where they are, as tiktoken's does.
    """
    if clobber_one_byte_tokens:
        raise NotImplementedError(
            "clobber_one_byte_tokens=True (single-byte ranks taken from encoder.json) is not "
            "supported: bytepair requires encoder.json to agree with vocab.bpe"
        )
    vocab_bpe = fetch.read_file(vocab_bpe_file, vocab_bpe_hash)
    encoder_json = fetch.read_file(encoder_json_file, encoder_json_hash)
    try:
        return gpt2.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    except FormatError as e:
        # The parser names the file at fault by its role; give its real location.
        e.path = os.fspath(encoder_json_file if e.path == "encoder.json" else vocab_bpe_file)
        raise


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Writes ``{token bytes: rank}`` as a ``.tiktoken`` file, in rank order."""
    tiktoken_format.dump_tiktoken_bpe(bpe_ranks, tiktoken_bpe_file)
