"""`bytepair chat` and `bytepair count --price`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import bytepair
from bytepair.chat import NANOCHAT_SPECIAL_TOKENS, render_conversation
from bytepair.cli import main


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(main, list(args), input=input)

    return invoke


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    enc = bytepair.train(["hello there, how are you? fine thanks"] * 20, 270, pattern="nanochat",
                         special_tokens=NANOCHAT_SPECIAL_TOKENS)
    path = tmp_path_factory.mktemp("chat") / "nanochat.bpe2"
    enc.save(path, format="bpe2")
    return path, bytepair.load(path)


CONVERSATIONS = [
    {"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"}]},
    [{"role": "system", "content": "be brief"}, {"role": "user", "content": "how are you?"},
     {"role": "assistant", "content": [{"type": "text", "text": "fine"},
                                       {"type": "python", "text": "1+1"},
                                       {"type": "python_output", "text": "2"}]}],
]


def test_chat_prints_ids_and_mask_per_line(run, vocab_file):
    path, enc = vocab_file
    lines = "\n".join(json.dumps(c) for c in CONVERSATIONS) + "\n\n"
    result = run("chat", "--vocab", str(path), input=lines)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["ids"], r["mask"]) for r in rows] == [render_conversation(enc, c) for c in CONVERSATIONS]
    shown = run("chat", "--vocab", str(path), "--show", "--max-tokens", "5", input=lines)
    assert shown.output.splitlines()[0] == enc.decode(render_conversation(enc, CONVERSATIONS[0])[0][:5])


@pytest.mark.parametrize("line, message", [
    ("{not json", "<stdin>:1: not JSON"),
    ('[{"role": "assistant", "content": "x"}]', "<stdin>:1: message 0: expected role 'user'"),
])
def test_chat_errors_name_the_line(run, vocab_file, line, message):
    result = run("chat", "--vocab", str(vocab_file[0]), input=line)
    assert result.exit_code == 1
    assert message in result.output


def test_chat_needs_an_encoding_with_a_template(run):
    result = run("chat", "-e", "cl100k_base", input='[{"role": "user", "content": "x"}]')
    assert result.exit_code == 1
    assert "no chat template" in result.output


def test_count_price(run, tmp_path, reference):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("The price of tokens, per million. " * 50)
    b.write_text("Zwei Dateien.")
    n = [len(reference("o200k_base").encode(p.read_text())) for p in (a, b)]
    single = run("count", "--price", "2.5", str(a)).output.split()
    assert single == [str(n[0]), f"${n[0] * 2.5 / 1e6:,.6f}"]
    many = run("count", "--price", "2.5", str(a), str(b)).output.splitlines()
    assert many[-1].split()[:2] == [f"{sum(n):,}", f"${sum(n) * 2.5 / 1e6:,.6f}"]
    assert run("count", "--price", "-1", str(a)).exit_code == 2
