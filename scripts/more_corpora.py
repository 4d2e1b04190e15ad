#!/usr/bin/env python3
"""Build the two corpora that ../shared/corpus/make_corpus.py does not make: Japanese and Russian.

    apt-get install -y manpages-ja manpages-ru       # once, as root
    python scripts/more_corpora.py corpus

Writes OUT_DIR/ja.txt  Japanese man pages: kana and kanji between roff markup (about 4 MB)
       OUT_DIR/ru.txt  Russian man pages: Cyrillic (about 4 MB)

Issue 14 measured the exact encoders on Japanese and Russian text, and Japanese is the one
script no shared corpus covers (its pieces mix kana, kanji and ASCII, where Chinese text is
kanji alone). The pages are read by the shared script's own reader (`manpages`), so these two
are made exactly as de, uk, tr and vi are. A package that is not installed is an error, not
an empty file: the parity tests would otherwise compare nothing.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED_DIR", REPO.parent / "shared"))

# name -> (man page language, Debian package)
CORPORA = {"ja": ("ja", "manpages-ja"), "ru": ("ru", "manpages-ru")}


def shared_reader():
    path = SHARED / "corpus" / "make_corpus.py"
    if not path.is_file():
        sys.exit(f"{path} not found (set BYTEPAIR_SHARED_DIR to the folder holding corpus/)")
    spec = importlib.util.spec_from_file_location("make_corpus", path)
    assert spec is not None and spec.loader is not None  # a .py file that exists
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.manpages


def main(out: str) -> None:
    manpages = shared_reader()
    os.makedirs(out, exist_ok=True)
    for name, (lang, package) in CORPORA.items():
        text = manpages(lang)
        if not text:
            sys.exit(f"{name}: no man pages in /usr/share/man/{lang}; is {package} installed?")
        with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{name}.txt {len(text.encode()):,} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "corpus")
