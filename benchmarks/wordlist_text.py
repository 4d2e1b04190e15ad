"""Text of real words for scripts no packaged corpus covers (Hindi, Thai, Bengali, ...).

The corpora of ../shared/corpus come from Debian packages of prose and man pages, and none of
them is in an Indic script or Thai. Their dictionaries are packaged, though (`hunspell-hi`,
`hunspell-th`, `hunspell-bn`, ...): this draws words from one with a Zipf distribution (real
text repeats its common words, which is what the piece cache lives on) and writes sentences of
4-14 of them, a comma now and then, ended by the script's sentence mark. For measuring speed
(`stage ... split|encode`, `encode.py`-style runs), not exactness: the parity tests use their
own generated texts (tests/fuzztext.py).

    apt-get download hunspell-hi && dpkg -x hunspell-hi_*.deb hi
    python benchmarks/wordlist_text.py hi/usr/share/hunspell/hi_IN.dic hi.txt --end '। '
    python benchmarks/wordlist_text.py th/usr/share/hunspell/th_TH.dic th.txt --sep '' --end ' '

Thai writes no space between words (`--sep ''`), only between phrases.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random


def words(dic: str) -> list[str]:
    """The words of a hunspell `.dic` file (first line: the count; `word/FLAGS` after)."""
    with open(dic, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    return [w for w in (line.split("/")[0].strip() for line in lines) if w]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dic")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=1.6, help="MB of UTF-8 to write")
    ap.add_argument("--sep", default=" ", help="between words")
    ap.add_argument("--end", default=". ", help="after each sentence")
    ap.add_argument("--zipf", type=float, default=1.07, help="exponent of the word frequencies")
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    ws = words(a.dic)
    rnd.shuffle(ws)  # which word is common is left to chance, not to the file's order
    cum = list(itertools.accumulate(1 / (i + 1) ** a.zipf for i in range(len(ws))))
    out, size = [], 0
    while size < a.mb * 1e6:
        s = a.sep.join(ws[bisect.bisect_left(cum, rnd.random() * cum[-1])] for _ in range(rnd.randint(4, 14)))
        s += ("," if rnd.random() < 0.15 else "") + a.end
        out.append(s)
        size += len(s.encode())
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("".join(out))


if __name__ == "__main__":
    main()
