"""bytepair as a drop-in for tiktoken: the module layout (``bytepair.tiktoken``),
``install_as_tiktoken()`` with real third-party callers, tiktoken's unstable-token API and
private encoders against the real tiktoken, special tokens at ordinary ids, and the rule of
``list_encoding_names``.

This process keeps the real tiktoken as the reference: whatever installs bytepair as tiktoken
runs in a subprocess.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

import bytepair
import bytepair.tiktoken as layout
from support import require

# ------------------------------------------------------------------ the module layout


def _defined_names(module) -> set[str]:
    """The public names a tiktoken module defines (not the modules and names it imports)."""
    names = set()
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj) or name in ("annotations", "TYPE_CHECKING"):
            continue
        if getattr(obj, "__module__", module.__name__) != module.__name__:
            continue  # imported: classes, functions, typing's names
        names.add(name)
    return names


@pytest.mark.parametrize("sub", ["core", "load", "registry", "model", "_educational"])
def test_submodules_have_tiktokens_names_and_signatures(sub):
    import importlib

    theirs = importlib.import_module(f"tiktoken.{sub}")
    ours = importlib.import_module(f"bytepair.tiktoken.{sub}")
    if sub == "registry":
        theirs._find_constructors()  # tiktoken fills ENCODING_CONSTRUCTORS on first use
    names = _defined_names(theirs)
    assert names, sub
    for name in names:
        assert hasattr(ours, name), f"bytepair.tiktoken.{sub} lacks {name}"
        a, b = getattr(theirs, name), getattr(ours, name)
        if inspect.isfunction(a):
            _same_parameters(inspect.signature(a), inspect.signature(b), f"{sub}.{name}")
    assert getattr(layout, sub) is ours is layout.SUBMODULES[sub]


def _same_parameters(theirs: inspect.Signature, ours: inspect.Signature, what: str) -> None:
    """Every parameter of tiktoken's is ours too, by name and kind (ours may add optional ones)."""
    for name, p in theirs.parameters.items():
        assert name in ours.parameters, f"{what}: no parameter {name!r}"
        assert ours.parameters[name].kind == p.kind, f"{what}: {name!r} is {ours.parameters[name].kind}"
    for name, p in ours.parameters.items():
        if name not in theirs.parameters:
            assert p.default is not p.empty or p.kind is p.VAR_KEYWORD, f"{what}: extra required {name!r}"


def test_top_level_names_and_encoding_methods():
    import tiktoken

    for name in vars(tiktoken):
        if not name.startswith("_") and not inspect.ismodule(getattr(tiktoken, name)):
            assert hasattr(layout, name), name
            assert hasattr(bytepair, name), name  # `import bytepair as tiktoken` keeps working
    assert layout.__version__ == tiktoken.__version__
    assert layout.Encoding is bytepair.Encoding is layout.core.Encoding
    for name, method in vars(tiktoken.Encoding).items():
        if callable(method) and (not name.startswith("__") or name in ("__init__", "__getstate__")):
            assert hasattr(bytepair.Encoding, name), f"Encoding lacks {name}"
            _same_parameters(inspect.signature(method), inspect.signature(getattr(bytepair.Encoding, name)),
                             f"Encoding.{name}")


def test_registry_and_model_are_bytepairs():
    import tiktoken.registry

    tiktoken.registry._find_constructors()
    assert set(tiktoken.registry.ENCODING_CONSTRUCTORS) <= set(layout.registry.ENCODING_CONSTRUCTORS)
    enc = layout.get_encoding("o200k_base")
    assert enc is bytepair.get_encoding("o200k_base")
    assert layout.registry.ENCODINGS["o200k_base"] is enc
    assert layout.model.MODEL_TO_ENCODING is bytepair.registry.models.MODEL_TO_ENCODING
    assert layout.encoding_for_model("gpt-4o") is enc
    assert layout.registry._available_plugin_modules() == []  # tiktoken's openai_public is left out


def test_raise_disallowed_special_token_is_tiktokens():
    import tiktoken.core

    for token in ["<|endoftext|>", "it's", "日本"]:
        with pytest.raises(ValueError) as theirs:
            tiktoken.core.raise_disallowed_special_token(token)
        with pytest.raises(ValueError) as ours:
            layout.core.raise_disallowed_special_token(token)
        assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------ tiktoken.load


