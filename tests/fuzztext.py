"""Generated text for differential fuzzing of the pre-tokenizers against tiktoken.

Strings are drawn from a palette with a few characters of every class the built-in split
patterns tell apart (letters of each case class, modifier letters, marks, the contraction letters
and their case folds, digits of several kinds, apostrophes, every kind of whitespace, CJK, emoji,
punctuation), mixed with random code points, and with runs repeated, so class boundaries and
whitespace/newline mixes come up often. Shared by tests/parity/test_fuzz_pretokenize.py (bounded) and
benchmarks/fuzz_long.py (long runs).

`cjk_text` makes longer texts of CJK runs (every range of `Lo` ideographs, kana, Hangul) with
what ends or continues them: CJK and fullwidth punctuation, marks, `Lm`, numbers, spaces,
cased letters (the scanners classify three-byte characters from their first two bytes, and
the block path classifies them from a table and reads a CJK letter before an upper-case one
as complex for o200k).

`plain_text` makes longer texts of mostly what the pre-tokenizers' 64-byte block path takes
(ASCII, Latin-1, the two-byte letters, Hebrew and Arabic words, words with combining marks,
emoji; see crates/core/src/pretokenize/block.rs), with the palette's other characters now and
then, so that windows of plain text meet every kind of boundary.
"""

from __future__ import annotations

import random

PALETTE = (
    list("azAZsStTlLvVeErRdDmMkK")
    + ["ſ", "K", "é", "É", "ß", "Ω", "ω", "ǅ", "ʰ", "ᵃ", "ⅰ", "Ⅻ"]  # Ll Lu Lt Lm Nl ...
    + ["中", "文", "あ", "ア", "한", "א", "ع", "ก", "ह"]  # Lo
    + ["\u0301", "\u0903", "\u20dd", "\u064b", "\u0e31"]  # Mn Mc Me
    + list("0123456789") + ["٣", "²", "½", "①", "𝟙"]  # Nd No
    + ["'", "'", "'", "’", "`", '"']
    + [" ", " ", " ", " ", "\t", "\n", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u00a0",
       "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u3000", "\x1c", "\x1f"]
    + list(".,;:!?/\\-_()[]{}<>@#$%^&*+=|~") + ["€", "£", "…", "—", "«"]
    + ["😀", "👍", "\ufe0f", "\u200d", "🇺🇸", "\x00", "\x7f", "\u00ad", "\ue000", "\U0010fffd"]
    + ["'s", "'S", "'ll", "'LL", "'Re", "'ve", "'m", "'d", "'t", "'ſ", "n't"]
    + ["http://x.org/a/b", "//", "\n\n", "  \n", " \n ", "    ", "1234567", "abc", "ABC", "Abc"]
)


def random_char(rnd: random.Random) -> str:
    while True:
        cp = rnd.randrange(0x110000) if rnd.random() < 0.5 else rnd.randrange(0x3000)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def random_text(rnd: random.Random, max_parts: int = 30) -> str:
    parts = []
    for _ in range(rnd.randrange(max_parts + 1)):
        p = random_char(rnd) if rnd.random() < 0.15 else rnd.choice(PALETTE)
        if rnd.random() < 0.15:
            p *= rnd.randrange(2, 6)
        parts.append(p)
    return "".join(parts)


