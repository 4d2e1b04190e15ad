"""Loading stays linear in a special token's length.

A special token spelled as one character repeated N times made loading take time in N
squared (the Aho-Corasick DFA build followed failure links state by state): 40,000
characters took 6.6 s as BPE2 and 20 s as tokenizer.json, and the 2,000,000 used here would
take hours. Each case runs in a subprocess killed after a generous deadline, which bounds a
hang rather than measuring speed; a working load takes well under a second.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import REPO

GOLDEN = REPO / "tests" / "data" / "golden"
N = 2_000_000
DEADLINE = 300  # seconds

CASES = {
    "bpe2": f"""
from bytepair import _core
sp = "a" * {N}
tok = _core.Tokenizer.from_bpe2(open({str(GOLDEN / 'tiny.bpe2')!r}, "rb").read(), [(sp, 1000)], r"\\s+|\\S+")
assert tok.encode("x" + sp + "x", allowed_special="all")[1] == 1000
""",
    "tokenizer.json": f"""
import json, bytepair.formats
sp = "a" * {N}
j = json.load(open({str(GOLDEN / 'tiny_hf.json')!r}))
top = max(j["model"]["vocab"].values()) + len(j["added_tokens"]) + 1
for normalized, special, i in ((False, True, 1), (True, False, 2)):
    j["added_tokens"].append({{"id": top + i, "content": ("b" if normalized else "a") * {N},
        "single_word": False, "lstrip": False, "rstrip": False, "normalized": normalized, "special": special}})
enc = bytepair.formats.loads(json.dumps(j).encode(), format="tokenizer.json")
assert enc.encode("x" + sp, allowed_special="all")[-1] == top + 1
""",
    "train": f"""
import bytepair
sp = "a" * {N}
enc = bytepair.train(["hello world"] * 10, vocab_size=262, special_tokens={{sp: 261}})
assert enc.encode(sp, allowed_special="all") == [261]
""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_long_repeated_special_token_loads(case):
    try:
        proc = subprocess.run([sys.executable, "-c", CASES[case]], capture_output=True, text=True, timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: loading a {N}-character special token did not finish in {DEADLINE} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
