#!/usr/bin/env python3
"""Regenerate the bundled BPE2 tables in python/bytepair/data from the pinned .tiktoken files.

    python scripts/bundle_vocab.py ../shared/vocab

Each table embeds the SHA-256 of its source; tests/api/test_registry.py checks it against the
source file and compares every token.
"""
import hashlib
import sys
from pathlib import Path

from bytepair import _core
from bytepair.registry.openai import SOURCE_SHA256

OUT = Path(__file__).resolve().parent.parent / "python" / "bytepair" / "data"


def main(src: str) -> None:
    for name, sha in SOURCE_SHA256.items():
        data = (Path(src) / f"{name}.tiktoken").read_bytes()
        digest = hashlib.sha256(data).digest()
        if digest.hex() != sha:
            sys.exit(f"{name}: SHA-256 {digest.hex()} is not the pinned {sha}")
        core = _core.CoreBPE.from_tiktoken(data, [], "x")
        (OUT / f"{name}.bpe2").write_bytes(core.to_bpe2(digest, trailer=False))
        print(f"{name}.bpe2 written")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/vocab")
