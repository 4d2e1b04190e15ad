"""The registry: names, the model table, bundled tables, cache lookup, plugins, Llama 3."""

from __future__ import annotations

import hashlib
import sys
import textwrap

import pytest

import bytepair
from bytepair.registry import models, openai


def test_model_table_is_tiktokens():
    import tiktoken.model as tm

    assert models.MODEL_TO_ENCODING == tm.MODEL_TO_ENCODING
    # Prefix order matters: the first match wins.
    assert list(models.MODEL_PREFIX_TO_ENCODING.items()) == list(tm.MODEL_PREFIX_TO_ENCODING.items())


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4-0314", "gpt-3.5-turbo-16k",
                                   "o1-mini", "gpt-5-nano", "ft:gpt-4o:org", "text-embedding-3-small",
                                   "gpt-oss-120b", "text-davinci-003", "gpt2"])
def test_encoding_name_for_model_agrees(model):
    import tiktoken.model as tm

    assert bytepair.encoding_name_for_model(model) == tm.encoding_name_for_model(model)


def test_list_encoding_names():
    """Every built-in name is known; the list holds the ones buildable here (the rule, case by
    case: tests/api/test_tiktoken_dropin.py)."""
    known = bytepair.registry.constructors()
    for n in ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony", "llama3"]:
        assert n in known
    assert {"cl100k_base", "o200k_base", "o200k_harmony"} <= set(bytepair.list_encoding_names())


def test_get_encoding_is_cached():
    assert bytepair.get_encoding("o200k_base") is bytepair.get_encoding("o200k_base")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_bundled_table_is_the_pinned_source(vocab_dir, name, reference):
    """The shipped BPE2 table was made from the pinned .tiktoken file and holds the same ranks."""
    source = (vocab_dir / f"{name}.tiktoken").read_bytes()
    assert hashlib.sha256(source).hexdigest() == openai.SOURCE_SHA256[name]
    table = (openai.DATA / f"{name}.bpe2").read_bytes()
    assert bytepair._core.bpe2_info(table)["source_hash"].hex() == openai.SOURCE_SHA256[name]
    assert bytepair.get_encoding(name)._mergeable_ranks == bytepair.load_tiktoken_bpe(vocab_dir / f"{name}.tiktoken")
    assert bytepair.get_encoding(name)._mergeable_ranks == reference(name)._mergeable_ranks


def test_downloadable_encoding_reads_tiktoken_cache_layout(tmp_path, monkeypatch, vocab_dir):
    """r50k/p50k/gpt2 are looked up in tiktoken's cache (SHA-1 of the URL) before any download.

    No real r50k file is available offline, so register a cached file under the same scheme and
    read it through the same code path.
    """
    from bytepair import fetch

    url = openai.BLOB + "/encodings/cl100k_base.tiktoken"
    key = hashlib.sha1(url.encode()).hexdigest()
    (tmp_path / key).write_bytes((vocab_dir / "cl100k_base.tiktoken").read_bytes())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BYTEPAIR_CACHE_DIR", raising=False)
    data = fetch.read_file(url, openai.SOURCE_SHA256["cl100k_base"])
    assert hashlib.sha256(data).hexdigest() == openai.SOURCE_SHA256["cl100k_base"]
    # By file name in BYTEPAIR_CACHE_DIR too.
    named = tmp_path / "named"
    named.mkdir()
    (named / "cl100k_base.tiktoken").write_bytes(data)
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(named))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    assert fetch.read_file(url, openai.SOURCE_SHA256["cl100k_base"]) == data


def test_plugin_entry_point(tmp_path, monkeypatch, reference):
    """A package registers an encoding through the `bytepair.encodings` entry-point group."""
    pkg = tmp_path / "myplugin.py"
    pkg.write_text(textwrap.dedent("""
        import bytepair
        def tiny():
            base = bytepair.get_encoding("cl100k_base")
            ranks = {k: v for k, v in base._mergeable_ranks.items() if v < 1000}
            return {"name": "tiny", "pat_str": base._pat_str, "mergeable_ranks": ranks,
                    "special_tokens": {"<|end|>": 1000}}
        ENCODING_CONSTRUCTORS = {"tiny": tiny}
    """))
    dist = tmp_path / "myplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[bytepair.encodings]\nmyplugin = myplugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(bytepair.registry, "_plugins", None)
    try:
        assert "tiny" in bytepair.list_encoding_names()
        enc = bytepair.get_encoding("tiny")
        assert enc.n_vocab == 1001
        assert enc.encode("hi<|end|>", allowed_special="all")[-1] == 1000
    finally:
        bytepair.registry._cache.pop("tiny", None)
        sys.modules.pop("myplugin", None)
        monkeypatch.setattr(bytepair.registry, "_plugins", None)


def test_llama3_from_path_and_env(reference, monkeypatch):
    ref = reference("llama3")
    from bytepair.registry.llama import find_llama3_vocab

    path = find_llama3_vocab()
    by_path = bytepair.get_encoding("llama3", path=path)
    monkeypatch.setenv("BYTEPAIR_LLAMA3_PATH", str(path))
    by_env = bytepair.registry.llama.llama3()
    text = "<|begin_of_text|>Hello, Llama 3!<|eot_id|>"
    want = ref.encode(text, allowed_special="all")
    assert by_path.encode(text, allowed_special="all") == want
    assert by_env.encode(text, allowed_special="all") == want
    assert by_path.n_vocab == 128256
    sp = by_path._special_tokens
    assert (sp["<|begin_of_text|>"], sp["<|end_of_text|>"], sp["<|start_header_id|>"],
            sp["<|end_header_id|>"], sp["<|eot_id|>"]) == (128000, 128001, 128006, 128007, 128009)


def test_llama3_missing_says_how_to_get_it(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError):
        bytepair.get_encoding("llama3", path=tmp_path / "nope.model")
    monkeypatch.delenv("BYTEPAIR_LLAMA3_PATH", raising=False)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(bytepair.VocabularyNotFoundError, match="llama-models"):
        bytepair.registry.llama.find_llama3_vocab()


def test_get_encoding_imports_nothing_heavy():
    """Start-up stays lean: a fresh `import bytepair; get_encoding(...)` loads none of the
    modules that only other features need (checked by name, not by timing)."""
    import subprocess
    import sys

    code = ("import sys, bytepair; bytepair.get_encoding('o200k_base'); bytepair.get_encoding('cl100k_base'); "
            "print(' '.join(sys.modules))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split())
    heavy = {"numpy", "click", "urllib", "urllib.request", "json", "importlib.metadata", "hashlib",
             "tempfile", "typing", "pathlib", "logging", "threading", "bytepair.formats",
             "bytepair.scored", "bytepair.merged", "bytepair.fetch", "bytepair.cli"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_lazy_names_resolve_and_are_listed():
    import bytepair

    assert set(bytepair.__all__) <= set(dir(bytepair))
    for name in bytepair.__all__:
        assert getattr(bytepair, name) is not None
    assert callable(bytepair.train) and callable(bytepair.load)
    from bytepair.formats import load
    from bytepair.stream import StreamDecoder

    assert bytepair.load is load and bytepair.StreamDecoder is StreamDecoder
    with pytest.raises(AttributeError):
        bytepair.no_such_name  # noqa: B018
