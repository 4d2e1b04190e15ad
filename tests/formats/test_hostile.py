"""Hostile files: every malformed input is a bytepair.FormatError (a ValueError) naming the file,
the offset or field, and what was expected; never a crash, a hang or a huge allocation.

Each case starts from a valid golden file (tests/data/golden) and breaks one thing."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError, HashMismatchError
from bytepair.formats import bpe2

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"


def golden(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def refuse(tmp_path, data: bytes, *words: str, name: str = "bad.bin", **load_args) -> FormatError:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FormatError) as info:
        bytepair.load(path, **load_args)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.path == str(path), err
    assert err.location, err
    for w in words:
        assert w in str(err), (w, str(err))
    return err


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


# ------------------------------------------------------------------ BPE2 / BPZ2

@pytest.mark.parametrize("cut", [0, 3, 40, 63, 64 + 8 * 10, -1])
@pytest.mark.parametrize("name", ["tiny.bpe2", "tiny.bpz2"])
def test_bpe2_truncated(tmp_path, name, cut):
    data = golden(name)
    refuse(tmp_path, data[: cut if cut >= 0 else len(data) + cut])


def test_bpe2_wrong_magic_and_version(tmp_path):
    data = golden("tiny.bpe2")
    refuse(tmp_path, b"BPE3" + data[4:], "byte 0")  # not detected as BPE2 at all
    refuse(tmp_path, data[:4] + u32(3) + data[8:], "byte 4 (version)", "expected 2, found 3")
    refuse(tmp_path, data[:60] + b"\x01" + data[61:], "reserved")


def test_bpe2_offset_past_blob(tmp_path):
    data = bytearray(golden("tiny.bpe2"))
    data[64 + 8 * 5: 64 + 8 * 5 + 4] = u32(10**9)
    refuse(tmp_path, bytes(data), "byte 104 (token table)", "token 5", "past the")


def test_bpe2_count_does_not_match_size(tmp_path):
    data = golden("tiny.bpe2")
    refuse(tmp_path, data[:8] + u32(0xFFFFFFFF) + data[12:], "token_count", "need")
    refuse(tmp_path, data[:16] + u32(0xFFFFFF) + data[20:], "blob_size")


def test_bpz2_forged_sizes(tmp_path):
    data = golden("tiny.bpz2")
    # A claimed table of 2^32 entries is refused before anything is inflated or allocated.
    refuse(tmp_path, data[:8] + u32(0xFFFFFFFF) + data[12:], "limit")
    refuse(tmp_path, data[:52] + u32(10**8) + data[56:], "compressed_size")
    broken = bytearray(data)
    broken[80:90] = b"\xff" * 10
    refuse(tmp_path, bytes(broken), "zstd frame")


def test_bpe2_trailer_damage(tmp_path):
    data = golden("tiny.bpe2")
    refuse(tmp_path, data + b"x", "trailing section length")
    at = data.index(b"BPEM")
    refuse(tmp_path, data[:at] + b"XXXX" + data[at + 4:], "trailing section magic")


def test_hash_mismatch(tmp_path):
    table, source = golden("tiny.bpe2"), golden("tiny.tiktoken")
    report = bpe2.verify(table, source.replace(b"\n", b"\r\n", 1))
    assert not report.ok and "embedded source hash" in report.problems[0]
    (tmp_path / "v.tiktoken").write_bytes(source)
    with pytest.raises(HashMismatchError, match="expected 00"):
        bytepair.load_tiktoken_bpe(tmp_path / "v.tiktoken", expected_hash="00" * 32)


# ------------------------------------------------------------------ tiktoken text

def test_tiktoken_bad_base64(tmp_path):
    lines = golden("tiny.tiktoken").splitlines()
    lines[7] = b"!!not-base64 7"
    refuse(tmp_path, b"\n".join(lines), "line 8", "base64", name="v.tiktoken")


def test_tiktoken_duplicates_and_missing_bytes(tmp_path):
    lines = golden("tiny.tiktoken").splitlines()
    dup_token = lines + [lines[300].split()[0] + b" 99999"]
    refuse(tmp_path, b"\n".join(dup_token), "has two ranks", name="a.tiktoken")
    dup_rank = lines[:-1] + [lines[-1].split()[0] + b" 5"]
    refuse(tmp_path, b"\n".join(dup_rank), "id 5", name="b.tiktoken")
    missing = [ln for ln in lines if ln.split()[0] != b"AA=="]  # drop the byte 0x00
    refuse(tmp_path, b"\n".join(missing), "\\x00", name="c.tiktoken")


# ------------------------------------------------------------------ QTKR

def test_qtkr_header(tmp_path):
    data = golden("tiny.qtkr")
    refuse(tmp_path, data[:20])
    refuse(tmp_path, data[:4] + u32(2) + data[8:], "byte 4 (version)")
    refuse(tmp_path, data[:8] + u32(0xFFFFFFFF) + data[12:], "vocab_size", "cannot fit")
    refuse(tmp_path, data[:12] + u32(struct.unpack_from("<I", data, 12)[0] + 1) + data[16:], "num_merges")
    refuse(tmp_path, data[:-5], "num_merges")


def test_qtkr_merges_naming_unknown_ids(tmp_path):
    data = bytearray(golden("tiny.qtkr"))
    data[-12:-8] = u32(10**6)
    refuse(tmp_path, bytes(data), "token_id1", "is not a token id")
    data = bytearray(golden("tiny.qtkr"))
    data[-4:] = u32(65)  # merged_id that is not token1 + token2
    refuse(tmp_path, bytes(data), "is not token 65")


def test_qtkr_missing_byte_and_too_long(tmp_path):
    data = bytearray(golden("tiny.qtkr"))
    assert data[32] == 1  # token 0 is one byte: make it two bytes long by eating the next length
    data[32] = 2
    # The stream is now misaligned: the reader fails on a length or on the merges count.
    refuse(tmp_path, bytes(data))
    header = u32(0x51544B52) + u32(1) + u32(2) + u32(0) + u32(0xFFFFFFFF) * 3 + u32(0)
    refuse(tmp_path, header + b"\x01a\x01b", "0x00", "single-byte", name="m.qtkr")
    enc = bytepair.load(GOLDEN / "tiny.tiktoken", pat_str=r"\S+|\s+", special_tokens={"<|x|>" + "y" * 300: 1000})
    with pytest.raises(bytepair.VocabError, match="255 bytes"):
        enc.save(tmp_path / "long.qtkr")
    assert not (tmp_path / "long.qtkr").exists(), "nothing written half-way"


# ------------------------------------------------------------------ SentencePiece

def _piece(text: bytes, score: float, kind: int | None = None) -> bytes:
    body = b"\x0a" + bytes([len(text)]) + text + b"\x15" + struct.pack("<f", score)
    if kind is not None:
        body += b"\x18" + bytes([kind])
    return b"\x0a" + bytes([len(body)]) + body


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_sentencepiece_random_protobuf_bytes(tmp_path):
    rng = random.Random(1234)
    for i in range(300):
        data = b"\x0a" + bytes([rng.randrange(1, 256)]) + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        (tmp_path / "r.model").write_bytes(data)
        with pytest.raises(FormatError) as info:
            bytepair.load(tmp_path / "r.model")
        assert info.value.path == str(tmp_path / "r.model") and info.value.location


def test_sentencepiece_truncated(tmp_path):
    data = golden("tiny_sp.model")
    for cut in (2, 10, 100, len(data) // 2, len(data) - 1):
        refuse(tmp_path, data[:cut], name="t.model")


def test_sentencepiece_nan_score_and_huge_piece(tmp_path):
    data = golden("tiny_sp.model")
    nan = _piece(b"<unk>", math.nan, 2) + data
    refuse(tmp_path, nan, "pieces[0].score", "nan", name="n.model")
    big = b"x" * 100_000
    body = b"\x0a" + _varint(len(big)) + big
    refuse(tmp_path, b"\x0a" + _varint(len(body)) + body + data, "pieces[0].piece", "100000 bytes", name="b.model")


def test_sentencepiece_bad_type_unigram_and_no_unk(tmp_path):
    data = golden("tiny_sp.model")
    refuse(tmp_path, _piece(b"zz", 0.0, 9) + data, "pieces[0].type", "9 is not a piece type", name="t.model")
    refuse(tmp_path, _piece(b"<unk>", 0.0, 2) + data, "already defined", name="d.model")
    unigram = data + b"\x12\x02\x18\x01"  # a second TrainerSpec saying model_type = UNIGRAM
    refuse(tmp_path, unigram, "model_type", "Unigram", name="u.model")
    only = _piece(b"a", 0.0) + _piece(b"b", 0.0)
    refuse(tmp_path, only + b"\x12\x02\x18\x02", "no unknown piece", name="k.model")


# ------------------------------------------------------------------ LEAP

def test_leap(tmp_path):
    data = golden("tiny.leap")
    refuse(tmp_path, data[:2], "not a known vocabulary format", name="a.bin")
    refuse(tmp_path, data[:2], "max_token_length", name="a.bin", format="leap")
    refuse(tmp_path, data[:-1], "past the end", name="b.bin")
    refuse(tmp_path, u32(0) + data[4:], "max_token_length", name="c.bin", format="leap")
    nan = data[:4] + struct.pack("<f", math.nan) + data[8:]
    refuse(tmp_path, nan, "token 0 score", name="d.bin")
    neg = data[:8] + struct.pack("<i", -5) + data[12:]
    refuse(tmp_path, neg, "token 0 length", name="e.bin")
    huge = struct.pack("<i", 1 << 16) + struct.pack("<f", 0.0) + struct.pack("<i", 100_000) + b"x" * 100_000
    refuse(tmp_path, huge, "100000", name="f.bin")
    no_byte = struct.pack("<i", 1) + b"".join(struct.pack("<fi", 0.0, 1) + bytes([b]) for b in range(1, 256))
    refuse(tmp_path, no_byte, "0x00", name="g.bin")


# ------------------------------------------------------------------ tokenizer.json, GPT-2

def test_tokenizer_json(tmp_path):
    doc = json.loads(golden("tiny_hf.json"))
    refuse(tmp_path, b'{"model": ', "JSON", name="a.json")
    bad = json.loads(json.dumps(doc))
    bad["model"]["merges"][3] = "Ġzzz qqq"
    refuse(tmp_path, json.dumps(bad).encode(), "model.merges[3]", "not in the vocabulary", name="b.json")
    bad = json.loads(json.dumps(doc))
    bad["model"]["type"] = "WordPiece"
    refuse(tmp_path, json.dumps(bad).encode(), "model.type", name="c.json")
    bad = json.loads(json.dumps(doc))
    bad["model"]["vocab"] = {"a": "zero"}
    refuse(tmp_path, json.dumps(bad).encode(), "model.vocab", name="d.json")
    bad = json.loads(json.dumps(doc))
    bad["model"]["vocab"]["Ġzz"] = 10**9
    refuse(tmp_path, json.dumps(bad).encode(), "far beyond", name="e.json")


def test_gpt2_bad_characters(tmp_path):
    (tmp_path / "encoder.json").write_bytes(golden("gpt2/encoder.json"))
    lines = golden("gpt2/vocab.bpe").decode().splitlines()
    lines[3] = "a\x00 b"
    (tmp_path / "vocab.bpe").write_text("\n".join(lines))
    with pytest.raises(FormatError) as info:
        bytepair.load(tmp_path / "vocab.bpe")
    assert info.value.path == str(tmp_path / "vocab.bpe") and info.value.location == "line 4"


# ------------------------------------------------------------------ fuzz every reader

@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from([b"BPE2", b"BPZ2", b"RKTQ", b"\x0a\x05", b"\x10\x00\x00\x00", b"{", b"YQ== 0\n"]),
       body=st.binary(max_size=200))
def test_random_bytes_never_crash(tmp_path_factory, prefix, body):
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes(prefix + body)
    try:
        bytepair.load(path)
    except FormatError as e:
        assert e.path == str(path)
