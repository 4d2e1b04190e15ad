"""Loading stays linear in a special token's length, and encoding in a user-defined piece's.

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
# Cases whose old cost was slow but finite: their deadline sits between the two.
DEADLINES = {"sentencepiece user-defined": 30}

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
    # A SentencePiece user-defined piece that text almost matches everywhere: "x" * 4095 + "y"
    # (the longest piece the reader takes) against "x" repeated. Each position was tried with an
    # anchored search that read up to the piece's length: the 8 MB here took 54 s (N * 4095
    # steps). Now one unanchored search finds the next piece (or that there is none): 0.6 s.
    "sentencepiece user-defined": f"""
from bytepair.formats import loads
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def piece(s, kind=4):  # ModelProto.pieces: piece, score 0.0, type USER_DEFINED
    body = b"\\x0a" + varint(len(s)) + s + b"\\x15\\0\\0\\0\\0\\x18" + varint(kind)
    return b"\\x0a" + varint(len(body)) + body
user = ("x" * 4095 + "y").encode()
enc = loads(open({str(GOLDEN / 'tiny_sp.model')!r}, "rb").read() + piece(user), format="sentencepiece")
user_id = enc.n_vocab - 1
assert enc.encode("a" + user.decode() + "x")[-2] == user_id
ids = enc.encode("x" * 8_000_000)
assert user_id not in ids and enc.decode(ids) == "x" * 8_000_000
""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_long_repeated_special_token_loads(case):
    try:
        proc = subprocess.run([sys.executable, "-c", CASES[case]], capture_output=True, text=True,
                              timeout=DEADLINES.get(case, DEADLINE))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: did not finish in {DEADLINES.get(case, DEADLINE)} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
