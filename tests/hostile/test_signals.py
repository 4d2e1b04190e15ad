"""Signals: Ctrl-C (SIGINT) and SIGTERM reach a process that is inside bytepair.

The core runs with the GIL released, so Python only sees a signal once the core call returns:
what must hold is that it does return, that the KeyboardInterrupt then surfaces (not lost, not
a hang, not a crash), and that the pools are still usable if the program goes on. The command
line turns Ctrl-C into exit 130 with one line on stderr (docs/cli.md), never a traceback.

Each child gets a generous deadline; the deadline bounds a hang, it does not measure speed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from support import REPO, SIGINT_HANDLED

DEADLINE = 60  # seconds
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

# A child that loops over long batch, parallel and single calls (each well over the moment
# the signal arrives), says when it has started, and reports how it ended.
CHILD = SIGINT_HANDLED + r"""
import faulthandler, signal, sys, bytepair
# On a hang the test asks for every Python thread's stack (SIGUSR1) before it kills the child.
faulthandler.register(signal.SIGUSR1, all_threads=True)
enc = bytepair.get_encoding("o200k_base")
docs = ["the quick brown fox jumps over the lazy dog, 1234 times. " * 200] * 400
text = "".join(docs)
print("ready", flush=True)
try:
    while True:
        enc.encode_ordinary_batch(docs, num_threads=2)
        enc.encode_ordinary_parallel(text, num_threads=2) if hasattr(enc, "encode_ordinary_parallel") else None
        enc.encode_ordinary(text)
except KeyboardInterrupt:
    # The pools still work after the interrupt.
    assert enc.encode_ordinary_batch(["hello world"] * 64, num_threads=2) == [[24912, 2375]] * 64
    print("interrupted", flush=True)
    sys.exit(0)
"""


def _child(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _where(pid: int) -> str:
    """Where each thread of a hung child waits, from /proc (no debugger needed): its name,
    state and kernel wait channel, and the syscall it is in; and the process's masks of
    ignored and caught signals (an ignored SIGINT is bit 1 of SigIgn)."""
    def read(path: str) -> str:
        # The child may be gone, or a thread may end, between two reads.
        try:
            with open(f"/proc/{pid}/{path}") as f:
                return f.read().strip()
        except OSError as e:
            return f"({e.strerror})"

    lines = [line for line in read("status").splitlines() if line.startswith(("SigIgn", "SigCgt", "SigBlk"))]
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError as e:
        tids, lines = [], lines + [f"(threads: {e.strerror})"]
    for tid in tids:
        state = read(f"task/{tid}/stat").rsplit(")", 1)[-1].split()[:1]
        lines.append(f"thread {tid} {read(f'task/{tid}/comm')!r}: state {state}, "
                     f"wchan {read(f'task/{tid}/wchan')!r}, syscall {read(f'task/{tid}/syscall')!r}")
    return "\n".join(lines)


def _wait(proc: subprocess.Popen, hung_stacks: bool = False) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        # A hang: say where the child is before killing it, so that it explains itself.
        where = _where(proc.pid)
        if hung_stacks:
            proc.send_signal(signal.SIGUSR1)  # the child's faulthandler prints its Python stacks
            time.sleep(2)
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the process did not end within {DEADLINE} s of the signal (a hang)\n{where}\n{err[-6000:]}")
    return out, err


def test_sigint_inside_core_calls_raises_keyboardinterrupt_and_pools_still_work():
    proc = _child(CHILD)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # inside the loop's core calls
    proc.send_signal(signal.SIGINT)
    out, err = _wait(proc, hung_stacks=True)
    assert proc.returncode == 0, err[-3000:]
    assert "interrupted" in out


def test_sigterm_ends_a_process_inside_core_calls():
    proc = _child(CHILD)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _wait(proc, hung_stacks=True)
    assert proc.returncode == -signal.SIGTERM


def test_cli_ctrl_c_is_exit_130_and_one_line():
    # `bytepair count -` waiting on a stdin that stays open, interrupted as a user would.
    proc = _child(SIGINT_HANDLED + "\nimport sys; from bytepair.cli import main; sys.argv = ['bytepair', 'count', '-']; "
                  "print('ready', flush=True); main()")
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # reading stdin
    proc.send_signal(signal.SIGINT)
    out, err = _wait(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
