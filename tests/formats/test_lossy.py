"""Never guess silently (issue 13): what each format carries, checked by loading it back.

- The bundled BPE2 tables are their encodings on their own (name, pattern, specials), and the
  registry's constants are exactly what the tables and the known-vocabulary table record.
- A known vocabulary converted to every format that can carry it loads back, with no
  arguments, encoding as the real tiktoken (or Llama 3's reference) does.
- Every other (vocabulary, format) pair is refused with a LossyFormatError naming what it would
  drop, and nothing is written; ``lossy=True`` writes it and returns that list.
- A rank file that records no pattern gets its known vocabulary's (by SHA-256) or a FormatError
  asking for ``pat_str=``, never another vocabulary's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import bytepair
from bytepair.errors import FormatError, LossyFormatError
from bytepair.formats import FORMATS, bpe2, would_drop
from bytepair.formats.known import by_sha256, known_vocabularies
from bytepair.registry import openai

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
SUFFIX = {"tiktoken": "tiktoken", "bpe2": "bpe2", "bpz2": "bpz2", "tokenizer.json": "json", "qtkr": "qtkr",
          "leap": "bin", "sentencepiece": "model", "gpt2": "bpe"}


def _llama3_path():
    from bytepair.registry.llama import find_llama3_vocab

    return find_llama3_vocab()


# Each source: how to get it, and the reference encoding's name (the `reference` fixture).
SOURCES = {
    "cl100k_base.bpe2": (lambda: bytepair.load(openai.DATA / "cl100k_base.bpe2"), "cl100k_base"),
    "o200k_base.bpe2": (lambda: bytepair.load(openai.DATA / "o200k_base.bpe2"), "o200k_base"),
    "o200k_harmony": (lambda: bytepair.get_encoding("o200k_harmony"), "o200k_harmony"),
    "llama3 tokenizer.model": (lambda: bytepair.load(_llama3_path()), "llama3"),
}
# The formats that keep everything of each, worked out by hand from docs/formats.md's table: a
# .tiktoken file keeps a known vocabulary's pattern and specials (load finds them by hash), but
# not harmony's specials (its file is o200k_base's); tokenizer.json cannot give one id two
# spellings (harmony's 200018); QTKR and LEAP hold no pattern.
LOSSLESS = {
    "cl100k_base.bpe2": {"tiktoken", "bpe2", "bpz2", "tokenizer.json"},
    "o200k_base.bpe2": {"tiktoken", "bpe2", "bpz2", "tokenizer.json"},
    "o200k_harmony": {"bpe2", "bpz2"},
    "llama3 tokenizer.model": {"tiktoken", "bpe2", "bpz2", "tokenizer.json"},
}

_MADE: dict = {}


@pytest.fixture
def source(request, reference):
    """(tokenizer, reference encoder) for a SOURCES key (the reference skips when missing)."""
    make, ref_name = SOURCES[request.param]
    ref = reference(ref_name)
    if request.param not in _MADE:
        _MADE[request.param] = make()
    return _MADE[request.param], ref


@pytest.fixture(scope="module")
def texts(corpus_texts) -> list[str]:
    """The first 200,000 characters of each corpus (the whole corpora are the parity suites')."""
    return [t[:200_000] for t in corpus_texts.values()]


# --------------------------------------------------------------------------- the bundled tables

@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_bundled_table_is_its_encoding_alone(name):
    """load(the .bpe2 file) with no arguments is the registry's encoding: the trailing section
    records name, pattern and specials; the header the pinned source hash."""
    path = openai.DATA / f"{name}.bpe2"
    head = bpe2.info(path.read_bytes())
    reg = bytepair.get_encoding(name)
    assert head["name"] == name
    assert head["pattern"] == reg._pat_str
    assert dict(head["special_tokens"]) == reg._special_tokens
    assert head["source_hash"].hex() == openai.SOURCE_SHA256[name]
    enc = bytepair.load(path)
    assert (enc.name, enc._pat_str, enc._special_tokens) == (name, reg._pat_str, reg._special_tokens)
    text = "Hello, world! 1234567 <|endoftext|> 'll"
    assert enc.encode(text, allowed_special="all") == reg.encode(text, allowed_special="all")


def test_registry_passes_what_the_tables_and_the_known_table_record(monkeypatch):
    """registry/openai.py passes its pattern and specials explicitly; they are one fact with what
    the bundled tables record and with formats/known.py. The downloaded encodings are checked
    without a download: the loader and the class are stood in for, to see what is passed."""
    table = known_vocabularies()
    assert sorted(v.name for v in table.values()) == ["cl100k_base", "llama3", "o200k_base", "p50k_base", "r50k_base"]
    for name in ("cl100k_base", "o200k_base"):
        known = by_sha256(openai.SOURCE_SHA256[name])
        head = bpe2.info((openai.DATA / f"{name}.bpe2").read_bytes())
        reg = bytepair.get_encoding(name)
        assert known.name == name
        assert known.pattern == head["pattern"] == reg._pat_str
        assert dict(known.special_tokens) == dict(head["special_tokens"]) == reg._special_tokens
    import bytepair.formats.tiktoken as tiktoken_format

    seen = {}
    monkeypatch.setattr(tiktoken_format, "load_tiktoken_bpe", lambda url, expected_hash: seen.update(sha=expected_hash) or {})
    monkeypatch.setattr(openai, "Encoding", lambda name, **kw: seen.update(kw) or kw)
    for name in ("r50k_base", "p50k_base"):
        seen.clear()
        openai.ENCODING_CONSTRUCTORS[name]()
        known = by_sha256(seen["sha"])
        assert known is not None and known.name == name
        assert seen["pat_str"] == known.pattern and seen["special_tokens"] == dict(known.special_tokens)


def test_llama3_registry_is_the_known_table():
    from support import require

    try:
        path = _llama3_path()
    except bytepair.VocabularyNotFoundError:
        path = None
    require(path is not None and path.is_file(), "the Llama 3 vocabulary (llama-models)")
    known = by_sha256(hashlib.sha256(path.read_bytes()).digest())
    reg = bytepair.get_encoding("llama3", path=path)
    assert known.name == "llama3"
    assert (known.pattern, dict(known.special_tokens)) == (reg._pat_str, reg._special_tokens)


# --------------------------------------------------------------------------- what each format keeps

@pytest.mark.parametrize("source", sorted(SOURCES), indirect=True)
def test_which_formats_keep_everything(source, request):
    """would_drop over every format: exactly the formats of LOSSLESS lose nothing; the others
    either name what they drop or cannot hold a rank vocabulary at all (ValueError)."""
    enc, _ = source
    keeps, lossy, cannot = set(), {}, set()
    for fmt in FORMATS:
        try:
            dropped = would_drop(enc, fmt)
        except ValueError:
            cannot.add(fmt)
            continue
        if dropped:
            lossy[fmt] = dropped
        else:
            keeps.add(fmt)
    assert keeps == LOSSLESS[request.node.callspec.params["source"]]
    assert cannot == {"sentencepiece", "gpt2"}
    assert all("split pattern" in d for f, d in lossy.items() if f in ("qtkr", "leap"))


LOSSLESS_PAIRS = [(s, f) for s in sorted(SOURCES) for f in sorted(LOSSLESS[s])]


@pytest.mark.parametrize("source,fmt", LOSSLESS_PAIRS, indirect=["source"])
def test_lossless_conversion_encodes_as_the_reference(tmp_path, source, fmt, texts):
    """Written without lossy=True (so nothing is dropped), read back with no arguments: the same
    ids as the reference library on the corpora and on every special token, and the same
    decoding."""
    enc, ref = source
    path = tmp_path / f"v.{SUFFIX[fmt]}"
    assert enc.save(path, format=fmt) == []
    back = bytepair.load(path)
    assert back._special_tokens == enc._special_tokens
    specials = "".join(f" x{s}y" for s in enc._special_tokens)
    for text in [*texts, specials]:
        want = ref.encode(text, allowed_special="all")
        assert back.encode(text, allowed_special="all") == want
        assert back.encode_ordinary(text) == ref.encode_ordinary(text)
    ids = ref.encode(specials, allowed_special="all")
    assert back.decode(ids) == ref.decode(ids)


# --------------------------------------------------------------------------- refusals

def _trained():
    return bytepair.train(["the cat sat on the mat, the dog sat on the log"] * 5, 270, special_tokens=["<|bos|>"])


TINY = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))["tiny.tiktoken"]

