"""`bytepair chat`: conversations (JSONL) to ids and training masks."""

from __future__ import annotations

import json

import click

from bytepair.cli.app import encoding_options, main, read_inputs, resolve_encoding


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@encoding_options
@click.option("--vocab", type=click.Path(exists=True, dir_okay=False),
              help="A vocabulary file (any format `bytepair load` reads) instead of -e/-m.")
@click.option("-t", "--template", type=click.Choice(["nanochat", "llama3"]), default=None,
              help="Chat template (default: the one whose special tokens the encoding has).")
@click.option("--max-tokens", type=click.IntRange(min=0), default=None,
              help="Truncate each conversation's ids and mask to this many tokens.")
@click.option("--show", is_flag=True,
              help="Print each conversation's tokens, trained ones in green, instead of JSON.")
def chat(files, encoding_name, model, vocab, template, max_tokens, show):
    """Render the conversations in FILES (JSONL, one per line: a list of messages or
    {"messages": [...]}) to {"ids": [...], "mask": [...]}, one JSON line each; mask 1 marks
    the tokens a model is trained to predict."""
    from bytepair.chat import ChatError, render_conversation

    if vocab:
        if encoding_name or model:
            raise click.UsageError("give --vocab or --encoding/--model, not both")
        import bytepair

        try:
            enc = bytepair.load(vocab)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
    else:
        enc = resolve_encoding(encoding_name, model)
    for name, text in read_inputs(files):
        for line_no, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{name}:{line_no}"
            try:
                conversation = json.loads(line)
            except json.JSONDecodeError as e:
                raise click.ClickException(f"{where}: not JSON ({e.msg} at column {e.colno})") from None
            except RecursionError:  # Python's json parser recurses once per nesting level
                raise click.ClickException(f"{where}: JSON nested too deeply") from None
            try:
                ids, mask = render_conversation(enc, conversation, template=template,
                                                max_tokens=max_tokens)
            except ChatError as e:
                raise click.ClickException(f"{where}: {e}") from None
            if show:
                pieces = enc.decode_tokens_bytes(ids)
                click.echo("".join(
                    click.style(p.decode("utf-8", "replace"), fg="green" if m else None)
                    for p, m in zip(pieces, mask)))
            else:
                click.echo(json.dumps({"ids": ids, "mask": mask}))
