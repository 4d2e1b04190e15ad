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


# ---------------------------------------------------------------- templates, datasets


def _lines(convs) -> str:
    return "".join(json.dumps(c) + "\n" for c in convs)


HARMONY = [[{"role": "user", "content": "2+2?"},
            {"role": "assistant", "channel": "final", "content": "4"}]] * 3


def test_chat_picks_harmony_for_o200k_harmony_and_chatml_for_cl100k(run):
    from bytepair.chat.chatml import with_chatml_tokens

    result = run("chat", "-e", "o200k_harmony", input=_lines(HARMONY))
    assert result.exit_code == 0, result.output
    enc = bytepair.get_encoding("o200k_harmony")
    assert json.loads(result.output.splitlines()[0]) == dict(zip(("ids", "mask"), render_conversation(enc, HARMONY[0])))
    result = run("chat", "-e", "cl100k_base", "-t", "chatml", input=_lines(HARMONY))
    im = with_chatml_tokens(bytepair.get_encoding("cl100k_base"))
    assert json.loads(result.output.splitlines()[0])["ids"] == render_conversation(im, HARMONY[0], template="chatml")[0]


def test_chat_reads_the_template_beside_a_tokenizer_json(run, tmp_path):
    from bytepair.chat.chatml import with_chatml_tokens

    im = with_chatml_tokens(bytepair.get_encoding("cl100k_base"))
    im.save(tmp_path / "tokenizer.json", format="tokenizer.json")
    source = "{% for m in messages %}<|im_start|>{{ m.role }}: {{ m.content }}<|im_end|>{% endfor %}"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": source, "eos_token": "<|im_end|>"}))
    result = run("chat", "--vocab", str(tmp_path / "tokenizer.json"), input=_lines(HARMONY[:1]))
    assert result.exit_code == 0, result.output
    enc = bytepair.load(tmp_path / "tokenizer.json")
    assert json.loads(result.output) == dict(zip(("ids", "mask"), render_conversation(enc, HARMONY[0], template=source)))
    (tmp_path / "t.jinja").write_text("{{ messages[0].content }}")
    result = run("chat", "--vocab", str(tmp_path / "tokenizer.json"), "-t", str(tmp_path / "t.jinja"),
                 input=_lines(HARMONY[:1]))
    assert json.loads(result.output)["ids"] == enc.encode_ordinary("2+2?")


def test_chat_drops_long_writes_files_and_runs_on_workers(run, tmp_path):
    import numpy as np

    from bytepair.chat import render_many

    enc = bytepair.get_encoding("o200k_harmony")
    convs = [[{"role": "user", "content": "word " * (i % 40)},
              {"role": "assistant", "channel": "final", "content": "ok"}] for i in range(700)]
    (tmp_path / "in.jsonl").write_text(_lines(convs))
    want = [r for r in render_many(enc, convs, max_tokens=30, drop_long=True, num_workers=1) if r]
    assert 0 < len(want) < len(convs)
    out = tmp_path / "out.jsonl"
    result = run("chat", "-e", "o200k_harmony", "--max-tokens", "30", "--drop-long", "-j", "2",
                 "-o", str(out), str(tmp_path / "in.jsonl"))
    assert result.exit_code == 0, result.output
    assert f"dropped {len(convs) - len(want)} of {len(convs)}" in result.output
    assert [tuple(json.loads(line).values()) for line in out.read_text().splitlines()] == want
    result = run("chat", "-e", "o200k_harmony", "--max-tokens", "30", "-o", str(tmp_path / "out.npz"),
                 str(tmp_path / "in.jsonl"))
    truncated = render_many(enc, convs, max_tokens=30, num_workers=1)
    with np.load(tmp_path / "out.npz") as arrays:
        assert arrays["offsets"].tolist()[-1] == sum(len(ids) for ids, _ in truncated)
        k = 5
        start, end = arrays["offsets"][k], arrays["offsets"][k + 1]
        assert (arrays["ids"][start:end].tolist(), arrays["mask"][start:end].tolist()) == truncated[k]


def test_chat_writes_arrow_and_npz_alike(run, tmp_path):
    """The .arrow file (Arrow IPC, large lists) holds what the .jsonl does, conversation by
    conversation, and the .npz the same flat arrays; an empty result writes empty files."""
    import numpy as np
    import pyarrow as pa

    from bytepair.chat import render_many

    enc = bytepair.get_encoding("o200k_harmony")
    convs = [[{"role": "user", "content": "wörd " * (i % 7)},
              {"role": "assistant", "channel": "final", "content": "ok " * (i % 3)}] for i in range(40)]
    (tmp_path / "in.jsonl").write_text(_lines(convs))
    want = [list(pair) for pair in render_many(enc, convs, num_workers=1)]
    assert run("chat", "-e", "o200k_harmony", "-o", str(tmp_path / "out.arrow"), str(tmp_path / "in.jsonl")).exit_code == 0
    assert run("chat", "-e", "o200k_harmony", "-o", str(tmp_path / "out.npz"), str(tmp_path / "in.jsonl")).exit_code == 0
    with pa.ipc.open_file(tmp_path / "out.arrow") as reader:
        table = reader.read_all()
    assert table.schema == pa.schema({"ids": pa.large_list(pa.uint32()), "mask": pa.large_list(pa.uint8())})
    assert [[row["ids"], row["mask"]] for row in table.to_pylist()] == want
    with np.load(tmp_path / "out.npz") as arrays:
        assert arrays["offsets"].tolist() == table.column("ids").combine_chunks().offsets.to_pylist()
        assert arrays["ids"].tolist() == [i for ids, _ in want for i in ids]

    result = run("chat", "-e", "o200k_harmony", "--max-tokens", "0", "--drop-long",
                 "-o", str(tmp_path / "none.arrow"), str(tmp_path / "in.jsonl"))
    assert result.exit_code == 0, result.output
    with pa.ipc.open_file(tmp_path / "none.arrow") as reader:
        assert reader.read_all().num_rows == 0


@pytest.mark.parametrize("args, message", [
    (["-t", "no-such-template"], "neither a built-in template"),
    (["--drop-long"], "--drop-long needs --max-tokens"),
    (["-o", "x.csv"], "must end in .jsonl, .npz or .arrow"),
])
def test_chat_option_errors(run, args, message):
    result = run("chat", "-e", "o200k_harmony", *args, input=_lines(HARMONY))
    assert result.exit_code != 0
    assert message in result.output


def test_chat_error_in_a_worker_names_the_line(run, tmp_path):
    convs = HARMONY * 300 + [[{"role": "robot", "content": "x"}]]
    (tmp_path / "in.jsonl").write_text(_lines(convs))
    result = run("chat", "-e", "o200k_harmony", "-j", "2", str(tmp_path / "in.jsonl"))
    assert result.exit_code == 1
    assert f"in.jsonl:{len(convs)}: message 0: unknown role 'robot'" in result.output
    assert result.output.count("\n") == 1
