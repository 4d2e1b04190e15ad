"""Text in a language no packaged corpus covers, from the translations Debian ships.

The corpora of ../shared/corpus are prose and man pages; none is in Georgian, Khmer, Burmese
or Amharic, scripts whose characters the block pre-tokenizer classifies on their own paths
(three-byte characters with the lead 0xe1: docs/engine.md 1a). Their user-interface
translations are packaged, though: Firefox's language packs (`firefox-esr-l10n-ka`, `-km`,
`-my`: the values of the `.ftl` and `.properties` files inside the `.xpi`) and LibreOffice's
(`libreoffice-l10n-am`: gettext `.mo` files). This writes those strings, one per line. Real
sentences of the language with the placeholders and markup such strings carry; for measuring
speed (`stage ... split|encode`, `encode.py --text NAME=PATH`), not exactness.

    apt-get download firefox-esr-l10n-ka && dpkg -x firefox-esr-l10n-ka_*.deb ka
    python benchmarks/translation_text.py ka.txt ka/usr/lib/firefox-esr/browser/extensions/*.xpi
    apt-get download libreoffice-l10n-am && dpkg -x libreoffice-l10n-am_*.deb am
    python benchmarks/translation_text.py am.txt $(find am -name '*.mo')
"""

from __future__ import annotations

import argparse
import gettext
import re
import zipfile

# `key = value` (Fluent messages) and `.attribute = value` (their attributes); comments and
# multi-line continuations are left out.
FLUENT = re.compile(r"\s*\.?[\w.-]+\s*=\s*(.+)")


def xpi_strings(path: str) -> list[str]:
    """The message values of a Firefox language pack: `.ftl` (Fluent) and `.properties`."""
    out = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if not name.endswith((".ftl", ".properties")):
                continue
            for line in z.read(name).decode("utf-8", "replace").splitlines():
                if line.lstrip().startswith("#"):
                    continue
                if name.endswith(".ftl"):
                    m = FLUENT.match(line)
                    if m:
                        out.append(m.group(1))
                elif "=" in line:
                    out.append(line.split("=", 1)[1].strip())
    return out


def mo_strings(path: str) -> list[str]:
    """The translated strings of a gettext catalogue (plural forms each on a line)."""
    with open(path, "rb") as f:
        catalog = gettext.GNUTranslations(f)._catalog  # the parsed catalogue: msgid -> msgstr
    return [line for text in catalog.values() for line in text.split("\x00")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("sources", nargs="+", help=".xpi language packs or .mo catalogues")
    a = ap.parse_args()
    lines = []
    for src in a.sources:
        lines += xpi_strings(src) if src.endswith(".xpi") else mo_strings(src)
    text = "\n".join(line for line in lines if line.strip()) + "\n"
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{a.out}: {len(text.encode()):,} bytes")


if __name__ == "__main__":
    main()
