"""Resource limits: arguments and inputs that would exhaust the machine get a clear error.

Each test here failed before its fix (an abort, an internal error, an OS error or a
TypeError where tiktoken accepts the call).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from support import REPO, require

GOLDEN = REPO / "tests" / "data" / "golden"
DOCS = ["low lower lowest newer wider"] * 20


@pytest.mark.parametrize("n", [2**31, 2**62, 10**4, 1025, 0, -1])
def test_train_num_threads_out_of_range_is_value_error(n):
    # 2**31 aborted the process, 2**62 raised an internal error, 10**4 an OSError.
    with pytest.raises(ValueError, match="num_threads must be an int from 1 to 1024"):
        bytepair.train(DOCS, vocab_size=270, num_threads=n)


def test_train_num_threads_none_and_bounds_work():
    ids = bytepair.train(DOCS, vocab_size=270, num_threads=1).encode_ordinary(DOCS[0])
    assert bytepair.train(DOCS, vocab_size=270, num_threads=None).encode_ordinary(DOCS[0]) == ids
    assert bytepair.train(DOCS, vocab_size=270, num_threads=1024).encode_ordinary(DOCS[0]) == ids


@pytest.mark.parametrize("name", ["tiny.bpe2", "tiny_hf.json", "tiny_sp.model"])
def test_batch_num_threads_none_as_tiktoken(name):
    # tiktoken hands num_threads to ThreadPoolExecutor, which takes None; these were TypeErrors.
    enc = bytepair.load(GOLDEN / name)
    texts = ["hello world", "goodbye world"]
    ids = [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=None) == ids
    assert enc.encode_batch(texts, num_threads=None) == [enc.encode(t) for t in texts]
    assert enc.encode_ordinary_parallel(texts[0], num_threads=None) == ids[0]
    assert enc.decode_batch(ids, num_threads=None) == [enc.decode(i) for i in ids]
    assert enc.decode_bytes_batch(ids, num_threads=None) == [enc.decode_bytes(i) for i in ids]


def test_bpe2_special_id_far_beyond_table_is_vocab_error():
    # A special token at id 2**31-1 sized a 16 GiB table from the id (and aborted the process).
    from bytepair import _core
    data = (GOLDEN / "tiny.bpe2").read_bytes()
    for special_id in (2**31 - 1, 2**31 + 5, 50_000_000):
        with pytest.raises(bytepair.VocabError, match=f"id {special_id}, far beyond"):
            _core.Tokenizer.from_bpe2(data, [("<x>", special_id)], r"\s+|\S+")
    # An id just past the table is still fine (the bound is Vocab::new's, for ranks too).
    t = _core.Tokenizer.from_bpe2(data, [("<x>", 1000)], r"\s+|\S+")
    assert t.encode("<x>", allowed_special="all") == [1000]


_OOM_SCRIPT = r"""
import resource, sys, bytepair
enc = bytepair.load(sys.argv[1])
text = "a" * (200 << 20)
with open("/proc/self/status") as f:
    vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize"))
# Room for the text, not for one 4-byte id per byte of it (800 MB).
resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), resource.RLIM_INFINITY))
calls = {
    "encode": lambda: enc.encode(text),
    "encode_ordinary": lambda: enc.encode_ordinary(text),
    "encode_to_numpy": lambda: enc.encode_to_numpy(text),
    "encode_ordinary_parallel": lambda: enc.encode_ordinary_parallel(text),
    "encode_ordinary_batch": lambda: enc.encode_ordinary_batch([text]),
    "encode_batch": lambda: enc.encode_batch(["short", text]),
    "encode_ordinary_batch_to_numpy": lambda: enc.encode_ordinary_batch_to_numpy([text]),
    "encode_batch_to_numpy": lambda: enc.encode_batch_to_numpy(["short", text], num_threads=2),
}
for name, call in calls.items():
    try:
        call()
        print(name, "returned")
    except MemoryError as e:
        assert "cannot reserve room for the ids" in str(e), e
        print(name, "MemoryError")
print("after", enc.encode("hello world") == enc.encode_ordinary("hello world"))
# encode_to_numpy after its MemoryError: a fresh array that owns its buffer, and a buffer that
# nothing exports once the array is gone (a bytearray left exported refuses to be resized).
import gc, numpy as np
arr = enc.encode_to_numpy("hello world")
base = arr.base
refs = sys.getrefcount(base)
assert arr.tolist() == enc.encode("hello world"), arr
del arr
gc.collect()
assert sys.getrefcount(base) == refs - 1, (sys.getrefcount(base), refs)
if isinstance(base, bytearray):
    base.append(0)  # BufferError if an export were left
try:
    enc.encode_to_numpy("<|endoftext|>")
except ValueError:
    pass
print("numpy after", all(enc.encode_to_numpy("hello world").tolist() == enc.encode("hello world") for _ in range(3)))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmSize from /proc (Linux)")
def test_huge_text_reservation_is_memory_error(tmp_path):
    # Encoding reserves one id per byte up front; when that could not be had the process
    # aborted (Rust's allocation failure handler) instead of raising MemoryError.
    proc = subprocess.run([sys.executable, "-c", _OOM_SCRIPT, str(GOLDEN / "tiny.bpe2")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("\n")
    for name in ("encode", "encode_ordinary", "encode_to_numpy", "encode_ordinary_parallel",
                 "encode_ordinary_batch", "encode_batch", "encode_ordinary_batch_to_numpy",
                 "encode_batch_to_numpy"):
        assert f"{name} MemoryError" in lines
    assert "after True" in lines
    assert "numpy after True" in lines


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_load_device_is_format_error(device):
    # load("/dev/zero") read until memory ran out.
    require(Path(device).exists(), device)
    with pytest.raises(bytepair.FormatError, match="not a regular file"):
        bytepair.load(device)


def test_load_fifo_is_format_error_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(bytepair.FormatError, match="not a regular file"):
        bytepair.load(fifo)


def test_load_oversized_file_refused_before_reading(tmp_path):
    from bytepair.formats.limits import MAX_FILE_BYTES
    big = tmp_path / "big.tiktoken"
    with open(big, "wb") as f:  # sparse: no disk used, and nothing is read
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(bytepair.FormatError, match=f"more than the {MAX_FILE_BYTES}"):
        bytepair.load(big)


def test_load_tiktoken_bpe_and_verify_refuse_devices():
    # load_tiktoken_bpe (tiktoken's function) and `bytepair verify` read whole files too.
    require(Path("/dev/zero").exists(), "/dev/zero")
    with pytest.raises(bytepair.FormatError, match="not a regular file"):
        bytepair.load_tiktoken_bpe("/dev/zero")
    from click.testing import CliRunner

    from bytepair.cli import main
    result = CliRunner().invoke(main, ["verify", "/dev/zero", "/dev/zero"])
    assert result.exit_code == 1 and "not a regular file" in result.output