def test_load_reads_as_tiktoken(tiktoken_cache, vocab_dir, tmp_path):
    import tiktoken.load as tl

    from support import BLOB

    path = str(vocab_dir / "cl100k_base.tiktoken")
    sha = bytepair.registry.openai.SOURCE_SHA256["cl100k_base"]
    ranks = layout.load.load_tiktoken_bpe(path, expected_hash=sha)
    assert ranks == tl.load_tiktoken_bpe(path, expected_hash=sha)
    url = f"{BLOB}o200k_base.tiktoken"  # served from the cache that tiktoken_cache made
    assert layout.load.read_file_cached(url) == tl.read_file_cached(url)
    assert layout.load.read_file(path) == tl.read_file(path)
    data = layout.load.read_file(path)
    assert layout.load.check_hash(data, sha) is tl.check_hash(data, sha) is True
    assert layout.load.check_hash(data, "0" * 64) is tl.check_hash(data, "0" * 64) is False
    with pytest.raises(ValueError):
        layout.load.read_file_cached(path, "0" * 64)
    out = tmp_path / "dumped.tiktoken"
    small = {k: v for k, v in ranks.items() if v < 1000}
    layout.load.dump_tiktoken_bpe(small, str(out))
    assert tl.load_tiktoken_bpe(str(out)) == small


def _gpt2_files(tmp_path):
    """A small vocab.bpe / encoder.json pair in GPT-2's spelling (the real ones are not
    available offline): the 256 bytes, then four merges."""
    from bytepair.formats.gpt2 import byte_to_char

    spell = byte_to_char()
    order = sorted(range(256), key=lambda b: (ord(spell[b]) >= 256, b))  # printable first
    tokens = [bytes([b]) for b in order]
    merges = [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b" ", b"w")]
    tokens += [a + b for a, b in merges]
    word = lambda t: "".join(spell[b] for b in t)  # noqa: E731
    vocab_bpe = tmp_path / "vocab.bpe"
    vocab_bpe.write_text("#version: 0.2\n" + "".join(f"{word(a)} {word(b)}\n" for a, b in merges), encoding="utf-8")
    encoder_json = tmp_path / "encoder.json"
    entries = {word(t): i for i, t in enumerate(tokens)} | {"<|endoftext|>": len(tokens)}
    encoder_json.write_text(json.dumps(entries), encoding="utf-8")
    return str(vocab_bpe), str(encoder_json)


def test_data_gym_to_mergeable_bpe_ranks_takes_paths(tmp_path):
    import tiktoken.load as tl

    vocab_bpe, encoder_json = _gpt2_files(tmp_path)
    ours = layout.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    assert ours == tl.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    assert ours[b"hell"] == 258
    with pytest.raises(NotImplementedError, match="clobber_one_byte_tokens"):
        layout.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json, clobber_one_byte_tokens=True)
    with pytest.raises(ValueError):
        layout.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json, vocab_bpe_hash="0" * 64)
    entries = json.loads(Path(encoder_json).read_text(encoding="utf-8"))
    entries["hell"] = 259  # disagrees with vocab.bpe
    Path(encoder_json).write_text(json.dumps(entries), encoding="utf-8")
    with pytest.raises(bytepair.FormatError) as e:
        layout.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe, encoder_json)
    assert e.value.path == encoder_json


# ------------------------------------------------------------------ install_as_tiktoken


def _run_installed(code: str, stdin: str = "") -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], input=stdin, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": "error"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_install_as_tiktoken_registers_every_submodule():
    out = _run_installed("""
        import sys
        import tiktoken as real                       # installing afterwards replaces it
        import bytepair
        bytepair.install_as_tiktoken()
        first = {k: v for k, v in sys.modules.items() if k == "tiktoken" or k.startswith("tiktoken.")}
        bytepair.install_as_tiktoken()                # idempotent
        import tiktoken, tiktoken.core, tiktoken.load, tiktoken.registry, tiktoken.model, tiktoken._educational
        from tiktoken.load import load_tiktoken_bpe, data_gym_to_mergeable_bpe_ranks
        from tiktoken.registry import ENCODINGS, ENCODING_CONSTRUCTORS
        assert tiktoken is bytepair.tiktoken and tiktoken is not real
        for name in ("core", "load", "registry", "model", "_educational"):
            assert sys.modules["tiktoken." + name] is getattr(tiktoken, name) is first["tiktoken." + name]
        assert tiktoken.Encoding is bytepair.Encoding
        assert load_tiktoken_bpe is bytepair.load_tiktoken_bpe
        enc = tiktoken.get_encoding("cl100k_base")
        assert ENCODINGS["cl100k_base"] is enc and "r50k_base" in ENCODING_CONSTRUCTORS
        print(enc.encode("hello world"))
    """)
    assert out.strip() == "[15339, 1917]"


