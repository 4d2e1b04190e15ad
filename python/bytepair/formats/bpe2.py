"""BPE2 and BPZ2, the binary rank-vocabulary tables (layout in ``crates/core/src/formats/bpe2.rs``
and docs/formats.md). The bytes are read and written in Rust; this module adds paths, the
trailing section's meaning (name, split pattern, special tokens) and ``verify``.

Compression is zstd, done in Rust by the ``zstd`` crate: the core reads every binary format
itself, so a Rust user gets BPZ2 without Python, the Python package gains no runtime
dependency, and the reader can refuse an implausible inflated size before allocating.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bytepair import _core
from bytepair.atomic import write_atomic  # noqa: F401 (its old home; formats/__init__.py imports it here)
from bytepair.errors import FormatError


@dataclass
class VerifyReport:
    """What ``verify`` compared; ``problems`` is empty when the table matches its source."""

    hash_ok: bool
    tokens_compared: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return self.hash_ok and not self.problems


def info(data: bytes, source: str = "<bytes>") -> dict:
    """Header and trailing section of a BPE2/BPZ2 file (the table itself is not read)."""
    try:
        return _core.bpe2_info(data)
    except FormatError as e:
        e.path = source
        raise


def core_from_bpe2(data: bytes, source: str, special_tokens: dict[str, int] | None, pat_str: str | None):
    try:
        return _core.Tokenizer.from_bpe2(
            data, None if special_tokens is None else list(special_tokens.items()), pat_str)
    except FormatError as e:
        e.path = source
        raise


def verify(table: bytes, source: bytes, table_name: str = "table", source_name: str = "source") -> VerifyReport:
    """Checks a BPE2/BPZ2 table against the ``.tiktoken`` file it was made from: the embedded
    SHA-256, then every rank's bytes, then that the table holds nothing else but the special
    tokens its trailing section names."""
    from bytepair.formats.tiktoken import parse_tiktoken_bpe

    head = info(table, table_name)
    digest = hashlib.sha256(source).digest()
    problems = []
    hash_ok = head["source_hash"] == digest
    if not hash_ok:
        problems.append(f"{table_name}: embedded source hash {head['source_hash'].hex()} is not the "
                        f"SHA-256 of {source_name} ({digest.hex()})")
    ranks = parse_tiktoken_bpe(source, source_name)
    specials = dict(head.get("special_tokens") or [])
    # The pattern is irrelevant to a table comparison; "." keeps the core happy.
    core = core_from_bpe2(table, table_name, specials, ".")
    in_table = core.mergeable_ranks()
    for token, rank in ranks.items():
        got = in_table.get(token)
        if got != rank:
            problems.append(f"rank {rank} ({token!r}): the table has "
                            + ("no such token" if got is None else f"it at id {got}"))
            if len(problems) > 20:
                break
    extra = len(in_table) - len(ranks)
    if extra > 0:
        problems.append(f"the table has {extra} mergeable tokens that {source_name} does not")
    return VerifyReport(hash_ok, len(ranks), problems)
