"""The C library (crates/capi, include/bytepair.h) from C: builds it with cargo, compiles
examples/hello.c and tests/capi/test_capi.c with the system ``cc`` against the static and the
shared library, runs them, and checks the C path against the Python path.

- parity: the ids of every corpus from C equal ``Encoding.encode``'s, for cl100k and o200k
  (built in, and loaded from files by content), a SentencePiece model and a QTKR file; C's
  decode equals ``decode_bytes``, and C's stream decode equals C's decode (checked in C);
- every error code of the header is provoked by the C program (``errors``);
- 8 threads share one handle (``threads``);
- valgrind finds no error and no leak;
- the crate's Rust tests, among them the check that include/bytepair.h is what cbindgen
  generates today.
"""

from __future__ import annotations

import array
import importlib.util
import random
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import bytepair
from support import CORPORA, VOCAB_DIR, mistral_model, require

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "bytepair.h"
SP_MODEL = "tokenizer.model.v1"  # mistral-common's Mistral 7B v0.1 SentencePiece BPE model


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    return r


@pytest.fixture(scope="module")
def libdir() -> Path:
    """The release build of crates/capi (the workspace's target/, or CARGO_TARGET_DIR)."""
    require(shutil.which("cargo") is not None, "cargo (to build the C library)")
    _run(["cargo", "build", "--release", "-p", "bytepair-capi"], cwd=ROOT)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    out = target / "release"
    assert (out / "libbytepair.a").is_file() and (out / "libbytepair.so").is_file()
    return out