@pytest.mark.parametrize("version", ["llama3", "llama4"])
def test_llama_models_tokenizer_runs_on_bytepair(version, corpus_texts):
    """Meta's reference tokenizer (llama-models, which imports tiktoken and ships its
    tokenizer.model) on bytepair gives the ids it gives on tiktoken."""
    try:
        import importlib

        module = importlib.import_module(f"llama_models.{version}.tokenizer")
    except ImportError:
        module = None
    require(module is not None, "llama-models (Meta's Llama 3/4 tokenizers)")
    ref = module.Tokenizer.get_instance()
    rng = random.Random(7)
    texts = []
    for text in corpus_texts.values():
        for _ in range(5):
            i = rng.randrange(len(text))
            texts.append(text[i : i + rng.choice([20, 300, 3000])])
    texts += ["", " ", "Hello, world!", "日本語 😀\n\n", "x" * 30_000]
    special = "<|begin_of_text|>hi<|eot_id|>" if version == "llama3" else "<|begin_of_text|>hi<|eot|>"
    want = [ref.encode(t, bos=True, eos=True) for t in texts]
    want.append(ref.encode(special, bos=False, eos=False, allowed_special="all"))
    out = _run_installed(f"""
        import json, sys
        import bytepair
        bytepair.install_as_tiktoken()
        from llama_models.{version}.tokenizer import Tokenizer
        tok = Tokenizer.get_instance()
        assert type(tok.model) is bytepair.Encoding, type(tok.model)
        texts = json.loads(sys.stdin.read())
        ids = [tok.encode(t, bos=True, eos=True) for t in texts]
        ids.append(tok.encode({special!r}, bos=False, eos=False, allowed_special="all"))
        assert tok.decode(ids[0][1:-1]) == texts[0]
        print(json.dumps(ids))
    """, stdin=json.dumps(texts))
    assert json.loads(out) == want


# ------------------------------------------------------------------ the unstable-token API


def _same_unstable(ours, ref, text, **kw):
    got, want = ours.encode_with_unstable(text, **kw), ref.encode_with_unstable(text, **kw)
    assert got[0] == want[0], text
    assert len(got[1]) == len({tuple(c) for c in got[1]}), "a completion is listed twice"
    assert {tuple(c) for c in got[1]} == {tuple(c) for c in want[1]}, text


EDGE_TEXTS = [
    "", " ", "  ", "\n", "\n\n", "\t", "\r\n", "hello", "hello ", "hello  ", "hello\n", "hello\n \n",
    "hello fanta", "don't", "It's", "0123456", "x" * 300, " " * 50, "日本語", "👍", "a\u3000", "a\xa0",
    "a\x85", "a\x1c", "a\u2028", "hello world!!!", "a\tb\t", "(x)", "https://", "\u0558x",
]


def test_encode_with_unstable_on_edges(pair):
    ours, ref = pair
    for text in EDGE_TEXTS:
        _same_unstable(ours, ref, text)
    special = sorted(ref.special_tokens_set)[0]
    for text in [special, f"hi {special}", f"{special} hi", f"hi{special}\n"]:
        _same_unstable(ours, ref, text, allowed_special="all")
        _same_unstable(ours, ref, text, disallowed_special=())
        with pytest.raises(ValueError):
            ours.encode_with_unstable(text)
    with pytest.raises(UnicodeEncodeError):  # tiktoken does not repair lone surrogates here
        ours.encode_with_unstable("a\ud83d")
    with pytest.raises(TypeError):
        ours.encode_with_unstable(b"bytes")


def test_encode_with_unstable_on_corpora(pair, corpus_texts):
    ours, ref = pair
    rng = random.Random(13)
    for text in corpus_texts.values():
        for _ in range(8):
            i = rng.randrange(len(text))
            _same_unstable(ours, ref, text[i : i + rng.choice([1, 7, 40, 400])], disallowed_special=())
    stable, completions = ours.encode_with_unstable("hello fanta")
    assert all(ours.decode_bytes(stable + c).startswith(b"hello fanta") for c in completions)