# (what, how to get the tokenizer, target format, what it drops, how to load the lossy file back)
REFUSALS = [
    ("cl100k_base.bpe2", lambda: bytepair.load(openai.DATA / "cl100k_base.bpe2"), "qtkr",
     ["split pattern", "special tokens <|fim_prefix|>, <|fim_middle|>, <|fim_suffix|>, <|endofprompt|>"], {}),
    ("cl100k_base.bpe2", lambda: bytepair.load(openai.DATA / "cl100k_base.bpe2"), "leap",
     ["split pattern", "special tokens <|endoftext|>, <|fim_prefix|>, <|fim_middle|>, <|fim_suffix|>, <|endofprompt|>"], {}),
    ("cl100k_base with o200k's pattern", lambda: bytepair.load(openai.DATA / "cl100k_base.bpe2", pat_str=openai.O200K_PATTERN),
     "tiktoken", ["split pattern (loading gives cl100k_base's)"], {}),
    ("o200k_harmony", lambda: bytepair.get_encoding("o200k_harmony"), "tiktoken",
     ["special tokens <|startoftext|>, <|reserved_200000|>, <|reserved_200001|>, <|return|>, <|constrain|>, <|reserved_200004|> (+1083 more)"], {}),
    ("o200k_harmony", lambda: bytepair.get_encoding("o200k_harmony"), "tokenizer.json",
     ["special tokens <|reserved_200018|>"], {}),
    ("trained with <|bos|>", _trained, "tiktoken", ["split pattern", "special tokens <|bos|>"], {"pat_str": r"\S+"}),
    ("tiny.tiktoken without its specials", lambda: bytepair.load(GOLDEN / "tiny.tiktoken", pat_str=TINY["pattern"]),
     "tiktoken", ["split pattern"], {"pat_str": TINY["pattern"]}),
    ("tiny_hf.json", lambda: bytepair.load(GOLDEN / "tiny_hf.json"), "qtkr", ["split pattern", "special tokens <|endoftext|>"], {}),
    ("tiny.qtkr given a pattern", lambda: bytepair.load(GOLDEN / "tiny.qtkr", pat_str=r"\S+|\s+"), "qtkr", ["split pattern"], {}),
    ("tiny.leap given dummy_prefix", lambda: bytepair.formats.loads((GOLDEN / "tiny.leap").read_bytes(), dummy_prefix=True),
     "leap", ["dummy_prefix=True (a loaded copy has dummy_prefix=False)"], {}),
    ("tiny_sp.model", lambda: bytepair.load(GOLDEN / "tiny_sp.model"), "leap",
     ["special tokens <unk>, [INST]", "user-defined piece type of <tool>",
      "normalizer settings (dummy prefix, whitespace handling, unknown-piece surface)"], {}),
]