def _compile(source: Path, exe: Path, libdir: Path, static: bool) -> Path:
    require(shutil.which("cc") is not None, "a C compiler (cc)")
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-g", "-pthread", f"-I{ROOT / 'include'}"]
    if static:
        # What `cargo rustc -- --print native-static-libs` lists for the static library.
        link = [str(libdir / "libbytepair.a"), "-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]
    else:
        link = [f"-L{libdir}", "-lbytepair", f"-Wl,-rpath,{libdir}"]
    _run(["cc", *flags, str(source), "-o", str(exe), *link])
    return exe


@pytest.fixture(scope="module", params=["static", "shared"])
def linkage(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def programs(libdir, tmp_path_factory) -> dict[str, dict[str, Path]]:
    """{"static"|"shared": {"hello": exe, "test": exe}}."""
    d = tmp_path_factory.mktemp("capi")
    return {
        kind: {
            "hello": _compile(ROOT / "examples" / "hello.c", d / f"hello-{kind}", libdir, kind == "static"),
            "test": _compile(ROOT / "tests" / "capi" / "test_capi.c", d / f"test_capi-{kind}", libdir, kind == "static"),
        }
        for kind in ("static", "shared")
    }


@pytest.fixture(scope="module")
def qtkr_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("qtkr") / "cl100k.qtkr"
    bytepair.get_encoding("cl100k_base").save(path, lossy=True)
    return path


@pytest.fixture(scope="module")
def text_files(corpus_texts, tmp_path_factory) -> dict[str, Path]:
    """Each corpus as the UTF-8 bytes Python encodes (read_text's newlines, not the file's)."""
    d = tmp_path_factory.mktemp("corpora")
    out = {}
    for name, text in corpus_texts.items():
        out[name] = d / f"{name}.txt"
        out[name].write_bytes(text.encode("utf-8"))
    return out


def test_hello(programs, linkage):
    r = _run([programs[linkage]["hello"]])
    text = "Hello, world! naïve café 😀"
    ids = bytepair.get_encoding("cl100k_base").encode(text)
    assert f"{len(ids)} ids: {' '.join(map(str, ids))}\n" in r.stdout
    assert f"decoded: {text}\n" in r.stdout
    assert f"streamed: {text}\n" in r.stdout


def test_header_compiles_as_cpp(libdir, tmp_path):
    """C++ callers include the same header (extern "C", no C-only constructs)."""
    require(shutil.which("c++") is not None, "a C++ compiler (c++)")
    src = tmp_path / "use.cpp"
    src.write_text('#include "bytepair.h"\n'
                   'int main() { bp_tokenizer *t = nullptr;\n'
                   '  if (bp_tokenizer_builtin("cl100k_base", &t) != BP_OK) return 1;\n'
                   '  size_t n = 0; int rc = bp_count(t, "hello world", 11, 0, &n);\n'
                   '  bp_tokenizer_free(t); return rc == BP_OK && n == 2 ? 0 : 1; }\n')
    exe = tmp_path / "use"
    _run(["c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}", src, "-o", exe,
          f"-L{libdir}", "-lbytepair", f"-Wl,-rpath,{libdir}"])
    _run([exe])


def test_hello_bos_eos_flow(programs, linkage):
    """A SentencePiece model: BOS and EOS added on encode, left out on decode."""
    path = mistral_model(SP_MODEL)
    enc = bytepair.load(path)
    text = "Grüße aus 東京"
    r = _run([programs[linkage]["hello"], path, text])
    assert enc.bos_id is not None and enc.eos_id is not None
    assert f"BOS {enc.bos_id}, EOS {enc.eos_id}\n" in r.stdout
    ids = enc.encode(text, add_bos=True, add_eos=True)
    assert ids[0] == enc.bos_id and ids[-1] == enc.eos_id
    assert f"{len(ids)} ids: {' '.join(map(str, ids))}\n" in r.stdout
    assert f"decoded: {text}\n" in r.stdout


def _specs(qtkr_file: Path) -> dict[str, tuple[str, object]]:
    """name -> (SPEC for the C program, the Python Encoding it must agree with)."""
    sp = mistral_model(SP_MODEL)
    return {
        "cl100k builtin": ("builtin:cl100k_base", bytepair.get_encoding("cl100k_base")),
        "o200k builtin": ("builtin:o200k_base", bytepair.get_encoding("o200k_base")),
        "o200k .tiktoken file": (str(VOCAB_DIR / "o200k_base.tiktoken"), bytepair.get_encoding("o200k_base")),
        "cl100k .bpe2 file": (str(ROOT / "python" / "bytepair" / "data" / "cl100k_base.bpe2"), bytepair.get_encoding("cl100k_base")),
        "sentencepiece": (str(sp), bytepair.load(sp)),
        "qtkr": (str(qtkr_file), bytepair.load(qtkr_file)),
    }


@pytest.mark.parametrize("model", ["cl100k builtin", "o200k builtin", "o200k .tiktoken file", "cl100k .bpe2 file", "sentencepiece", "qtkr"])
def test_parity_with_python_on_the_corpora(model, programs, qtkr_file, text_files, corpus_texts, tmp_path):
    """Whole corpora, but for QTKR: the file has no split pattern, so each corpus is one piece
    for its merge loop (about 100 s for the seven on both sides); its first 100,000 characters
    of each corpus keep the run under a few seconds."""
    if model == "o200k .tiktoken file":
        require((VOCAB_DIR / "o200k_base.tiktoken").is_file(), "o200k_base.tiktoken (BYTEPAIR_VOCAB_DIR)")
    spec, enc = _specs(qtkr_file)[model]
    exe = programs["static"]["test"]
    for corpus in CORPORA:
        ids_path = tmp_path / f"{corpus}.ids"
        text, text_file = corpus_texts[corpus], text_files[corpus]
        if model == "qtkr":
            text = text[:100_000]
            text_file = tmp_path / f"{corpus}.txt"
            text_file.write_bytes(text.encode("utf-8"))
        _run([exe, "encode", spec, text_file, ids_path])
        got = array.array("I")
        got.frombytes(ids_path.read_bytes())
        expected = enc.encode(text)
        assert got.tolist() == expected, f"{model} on {corpus}: C ids differ from Python's"
        decoded = Path(f"{ids_path}.decoded").read_bytes()
        assert decoded == enc.decode_bytes(expected), f"{model} on {corpus}: C decode differs"


def test_o200k_harmony_specials(programs, tmp_path):
    """The built-in o200k_harmony: the harmony chat format's special tokens, allowed by flag."""
    text = "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|channel|>final<|message|>4<|return|><|reserved_200020|>"
    path = tmp_path / "chat.txt"
    path.write_bytes(text.encode())
    ids_path = tmp_path / "chat.ids"
    allow = re.search(r"#define BP_ENCODE_ALLOW_SPECIAL (\d+)", HEADER.read_text()).group(1)
    _run([programs["shared"]["test"], "encode", "builtin:o200k_harmony", path, ids_path, allow])
    got = array.array("I")
    got.frombytes(ids_path.read_bytes())
    enc = bytepair.get_encoding("o200k_harmony")
    assert got.tolist() == enc.encode(text, allowed_special="all")
    assert 200006 in got and 200020 in got
    assert Path(f"{ids_path}.decoded").read_bytes() == text.encode()


GOLDEN = ROOT / "tests" / "data" / "golden"


@pytest.mark.parametrize("name", ["tiny.bpe2", "tiny.bpz2", "tiny.qtkr", "tiny.leap", "tiny_sp.leap", "tiny_hf.json", "tiny_hf_fallback.json"])
def test_every_format_loads_by_content_as_python_loads_it(name, programs, corpus_texts, tmp_path):
    """The small golden files of every format bytepair reads (tests/data/golden), through
    bp_tokenizer_load's content detection: the ids of Python's bytepair.load(path)."""
    enc = bytepair.load(GOLDEN / name)
    text = "".join(corpus_texts[c][:3000] for c in CORPORA) + " 123 4567 \t\n  naïve ünïcödé 😀 "
    path = tmp_path / "text.txt"
    path.write_bytes(text.encode())
    ids_path = tmp_path / "text.ids"
    _run([programs["shared"]["test"], "encode", GOLDEN / name, path, ids_path])
    got = array.array("I")
    got.frombytes(ids_path.read_bytes())
    expected = enc.encode(text)
    assert got.tolist() == expected
    assert Path(f"{ids_path}.decoded").read_bytes() == enc.decode_bytes(expected)


def test_a_tiktoken_file_of_unknown_hash_is_refused_as_in_python(programs, tmp_path):
    """No split pattern is guessed: Python asks for pat_str=, C says BP_ERR_FORMAT."""
    with pytest.raises(bytepair.errors.FormatError, match="split pattern"):
        bytepair.load(GOLDEN / "tiny.tiktoken")
    path = tmp_path / "t.txt"
    path.write_bytes(b"hello")
    r = subprocess.run([programs["shared"]["test"], "encode", GOLDEN / "tiny.tiktoken", path, tmp_path / "ids"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "split pattern" in r.stderr, r.stderr


def test_every_error_code_is_provoked(programs, linkage, qtkr_file):
    codes = re.findall(r"\b(BP_ERR_[A-Z0-9_]+) = -\d+", HEADER.read_text())
    assert len(codes) >= 8, codes
    source = (ROOT / "tests" / "capi" / "test_capi.c").read_text()
    for code in codes:
        assert re.search(rf"== {code}\b", source), f"test_capi.c never expects {code}"
    r = _run([programs[linkage]["test"], "errors", "builtin:cl100k_base", qtkr_file])
    assert "errors ok" in r.stdout


def test_chat_templates_render_as_jinja2(programs, linkage, corpus_documents, tmp_path):
    """bp_chat_template_render on the five published templates (and ChatML with
    {% generation %}, which prints no markers from C) == jinja2 set up as transformers sets it
    up, over corpus conversations with tools, the context given as JSON."""
    import json

    require(importlib.util.find_spec("jinja2") is not None, "jinja2 (the reference renderer)")
    import jinja2
    from bytepair.chat.jinja import _compile_jinja2, _prepare

    rng = random.Random(3)
    tool = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city (東京)",
                                             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    convs = []
    for k in range(8):
        msgs = [{"role": "system", "content": " Be brief.\n"}] if k % 2 else []
        for _ in range(1 + k % 3):
            msgs += [{"role": "user", "content": rng.choice(corpus_documents)[:rng.choice([0, 50, 400])]},
                     {"role": "assistant", "content": rng.choice(corpus_documents)[:rng.choice([1, 60, 500])]}]
        if k % 4 == 3:
            msgs += [{"role": "user", "content": "weather?"},
                     {"role": "assistant", "content": "", "tool_calls": [
                         {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2.5}}}]},
                     {"role": "tool", "name": "get_weather", "content": '{"temp": -3}'}]
        convs.append(msgs)

    chatml = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' }}{% if m['role'] == 'assistant' %}"
              "{% generation %}{{ m['content'] + '<|im_end|>' }}{% endgeneration %}{% else %}"
              "{{ m['content'] + '<|im_end|>' }}{% endif %}{{ '\\n' }}{% endfor %}")
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "data" / "chat_templates").glob("*.jinja"))}
    sources["chatml-generation"] = chatml
    for name, source in sources.items():
        compared = 0
        (tmp_path / "template.jinja").write_text(source, encoding="utf-8")
        for k, msgs in enumerate(convs):
            context = {"bos_token": "<s>", "eos_token": "</s>", "messages": _prepare(msgs),
                       "tools": [tool] if k % 2 else None, "documents": None,
                       "add_generation_prompt": k % 3 == 0, "date_string": "26 Jul 2024"}
            try:
                want = _compile_jinja2(source).render(**context).replace("\ue002", "").replace("\ue003", "")
            except jinja2.TemplateError:  # the template raises for this conversation (tests/chat checks that)
                continue
            compared += 1
            (tmp_path / "context.json").write_text(json.dumps(context, ensure_ascii=False), encoding="utf-8")
            _run([programs[linkage]["test"], "chat", tmp_path / "template.jinja", tmp_path / "context.json",
                  tmp_path / "out.txt"])
            assert (tmp_path / "out.txt").read_bytes().decode("utf-8") == want, (name, msgs)
        assert compared >= 3, name


