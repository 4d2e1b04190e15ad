"""The right exception, naming the right thing: numpy ids, deep JSON, the CLI.

Each test failed before its fix: decode of a numpy array blamed the valid first id for being
an int64, and deeply nested JSON gave a traceback from `bytepair inspect` / `bytepair chat`
(RecursionError from Python's json parser in `chat` and `train_files`).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.cli import main
from bytepair.stream import StreamDecoder
from support import REPO, require_module

np = require_module("numpy")

GOLDEN = REPO / "tests" / "data" / "golden"
MODELS = ["tiny.bpe2", "tiny_hf.json", "tiny.qtkr", "tiny_sp.model", "tiny_sp.leap"]


@pytest.fixture(scope="module", params=MODELS)
def enc(request):
    return bytepair.load(GOLDEN / request.param)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64])
def test_numpy_ids_blame_the_bad_id(enc, dtype):
    good = 100
    bad = [enc.n_vocab + 7] + ([] if dtype == np.uint64 else [-1])
    for b in bad:
        ids = np.array([good, b], dtype=dtype)
        for call in (enc.decode, enc.decode_bytes, enc.decode_tokens_bytes, lambda t: enc.decode_batch([t])):
            with pytest.raises(bytepair.UnknownTokenError) as e:
                call(ids)
            assert e.value.token == b, (call, e.value)
        # The streaming decoder reports it as decode does (not OverflowError or TypeError).
        stream = StreamDecoder(enc)
        stream.step(ids[0])
        with pytest.raises(bytepair.UnknownTokenError) as e:
            stream.step(ids[1])
        assert e.value.token == b
    assert enc.decode(np.array([good], dtype=dtype)) == enc.decode([good])


@pytest.mark.parametrize("bad", [2**32 - 1, 2**32, 2**63, -(2**63)])
def test_huge_ids_are_unknown_tokens_everywhere(enc, bad):
    with pytest.raises(bytepair.UnknownTokenError):
        enc.decode([100, bad])
    stream = StreamDecoder(enc)
    with pytest.raises(bytepair.UnknownTokenError):
        stream.feed([100, bad])


def test_non_int_ids_still_type_errors(enc):
    for bad in (1.0, None, "3", np.float64(3)):
        with pytest.raises(TypeError, match="token ids must be int"):
            enc.decode([100, bad])


DEEP = {
    "array.json": "[" * 100_000 + "]" * 100_000,
    "object.json": '{"model":' * 5_000 + "1" + "}" * 5_000,
    "tokenizer.json": '{"added_tokens": ' + "[" * 100_000 + "]" * 100_000 + ', "model": {}}',
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deeply_nested_json_is_format_error(tmp_path, name):
    path = tmp_path / name
    path.write_text(DEEP[name])
    with pytest.raises(bytepair.FormatError):
        bytepair.load(path)
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.startswith("bytepair inspect: ") and result.output.count("\n") == 1, result.output


def test_deeply_nested_jsonl_in_chat_and_train(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = CliRunner().invoke(main, ["chat", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert "nested too deeply" in result.output and result.output.count("\n") == 1
    with pytest.raises(bytepair.FormatError, match="line 1: JSON nested too deeply"):
        bytepair.train_files([path], vocab_size=300)
