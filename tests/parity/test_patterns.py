"""The built-in split patterns, written once in crates/core/src/pretokenize/patterns.rs, are the
reference libraries' own: character for character tiktoken's (r50k, cl100k, o200k), llama-models'
(Llama 3) and rustbpe's default (its form of GPT-4's); GPT-2's own spelling splits as HF
tokenizers' ByteLevel pre-tokenizer does. A copy that drifted would lose the hand-written scanner
(tests/api/test_one_source.py) or split differently; these pin the strings to their sources."""

from __future__ import annotations

import random

from bytepair import _core
from fuzztext import PALETTE
from support import require_module


def test_tiktoken_patterns(reference):
    public = require_module("tiktoken_ext.openai_public")
    assert _core.PATTERNS["r50k"] == public.r50k_pat_str
    assert _core.PATTERNS["cl100k"] == reference("cl100k_base")._pat_str
    assert _core.PATTERNS["o200k"] == reference("o200k_base")._pat_str


def test_llama3_pattern():
    tokenizer = require_module("llama_models.llama3.tokenizer")
    assert _core.PATTERNS["llama3"] == tokenizer.Tokenizer.pat_str


def test_rustbpe_default_pattern():
    rustbpe = require_module("rustbpe")
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(["a b"]), vocab_size=256)  # no pattern given: its default
    assert _core.PATTERNS["rustbpe"] == tok.get_pattern()


def test_nanochat_pattern_is_rustbpes_with_two_digit_numbers():
    # nanochat is not a test dependency; its pattern is rustbpe's with \p{N}{1,2}.
    assert _core.PATTERNS["nanochat"] == _core.PATTERNS["rustbpe"].replace(r"\p{N}{1,3}", r"\p{N}{1,2}")


def test_gpt2_pattern_splits_as_hf_byte_level():
    pre_tokenizers = require_module("tokenizers.pre_tokenizers")
    regex = require_module("regex")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    table = {b: c for b, c in enumerate(_core.BYTE_LEVEL_CHARS)}
    pattern = regex.compile(_core.PATTERNS["gpt2"])
    rnd = random.Random(5)
    # The palette only, no random code points: HF's regex engine (Oniguruma) has older Unicode
    # tables, and letters assigned since would differ for that reason alone.
    for _ in range(2000):
        text = "".join(rnd.choice(PALETTE) for _ in range(rnd.randrange(30)))
        want = [piece for piece, _ in byte_level.pre_tokenize_str(text)]
        ours = ["".join(table[b] for b in p.encode()) for p in pattern.findall(text)]
        assert ours == want, text