def test_eight_threads_share_one_handle(programs, linkage, text_files):
    sample = text_files["uk"].with_name("uk-sample.txt")
    sample.write_bytes(text_files["uk"].read_bytes()[:200_000].decode("utf-8", "ignore").encode())
    for spec in ("builtin:o200k_base", str(mistral_model(SP_MODEL))):
        r = _run([programs[linkage]["test"], "threads", spec, sample])
        assert "threads ok" in r.stdout


def test_valgrind_finds_no_error_and_no_leak(programs, qtkr_file, text_files):
    require(shutil.which("valgrind") is not None, "valgrind")
    # Leaks that count: definite and indirect. Loading a merge-list model (QTKR) starts the
    # core's rayon pool, whose threads live until the process exits; valgrind calls their
    # thread-local blocks "possibly lost" at exit. That is the pool, not memory a handle loses.
    vg = ["valgrind", "--error-exitcode=1", "--leak-check=full", "--show-leak-kinds=definite,indirect",
          "--errors-for-leak-kinds=definite,indirect", f"--suppressions={ROOT / 'tests' / 'capi' / 'valgrind.supp'}", "-q"]
    exe = programs["static"]["test"]
    sample = text_files["de"].with_name("de-sample.txt")
    sample.write_bytes(text_files["de"].read_bytes()[:20_000].decode("utf-8", "ignore").encode())
    _run([*vg, exe, "errors", "builtin:cl100k_base", qtkr_file])
    _run([*vg, exe, "encode", str(mistral_model(SP_MODEL)), sample, sample.with_suffix(".ids")])
    _run([*vg, exe, "encode", str(qtkr_file), sample, sample.with_suffix(".ids")])
    _run([*vg, exe, "threads", "builtin:cl100k_base", sample])
    _run([*vg, programs["shared"]["hello"]])


def test_rust_capi_suite_and_fresh_header():
    """`cargo test -p bytepair-capi`: format detection, the stream's UTF-8 hold-back, and
    tests/header.rs, which fails when the committed include/bytepair.h differs from a fresh
    cbindgen generation."""
    require(shutil.which("cargo") is not None, "cargo (to build the C library)")
    run = subprocess.run(["cargo", "test", "--release", "-p", "bytepair-capi"], cwd=ROOT, capture_output=True, text=True)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    assert "committed_header_is_fresh ... ok" in out, out[-3000:]
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", out))
    assert passed >= 4, out[-3000:]
