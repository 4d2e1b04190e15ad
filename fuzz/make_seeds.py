"""Writes the seed corpora under fuzz/corpus/<target>/ from the test suite's golden files
(tests/data/golden, ours) and a few hand-written texts. Run from anywhere:
`python3 fuzz/make_seeds.py`. The seeds are committed; a fuzzer's own finds are not (only the
inputs that failed, kept under fuzz/regressions/<target>/)."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "tests" / "data" / "golden"

TEXTS = [
    "hello world",
    "I'm don't we'll they've HE'S  \n\n  x",
    "Numbers 1234567 and 3.14159, dates 2024-01-01!",
    "naïve café 😀 中文字符 русский текст العربية",
    "   leading and trailing   \t\r\n\r\n  ",
    "<|endoftext|> <|s|> <s></s> [INST] x",
    "def f(x):\n    return x**2  # comment\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\u2581\u2581x\u2581 y",
]


def write(target: str, name: str, data: bytes) -> None:
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def main() -> None:
    g = lambda name: (GOLDEN / name).read_bytes()  # noqa: E731
    write("read_tiktoken", "tiny.tiktoken", g("tiny.tiktoken"))
    write("read_bpe2", "tiny.bpe2", g("tiny.bpe2"))
    write("read_bpe2", "tiny.bpz2", g("tiny.bpz2"))
    write("read_qtkr", "tiny.qtkr", g("tiny.qtkr"))
    write("read_leap", "tiny.leap", g("tiny.leap"))
    write("read_leap", "tiny_sp.leap", g("tiny_sp.leap"))
    write("read_tokenizer_json", "tiny_hf.json", g("tiny_hf.json"))
    write("read_tokenizer_json", "small.json", b'{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, '
          b'"merges": ["a b"]}, "pre_tokenizer": null, "added_tokens": [{"id": 3, "content": "<x>", "special": true}]}')
    write("read_sentencepiece", "tiny_sp.model", g("tiny_sp.model"))
    write("read_gpt2", "tiny", g("gpt2/vocab.bpe") + b"\xff" + g("gpt2/encoder.json"))
    for i, t in enumerate(TEXTS):
        b = t.encode()
        write("pretokenize_diff", f"text{i}", b)
        write("model_roundtrip", f"text{i}", b)
        write("train_small", f"text{i}", bytes([10 + 5 * i]) + (b + b"\n") * 3)
        write("rank_encode", f"text{i}", bytes(range(i, 32 + i)) + b"the quick brown fox th he in" + b"\xff" + b)
        write("capi", f"text{i}", bytes([0x11 * (i + 1) & 0xF7 | 1]) + b + b"\xff" + bytes(range(0, 64, 3)))
    write("capi", "load_bpe2", b"\x00" + g("tiny.bpe2"))
    write("capi", "load_sp", b"\x00" + g("tiny_sp.model"))
    # chat_template: each real template (modes 1-5) with messages made from the texts (a role
    # byte, then the content; 0xFE between messages), with and without the generation prompt
    # and tools; a JSON context as given (bit 0x40); and template sources of our own (mode 0).
    convo = b"\xfe".join(bytes([role]) + t.encode() for role, t in zip([0, 1, 2, 1, 2, 3, 1, 2, 4], TEXTS))
    # Mistral's and Gemma's templates raise on a system message or roles out of turn: a strict
    # user/assistant alternation reaches their rendering too.
    turns = b"\xfe".join(bytes([1 + i % 2]) + t.encode() for i, t in enumerate(TEXTS[:6]))
    for k in range(1, 6):
        write("chat_template", f"template{k}", bytes([k]) + convo)
        write("chat_template", f"template{k}_turns", bytes([k]) + turns)
        write("chat_template", f"template{k}_prompt_tools", bytes([k | 0x30]) + convo[:200])
        write("chat_template", f"template{k}_json", bytes([k | 0x40]) + b'{"messages": [{"role": "user", "content": '
              b'"hi"}, {"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", '
              b'"arguments": {"x": 1}}}]}], "add_generation_prompt": true, "bos_token": "<s>"}')
    for i, source in enumerate([
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}{% endfor %}",
        "{{ bos_token }}{% for m in messages %}{% if loop.index0 % 2 %}{% generation %}{{ m.content }}"
        "{% endgeneration %}{% else %}{{ raise_exception('bad') if m.role == 'tool' }}{{ m.content }}{% endif %}"
        "{% endfor %}{{ messages | tojson }}",
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + m.content | length %}"
        "{% endfor %}{{ ns.n }} {{ strftime_now('%Y') | length }}{{ (messages | last).content.split(' ') | join('|') }}",
    ]):
        write("chat_template", f"source{i}", b"\x00" + source.encode() + b"\xff" + bytes([1]) + TEXTS[i].encode())


if __name__ == "__main__":
    main()
