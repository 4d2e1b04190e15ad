"""`bytepair chat`: conversations (JSONL) to ids and training masks, on all cores."""

from __future__ import annotations

import json
import os

import click

from bytepair.cli.app import encoding_options, main, read_inputs, resolve_encoding

_BUILTIN = ["nanochat", "llama3", "harmony", "chatml", "mistral_v1", "mistral_v2", "mistral_v3"]


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@encoding_options
@click.option("--vocab", type=click.Path(exists=True, dir_okay=False),
              help="A vocabulary file (any format `bytepair load` reads) instead of -e/-m. The chat "
                   "template of a tokenizer.json is read from the tokenizer_config.json or "
                   "chat_template.jinja beside it, if there is one.")
@click.option("-t", "--template", default=None, metavar="NAME|FILE",
              help=f"A built-in template ({', '.join(_BUILTIN)}), or a Jinja chat template: a .jinja "
                   "file, a tokenizer_config.json, or a tokenizer's directory. Default: the "
                   "vocabulary's own, else the built-in whose special tokens the encoding has.")
@click.option("--max-tokens", type=click.IntRange(min=0), default=None,
              help="Truncate each conversation's ids and mask to this many tokens.")
@click.option("--drop-long", is_flag=True,
              help="With --max-tokens: leave out longer conversations instead of truncating them "
                   "(the count is reported on stderr).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of stdout: .jsonl (one {\"ids\", \"mask\"} per line), "
                   ".npz (numpy: ids, mask, offsets) or .arrow (Arrow IPC, needs pyarrow).")
@click.option("-j", "--workers", type=click.IntRange(min=1), default=None,
              help="Threads (default: every core): the encoding runs on them beside the rendering.")
@click.option("--show", is_flag=True,
              help="Print each conversation's tokens, trained ones in green, instead of JSON.")
def chat(files, encoding_name, model, vocab, template, max_tokens, drop_long, output, workers, show):
    """Render the conversations in FILES (JSONL, one per line: a list of messages or
    {"messages": [...], "tools": [...]}) to {"ids": [...], "mask": [...]}, one JSON line each;
    mask 1 marks the tokens a model is trained to predict.

    \b
    Examples:
      bytepair chat conversations.jsonl -e o200k_harmony
      bytepair chat sft.jsonl --vocab tokenizer.json -o sft.npz --max-tokens 4096 --drop-long
      bytepair chat sft.jsonl -e cl100k_base -t chatml --show
    """
    from bytepair.chat import ChatError, render_many

    if drop_long and max_tokens is None:
        raise click.UsageError("--drop-long needs --max-tokens")
    if output and show:
        raise click.UsageError("give --output or --show, not both")
    where, conversations = _read(files)
    enc, chat_template = _encoding_and_template(encoding_name, model, vocab, template)
    try:
        results = _render(render_many, enc, chat_template, conversations, max_tokens, drop_long, workers)
    except ChatError as e:
        raise click.ClickException(_locate(str(e), where)) from None
    kept = [r for r in results if r is not None]
    if drop_long and len(kept) < len(results):
        click.echo(f"dropped {len(results) - len(kept)} of {len(results)} conversations over "
                   f"{max_tokens} tokens", err=True)
    if show:
        for ids, mask in kept:
            pieces = enc.decode_tokens_bytes(ids)
            click.echo("".join(click.style(p.decode("utf-8", "replace"), fg="green" if m else None)
                               for p, m in zip(pieces, mask)))
    elif output:
        _write(output, kept)
    else:
        import sys

        for ids, mask in kept:
            sys.stdout.write(json.dumps({"ids": ids, "mask": mask}) + "\n")


def _read(files) -> tuple[list[str], list]:
    where, conversations = [], []
    for name, text in read_inputs(files):
        for line_no, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            here = f"{name}:{line_no}"
            try:
                conversations.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise click.ClickException(f"{here}: not JSON ({e.msg} at column {e.colno})") from None
            except RecursionError:  # Python's json parser recurses once per nesting level
                raise click.ClickException(f"{here}: JSON nested too deeply") from None
            where.append(here)
    return where, conversations