@pytest.mark.parametrize("what,make,fmt,dropped,load_args", REFUSALS, ids=[f"{r[0]} -> {r[2]}" for r in REFUSALS])
def test_lossy_pair_is_refused_then_written_with_lossy(tmp_path, what, make, fmt, dropped, load_args):
    tok = make()
    path = tmp_path / f"out.{SUFFIX[fmt]}"
    with pytest.raises(LossyFormatError) as info:
        tok.save(path, format=fmt)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, bytepair.BytepairError)
    assert (err.format, err.dropped, err.path) == (fmt, dropped, str(path))
    assert str(path) in str(err) and "lossy=True" in str(err) and dropped[0] in str(err)
    assert not path.exists() and list(tmp_path.iterdir()) == [], "nothing written"
    assert would_drop(tok, fmt) == dropped
    # Accepted: written, and the same list returned.
    assert tok.save(path, format=fmt, lossy=True) == dropped
    assert path.is_file()
    bytepair.load(path, **load_args)


def test_lossy_format_error_pickles():
    import pickle

    err = LossyFormatError("qtkr", ["split pattern"], "/x/y.qtkr", "bpe2")
    again = pickle.loads(pickle.dumps(err))
    assert (again.format, again.dropped, again.path, again.keeps, str(again)) == \
        (err.format, err.dropped, err.path, err.keeps, str(err))


# --------------------------------------------------------------------------- files with no pattern

