"""tiktoken's own test suite, run offline against ``bytepair.install_as_tiktoken()``: every test
that passes on the real tiktoken passes on bytepair.

The suite is tiktoken's code, so it is not in this repository: .ci/run fetches the ``tests/``
folder of the sdist of the tiktoken installed here into ``.ci-cache/tiktoken-tests`` (ignored
by git), with the version in ``VERSION``. The suite runs twice, each time in a fresh process:
on the real tiktoken, and with bytepair installed as tiktoken by a ``sitecustomize`` module (so
the processes the suite starts itself get bytepair too). Both runs read cl100k_base and
o200k_base from a cache directory (the ``tiktoken_cache`` fixture) and have the network closed,
so tests that need r50k_base, p50k_base or gpt2 fail in both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import REPO, require

SUITE = Path(os.environ.get("BYTEPAIR_TIKTOKEN_TESTS", REPO / ".ci-cache" / "tiktoken-tests"))

# Written into each run's folder: which tiktoken the suite imported.
CONFTEST = """\
import json
import tiktoken

with open("imported.json", "w") as f:
    json.dump({"Encoding": tiktoken.Encoding.__module__, "file": tiktoken.__file__}, f)
"""

SHIM = "import bytepair\nbytepair.install_as_tiktoken()\n"

# A proxy nothing listens on: any download fails at once, in both runs alike.
NO_NETWORK = "http://127.0.0.1:9"


def _run(work: Path, cache: Path, as_bytepair: bool) -> tuple[dict[str, str], dict[str, str], str]:
    """Runs the suite in ``work``: ({test id: outcome}, {test id: failure text}, which
    tiktoken it imported, as a dict) and pytest's output."""
    shutil.copytree(SUITE / "tests", work / "tests")
    # An ini file of its own makes `work` the rootdir: none of bytepair's pytest settings apply.
    (work / "pytest.ini").write_text("[pytest]\n")
    (work / "conftest.py").write_text(CONFTEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))}
    env.update(TIKTOKEN_CACHE_DIR=str(cache), BYTEPAIR_CACHE_DIR=str(cache), NO_PROXY="", no_proxy="",
               HTTP_PROXY=NO_NETWORK, HTTPS_PROXY=NO_NETWORK, http_proxy=NO_NETWORK, https_proxy=NO_NETWORK)
    if as_bytepair:
        shim = work / "shim"
        shim.mkdir()
        (shim / "sitecustomize.py").write_text(SHIM)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shim), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "--junitxml=results.xml"],
        cwd=work, env=env, capture_output=True, text=True, timeout=1800,
    )
    output = proc.stdout[-4000:] + proc.stderr[-4000:]
    assert (work / "results.xml").is_file(), f"tiktoken's suite did not run:\n{output}"
    outcomes, failures = {}, {}
    for case in ET.parse(work / "results.xml").getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            outcomes[test] = "failed"
            failures[test] = (bad.get("message") or "")[:500]
        elif case.find("skipped") is not None:
            outcomes[test] = "skipped"
        else:
            outcomes[test] = "passed"
    imported = json.loads((work / "imported.json").read_text())
    return outcomes, failures, imported, output


def test_tiktoken_suite_passes_on_bytepair(tiktoken_cache, tmp_path):
    require((SUITE / "tests" / "test_encoding.py").is_file(),
            f"tiktoken's test suite in {SUITE} (.ci/run fetches it from tiktoken's sdist)")
    import tiktoken  # the real one: this process never installs bytepair as tiktoken

    suite_version = (SUITE / "VERSION").read_text().strip()
    assert suite_version == tiktoken.__version__, (
        f"{SUITE} holds tiktoken {suite_version}'s tests, but tiktoken {tiktoken.__version__} is installed"
    )

    (tmp_path / "tiktoken").mkdir()
    (tmp_path / "bytepair").mkdir()
    theirs, _, imported, out = _run(tmp_path / "tiktoken", tiktoken_cache, as_bytepair=False)
    assert imported["Encoding"] == "tiktoken.core", imported
    ours, failures, imported, our_out = _run(tmp_path / "bytepair", tiktoken_cache, as_bytepair=True)
    assert imported["Encoding"] == "bytepair.encoding", imported

    assert set(ours) == set(theirs), "the two runs collected different tests"
    passed = {t for t, o in theirs.items() if o == "passed"}
    # Offline, tiktoken passes the cl100k_base and o200k_base tests: a run that passes almost
    # nothing would prove nothing.
    assert len(passed) >= 15, f"only {len(passed)} tests pass on the real tiktoken:\n{out}"
    lost = sorted(t for t in passed if ours[t] != "passed")
    assert not lost, "pass on tiktoken but not on bytepair:\n" + "\n".join(
        f"{t}: {failures.get(t, ours[t])}" for t in lost
    ) + f"\n\n{our_out}"