def _cuts(corpus_texts, n, seed):
    """Byte strings cut from the corpora at random byte offsets (often inside a character)."""
    rng = random.Random(seed)
    out = []
    for text in corpus_texts.values():
        data = text[: 200_000].encode("utf-8")
        for _ in range(n):
            i = rng.randrange(len(data))
            out.append(data[i : i + rng.choice([1, 2, 3, 10, 100, 1000])])
    return out


def test_encode_bytes_on_corpora_and_edges(pair, corpus_texts):
    ours, ref = pair
    edges = [b"", b" \xec\x8b\xa4\xed", b"hello \xe4\xb8", b"\xff", b"a\xf0\x9f\x91", b"\n\n\xe4", b"  \x80",
             b"\xed\xa0\x80", b"<|endoftext|>\x80", b"hello\n \n\xc3"] + [b"\x80" * i for i in range(10)]
    for data in edges + _cuts(corpus_texts, 40, 3):
        assert ours._encode_bytes(data) == ref._encode_bytes(data), data
        assert ours.decode_bytes(ours._encode_bytes(data)) == data
    with pytest.raises(TypeError):
        ours._encode_bytes("text")


def test_encode_only_native_bpe_and_single_piece(pair, corpus_texts):
    ours, ref = pair
    for text in list(corpus_texts.values()):
        chunk = text[:20_000]
        assert ours._encode_only_native_bpe(chunk) == ref._encode_only_native_bpe(chunk)
    # U+0558 is a letter to the regex module (Unicode 16) but not to the Rust engines: both
    # libraries' native-BPE ids differ from encode_ordinary's alike.
    for text in EDGE_TEXTS:
        assert ours._encode_only_native_bpe(text) == ref._encode_only_native_bpe(text)
        piece = text.encode("utf-8")
        if piece:  # tiktoken panics on an empty piece; bytepair gives []
            assert ours._encode_single_piece(piece) == ref._encode_single_piece(piece)
    assert ours._encode_single_piece(b"") == []


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@hypothesis.given(data=st.binary(max_size=24))
@hypothesis.settings(deadline=None, max_examples=200)
def test_hyp_encode_bytes(reference, name, data):
    ours, ref = bytepair.get_encoding(name), reference(name)
    assert ours._encode_bytes(data) == ref._encode_bytes(data)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@hypothesis.given(text=st.lists(st.sampled_from([" ", "\n", "\t", "\r", "a", "Z", "é", "1", "!", "'", "\u3000", "日",
                                                "<|endoftext|>"]), max_size=6).map("".join))
@hypothesis.settings(deadline=None, max_examples=40)
def test_hyp_encode_with_unstable(reference, name, text):
    ours, ref = bytepair.get_encoding(name), reference(name)
    _same_unstable(ours, ref, text, allowed_special="all")


# ------------------------------------------------------------------ specials at ordinary ids


def test_special_token_at_an_ordinary_id(reference):
    """tiktoken accepts a special token whose id is also a mergeable token's: it encodes to the
    id, the id decodes to the mergeable token's bytes, and the id counts as special."""
    import tiktoken

    base = reference("cl100k_base")
    specials = {"<x>": 5, "<y>": 5, "<sp>": 220, "hello": 15339, "<new>": 100300}
    kwargs = dict(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, special_tokens=specials)
    ref, ours = tiktoken.Encoding("shared", **kwargs), bytepair.Encoding("shared", **kwargs)
    assert (ours.n_vocab, ours.max_token_value) == (ref.n_vocab, ref.max_token_value)
    assert ours.token_byte_values() == ref.token_byte_values()
    for spelling, token in specials.items():
        assert ours.encode_single_token(spelling) == ref.encode_single_token(spelling)
        assert ours.decode_single_token_bytes(token) == ref.decode_single_token_bytes(token)
        assert ours.is_special_token(token) == ref.is_special_token(token) is True
    rng = random.Random(5)
    words = ["<x>", "<y>", "<sp>", "hello", "<new>", "&", " ", "\n", "a", "日"]
    for _ in range(100):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(6)))
        for kw in ({"allowed_special": "all"}, {"disallowed_special": ()}, {"allowed_special": {"<sp>"}, "disallowed_special": ()}):
            tokens = ref.encode(text, **kw)
            assert ours.encode(text, **kw) == tokens, (text, kw)
            assert ours.decode_bytes(tokens) == ref.decode_bytes(tokens)
            _same_unstable(ours, ref, text, **kw)
        with pytest.raises(ValueError) if any(s in text for s in specials) else _no_error():
            ours.encode(text)


