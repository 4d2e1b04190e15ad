#!/usr/bin/env python3
"""Regenerate the bundled BPE2 tables in python/bytepair/data from the pinned .tiktoken files.

    python scripts/bundle_vocab.py ../shared/vocab

Each table embeds the SHA-256 of its source in its header and, in its trailing section, the
encoding's name, split pattern and special tokens, so that ``bytepair.load`` of the table alone
is exactly that encoding (and converting it to any format is exact). Pattern and specials come
from the known-vocabulary table (bytepair/formats/known.py, over the registry's constants).
tests/api/test_registry.py checks the hash against the source file and every token;
tests/formats/test_bundled_tables.py checks the trailer against the registry.
"""
import hashlib
import sys
from pathlib import Path

from bytepair import _core
from bytepair.formats.known import by_sha256
from bytepair.registry.openai import SOURCE_SHA256

OUT = Path(__file__).resolve().parent.parent / "python" / "bytepair" / "data"


def main(src: str) -> None:
    for name, sha in SOURCE_SHA256.items():
        data = (Path(src) / f"{name}.tiktoken").read_bytes()
        digest = hashlib.sha256(data).digest()
        if digest.hex() != sha:
            sys.exit(f"{name}: SHA-256 {digest.hex()} is not the pinned {sha}")
        known = by_sha256(digest)
        assert known is not None and known.name == name, (name, known)
        core = _core.Tokenizer.from_tiktoken(data, list(known.special_tokens.items()), known.pattern)
        (OUT / f"{name}.bpe2").write_bytes(core.to_bpe2(digest, name))
        print(f"{name}.bpe2 written")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/vocab")