# What the block path classifies itself: ASCII letters, digits, every ASCII space and
# punctuation, apostrophes before and not before contraction letters, contractions after
# letters in every case, Latin-1 letters, the two-byte letters of one case (Cyrillic, Greek,
# Latin Extended, Armenian), the three-byte letters (Vietnamese's Latin Extended Additional,
# Georgian, CJK, ...) and marks, two- and three-byte punctuation, and the runs code and prose
# are made of.
PLAIN = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") * 2
    + list("0123456789") + ["12345", "3.14", "1,000"]
    + [" ", " ", " ", " ", " ", "  ", "    ", "\t", "\n", "\n", "\r\n", "\r", "\x0b", "\x0c", " \n", "\n    ",
       "\n\n", "  \n  ", "\t\n"]
    + list(".,;:!?/\\-_()[]{}<>@#$%^&*+=|~`\"") + ["//", "/*", "*/", "...", "\x00", "\x1f", "\x7f"]
    + ["'", "'x", "'s", "'T", "n't", "'ll", "'Re", "'q"]
    # contractions right after a letter, which the block path decides itself, and near misses
    + ["'vE", "'D", "'M", "'LL", "'rx", "'l", "I'd", "we'Re", "KING'S", "Дім'S", "việ't"]
    + list("äöüÄÖÜßéÉàÀçÇñÑøØþÞÿ") + ["×", "÷", "«", "»", "§", "©", "\u00ad", "…", "’", "‐", "–", "\u200b", "‰"]
    + ["the", " the", "The", "LORD", "HTTPServer", "iPhone", "def", "self", "Über", "größer"]
    + list("дяіїєґДЯІЇЄҐѣѢӏӀөӨσςωάΣΩΆıİşŞğĞőǅǆơưƠƯաԱạẠếẾữỮẖẞ") + ["·", ";", "΄", "҂", "՝", "'д", "'Ж", "'ạ"]
    + ["слово", " слово", "Слово", "ЄВРОПА", "м'ясо", "ΑθήναΣ", " İstanbul'da", "Việt", " Nguyễn"]
    # letters in both of o200k's case sets (`Lo`, `Lm`), next to cased ones on either side
    + ["שלום", " שלום", "مرحبا", " مرحبا", "،", "؟", "״", "ـ", "كتابA", "Aكتاب", "שלוםab", "中A", " 東京Tokyo"]
    # combining marks (Devanagari, Bengali, Tamil, Thai, Hebrew points, Arabic harakat, accents):
    # letters in both of o200k's sets there, punctuation for cl100k and GPT-2; after
    # punctuation, digits, spaces, apostrophes and cased letters, and on their own
    + ["नमस्ते", " दुनिया", "हिन्दी", "क्ष", "।", " বাংলা", " தமிழ்", "ภาษาไทย", "ที่", "שָׁלוֹם", " مَرْحَبًا", "e\u0301"]
    + ["ि", "ा", "्", "\u0301", "\u064e", "!ा", "..ि", " !ा", "5ा", "'ा", "ा's", "ाA", "Aा", "Кा", "中ा"]
    # three-byte characters with the lead 0xe1 (U+1000-U+1FFF): Georgian in both cases,
    # Myanmar and Khmer with their marks, Ethiopic, Mongolian, polytonic Greek (`ᾼ` is Lt);
    # their digits, the Ogham space, a both-set letter before an upper-case one
    + ["საქართველო", " ენა", "ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ", "Ქართული", "მᲐ", "မြန်မာ", " ဘာသာ", "။", "ខ្មែរ", " ភាសា", "។", "አማርኛ", "።",
       "ᠮᠣᠩᠭᠣᠯ", "ἀρχῇ", " Ἐν", "ᾼ", "ἀᾼ", "၁၂", "១", "፩", "\u1680", "ကᲐ", "'ᲐᲑ", "ᴀᵃ"]
    # emoji (U+1F000-U+1FFFF, four-byte punctuation to the block path) after and before
    # words, spaces, digits and apostrophes, in runs, with skin tones, joiners, variation
    # selectors, flags; and the enclosed numbers among them, which stay complex
    + ["😀", " 😂", "👍🏽", "🔥🔥🔥", "👨\u200d👩\u200d👧", "🇩🇪", "❤\ufe0f", "😀a", "😀Ab", " 🙏Thanks", "5🎉", "'😀",
       "😀's", "🤔'll", "\U0001f000", "\U0001ffff", "🄁", "\U0001fbf9", "𝐀"]
    # whitespace of two and three bytes, which the block path reads as it reads a tab: French's
    # no-break spaces before `;:!?»` and after `«`, numbers grouped by one, spaces in CJK, in
    # runs with ASCII whitespace and newlines, before apostrophes, Cyrillic, emoji
    + ["\u00a0", " \u00a0", "\u00a0 ", "mot\u00a0;", "«\u00a0mot\u00a0»", "10\u00a0000", "\u00a0\u00a0x", "\u00a0\n",
       "\n\u00a0", "\u202f!", "\u2009", "\u2003\u2009", "\u2002中", "\u00a0's", "\u00a0'x", "\u00a0д", "\x85",
       "\u2028", "\u205f", "\u00a0😀", "\u205fA"]
)


def plain_text(rnd: random.Random, n: int) -> str:
    """About `n` characters, mostly from PLAIN, one part in 40 from the whole palette."""
    parts, size = [], 0
    while size < n:
        p = rnd.choice(PALETTE) if rnd.random() < 0.025 else rnd.choice(PLAIN)
        if rnd.random() < 0.1:
            p *= rnd.randrange(2, 6)
        parts.append(p)
        size += len(p)
    return "".join(parts)


# Letters of the CJK scripts, from every range: CJK Extension A, the Unified block to its last
# code point, compatibility ideographs, Extensions B-H (planes 2 and 3), Hangul syllables and
# Jamo, kana (also halfwidth), Bopomofo, Yi; and the `Lm` and marks that sit among them.
CJK_LETTERS = (
    list("中文的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生")
    + list("㐀䶿鿿丽﨎𠀀𪛟𫝀𬺰𰀀𱍐가힣한국어ᄀㄱあゟアｱㄅꀀ〆") + ["ー", "ゝ", "々", "ｰ", "\u3099", "\u302a", "\u0301"]
    # Common kana, whose first two bytes some tokens end with after another kana's last byte
    # (cl100k_base: `し` + `e3 81`), so whether they start sealed depends on the byte before
    # them (engine.md 3b, "The byte before, exactly").
    + list("てがうさなたしのはをにでとまするいかきルドマシプリコフョッタラェ")
)
# What ends or continues a run: CJK, fullwidth and box-drawing punctuation, the ideographic
# space, numbers (`Nl` 〇, `No` ㈠, fullwidth digits), Yijing symbols (`So` amid the
# ideographs), cased letters (fullwidth, ASCII, Latin-1, Cyrillic, `Lt`), apostrophes, spaces.
CJK_OTHER = (
    list("，。、「」《》（）：！？・゛〇〡㈠\u3000０９䷀─│┌") + ["\u00a0", "Ａ", "ｚ", "A", "z", "Ab", "aB", "É", "é", "Д", "д", "ǅ", "ʰ"]
    + [" ", "  ", "    ", "\n", "\n\n", "\r\n", "\t", "'s", "'S", "'", "’", "1", "23", "456", ".", ", ", "/", "-- ", "😀"]
)


def cjk_text(rnd: random.Random, n: int) -> str:
    """About `n` characters: runs of 1-30 CJK letters, each followed by 1-3 parts of what ends
    or continues a run."""
    parts, size = [], 0
    while size < n:
        run = "".join(rnd.choice(CJK_LETTERS) for _ in range(rnd.randrange(1, 31)))
        other = "".join(rnd.choice(CJK_OTHER) for _ in range(rnd.randrange(1, 4)))
        parts.append(run + other)
        size += len(run) + len(other)
    return "".join(parts)