def test_unknown_tiktoken_file_needs_pat_str(tmp_path):
    """No pattern recorded and no known hash: a FormatError naming the file and asking for
    pat_str= (main gave it o200k's pattern). With pat_str it loads, with no special tokens (the
    file records none). A malformed file is still reported as malformed first."""
    path = GOLDEN / "tiny.tiktoken"
    with pytest.raises(FormatError) as info:
        bytepair.load(path)
    assert info.value.path == str(path) and info.value.location == "split pattern"
    assert "pat_str=" in str(info.value) and hashlib.sha256(path.read_bytes()).hexdigest() in str(info.value)
    enc = bytepair.load(path, pat_str=TINY["pattern"])
    assert enc._pat_str == TINY["pattern"] and enc._special_tokens == {}
    with pytest.raises(FormatError, match="split pattern"):
        bytepair.formats.loads(path.read_bytes())
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(path.read_bytes().replace(b"\n", b"\n!!!! 3\n", 1))
    with pytest.raises(FormatError) as info:
        bytepair.load(bad)
    assert info.value.location != "split pattern"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_bpe2_without_trailer_uses_its_source_hash(tmp_path, name):
    """A table with no trailing section (as the bundled ones were) gets the pattern and specials
    of the vocabulary its header's source hash names; an unknown hash gets a FormatError."""
    reg = bytepair.get_encoding(name)
    bare = reg._core_bpe.to_bpe2(bytes.fromhex(openai.SOURCE_SHA256[name]), "", None, False)
    (tmp_path / "bare.bpe2").write_bytes(bare)
    enc = bytepair.load(tmp_path / "bare.bpe2")
    assert (enc.name, enc._pat_str, enc._special_tokens) == (name, reg._pat_str, reg._special_tokens)
    anonymous = reg._core_bpe.to_bpe2(bytes(32), "", None, False)
    (tmp_path / "anon.bpe2").write_bytes(anonymous)
    with pytest.raises(FormatError, match="pat_str=") as info:
        bytepair.load(tmp_path / "anon.bpe2")
    assert info.value.location == "split pattern"
    assert bytepair.load(tmp_path / "anon.bpe2", pat_str=reg._pat_str)._special_tokens == {}


def _write_gpt2_pair(ranks: dict[bytes, int], folder: Path, specials: dict[str, int]) -> None:
    """GPT-2's two files for ``ranks`` (first 256 ranks in GPT-2's byte order; every later token
    cut into two earlier ones, one merge each)."""
    from bytepair.formats.gpt2 import byte_to_char

    b2c = byte_to_char()

    def spell(t: bytes) -> str:
        return "".join(b2c[b] for b in t)

    lines = ["#version: 0.2"]
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])[256:]:
        cut = next(i for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks
                   and max(ranks[token[:i]], ranks[token[i:]]) < rank)
        lines.append(f"{spell(token[:cut])} {spell(token[cut:])}")
    (folder / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
    encoder = {**{spell(t): r for t, r in ranks.items()}, **specials}
    (folder / "encoder.json").write_text(json.dumps(encoder, ensure_ascii=False), encoding="utf-8")


def test_gpt2_pair_pattern_and_specials(tmp_path, reference):
    """GPT-2's pair: GPT-2's pattern (the format's, by its structure) and the specials encoder.json
    records, none when it records none (main invented <|endoftext|> at the next id); ranks
    recognised by hash (cl100k written as a pair) keep their own vocabulary's pattern and
    specials (main gave them GPT-2's pattern) and encode as tiktoken."""
    from bytepair.formats.gpt2 import GPT2_PATTERN

    golden = bytepair.load(GOLDEN / "gpt2")
    assert golden._pat_str == GPT2_PATTERN and golden._special_tokens == {}
    ranks = golden._mergeable_ranks
    (tmp_path / "tiny").mkdir()
    _write_gpt2_pair(ranks, tmp_path / "tiny", {"<|endoftext|>": len(ranks)})
    tiny = bytepair.load(tmp_path / "tiny")
    assert tiny.name == "gpt2" and tiny._special_tokens == {"<|endoftext|>": len(ranks)}

    cl100k = bytepair.get_encoding("cl100k_base")
    (tmp_path / "cl").mkdir()
    _write_gpt2_pair(cl100k._mergeable_ranks, tmp_path / "cl", {"<|endoftext|>": 100257})
    pair = bytepair.load(tmp_path / "cl" / "encoder.json")
    assert (pair.name, pair._pat_str, pair._special_tokens) == ("cl100k_base", cl100k._pat_str, cl100k._special_tokens)
    ref = reference("cl100k_base")
    text = "Hello  world!!\n\n  12345 it's <|fim_prefix|> done   \n"
    assert pair.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