def _render(render_many, enc, template, conversations, max_tokens, drop_long, workers):
    # A conversation given as {"messages": [...], "tools": [...]} passes its own tools.
    return render_many(enc, conversations, template=template, max_tokens=max_tokens,
                       drop_long=drop_long, num_workers=workers)


def _locate(message: str, where: list[str]) -> str:
    """'conversation 12: ...' -> 'file.jsonl:14: ...' (render_many counts conversations)."""
    import re

    m = re.match(r"conversation (\d+): ", message)
    return f"{where[int(m.group(1))]}: {message[m.end():]}" if m else message


def _encoding_and_template(encoding_name, model, vocab, template):
    import bytepair
    from bytepair.chat import ChatError, ChatTemplate, load_chat_template

    if vocab:
        if encoding_name or model:
            raise click.UsageError("give --vocab or --encoding/--model, not both")
        try:
            enc = bytepair.load(vocab)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
    else:
        enc = resolve_encoding(encoding_name, model)
    try:
        if template and template not in _BUILTIN:
            if not os.path.exists(template):
                raise click.BadParameter(f"{template!r} is neither a built-in template "
                                         f"({', '.join(_BUILTIN)}) nor a file", param_hint="--template")
            return enc, load_chat_template(template)
        if template is None and vocab and os.path.basename(vocab) == "tokenizer.json":
            folder = os.path.dirname(os.path.abspath(vocab))
            if os.path.exists(os.path.join(folder, "chat_template.jinja")) or _config_has_template(folder):
                return enc, load_chat_template(vocab)
        if template == "chatml" and enc.name == "cl100k_base":
            from bytepair.chat.chatml import with_chatml_tokens

            enc = with_chatml_tokens(enc)  # tiktoken's README ids for <|im_start|>/<|im_end|>
    except ChatError as e:
        raise click.ClickException(str(e)) from None
    return enc, template if template is None or isinstance(template, (str, ChatTemplate)) else None


def _config_has_template(folder: str) -> bool:
    try:
        with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
            return "chat_template" in json.load(f)
    except (OSError, ValueError):
        return False


def _flat(results):
    """``(ids uint32, mask uint8, offsets int64)``: every conversation's ids and mask end to end,
    conversation k at ``offsets[k]:offsets[k + 1]`` (the .npz arrays, and Arrow's large-list
    layout)."""
    from itertools import chain

    import numpy as np

    lengths = [len(ids) for ids, _ in results]
    total = sum(lengths)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(np.array(lengths, np.int64), out=offsets[1:])
    # chain.from_iterable walks the lists in C: a generator over every id took longer than
    # rendering the conversations.
    return (np.fromiter(chain.from_iterable(ids for ids, _ in results), np.uint32, count=total),
            np.fromiter(chain.from_iterable(mask for _, mask in results), np.uint8, count=total),
            offsets)


def _write(path: str, results) -> None:
    from bytepair.atomic import write_atomic

    if path.endswith(".jsonl"):
        data = "".join(json.dumps({"ids": ids, "mask": mask}) + "\n" for ids, mask in results).encode()
    elif path.endswith(".npz"):
        import io

        import numpy as np

        ids, mask, offsets = _flat(results)
        buf = io.BytesIO()
        np.savez(buf, ids=ids, mask=mask, offsets=offsets)
        data = buf.getvalue()
    elif path.endswith(".arrow"):
        try:
            import pyarrow as pa
        except ImportError:
            raise click.ClickException("writing .arrow needs pyarrow (pip install pyarrow)") from None
        ids, mask, offsets = _flat(results)
        # The flat arrays are Arrow's large-list layout as they are (int64 offsets): no list of
        # Python lists is walked a second time.
        table = pa.table({"ids": pa.LargeListArray.from_arrays(offsets, ids),
                          "mask": pa.LargeListArray.from_arrays(offsets, mask)})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        data = sink.getvalue().to_pybytes()
    else:
        raise click.BadParameter("the output's name must end in .jsonl, .npz or .arrow", param_hint="--output")
    try:
        write_atomic(path, data)
    except OSError as e:
        raise click.ClickException(f"{path}: {e.strerror}") from None