class _no_error:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ------------------------------------------------------------------ list_encoding_names


@pytest.fixture
def empty_caches(tmp_path, monkeypatch):
    """Every cache directory bytepair looks in is an empty folder of ours."""
    import tempfile

    cache = tmp_path / "cache"
    cache.mkdir()
    for var in ("BYTEPAIR_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        monkeypatch.setenv(var, str(cache))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return cache


def test_list_encoding_names_lists_only_what_builds_here(empty_caches, monkeypatch, tmp_path):
    bundled = ["cl100k_base", "o200k_base", "o200k_harmony"]
    monkeypatch.setenv("BYTEPAIR_LLAMA3_PATH", str(tmp_path / "missing.model"))
    assert bytepair.list_encoding_names() == bundled
    assert layout.list_encoding_names() == layout.registry.list_encoding_names() == bundled
    # A cached file makes its encoding listed (the pinned hash is checked when it is built).
    (empty_caches / "r50k_base.tiktoken").write_bytes(b"not checked yet")
    (empty_caches / "vocab.bpe").write_bytes(b"")
    assert bytepair.list_encoding_names() == ["r50k_base"] + bundled
    with pytest.raises(bytepair.HashMismatchError):
        bytepair.get_encoding("r50k_base")
    (empty_caches / "encoder.json").write_bytes(b"")  # gpt2 needs both of its files
    assert bytepair.list_encoding_names() == ["gpt2", "r50k_base"] + bundled
    # Names that are not listed are still known, and still built on request.
    assert "p50k_base" in layout.registry.ENCODING_CONSTRUCTORS
    with pytest.raises(FileNotFoundError):
        bytepair.registry.llama.llama3()


def test_llama3_listed_when_its_file_is_found(reference, monkeypatch):
    reference("llama3")  # requires llama-models
    from bytepair.registry.llama import find_llama3_vocab

    monkeypatch.setenv("BYTEPAIR_LLAMA3_PATH", str(find_llama3_vocab()))
    assert "llama3" in bytepair.list_encoding_names()


def test_every_listed_name_builds():
    for name in bytepair.list_encoding_names():
        assert bytepair.get_encoding(name).name == name


# ------------------------------------------------------------------ tiktoken._educational


def test_educational_encodes_as_encoding_and_as_tiktokens():
    import tiktoken._educational as te

    text = "Readable BPE: naïve café, 日本語, 12345!!\n  spaces"
    simple = layout._educational.SimpleBytePairEncoding.from_tiktoken("cl100k_base")
    ids = simple.encode(text, visualise=None)
    assert ids == bytepair.get_encoding("cl100k_base").encode_ordinary(text)
    theirs = te.SimpleBytePairEncoding(pat_str=simple.pat_str, mergeable_ranks=simple.mergeable_ranks)
    assert ids == theirs.encode(text, visualise=None)
    assert simple.decode(ids) == text and simple.decode_bytes(ids) == text.encode()
    assert b"".join(simple.decode_tokens_bytes(ids)) == text.encode()


def test_educational_train_is_bytepairs_trainer():
    text = "the cat sat on the mat. the dog sat on the log. " * 20
    pattern = bytepair.get_encoding("cl100k_base")._pat_str
    simple = layout._educational.SimpleBytePairEncoding.train(text, vocab_size=300, pat_str=pattern)
    assert simple.mergeable_ranks == bytepair.train([text], 300, pattern=pattern)._mergeable_ranks
    assert simple.decode(simple.encode("the cat sat", visualise=None)) == "the cat sat"
    with pytest.raises(ValueError):
        layout._educational.SimpleBytePairEncoding.train(text, vocab_size=255, pat_str=pattern)


def test_educational_visualisation(capsys):
    simple = layout._educational.SimpleBytePairEncoding.from_tiktoken("cl100k_base")
    simple.encode("hello", visualise=None)
    assert capsys.readouterr().out == ""
    simple.encode("hello", visualise="simple")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[b'h', b'e', b'l', b'l', b'o']" and lines[-2] == "[b'hello']"
    simple.encode("hello", visualise="colour")
    out = capsys.readouterr().out
    assert "\x1b[48;5;" in out and "\x1b[0m" in out
    layout._educational.train_simple_encoding()
    assert "hello" in capsys.readouterr().out
