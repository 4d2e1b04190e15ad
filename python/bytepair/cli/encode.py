"""`bytepair count`, `encode`, `decode` and `list`: the everyday commands."""

from __future__ import annotations

import json
import sys

import click

from bytepair.cli.app import encoding_options, main, read_inputs, resolve_encoding

_special_option = click.option(
    "--special/--no-special", default=False,
    help="Turn special-token spellings such as <|endoftext|> into their ids "
         "(default: encode them as ordinary text).")


def _encode(enc, text: str, special: bool) -> list[int]:
    if special:
        return enc.encode(text, allowed_special="all")
    return enc.encode_ordinary(text)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@encoding_options
@_special_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of space-separated ids.")
def encode(files, encoding_name, model, special, as_json):
    """Print the token ids of FILES (or stdin)."""
    enc = resolve_encoding(encoding_name, model)
    for _, text in read_inputs(files):
        ids = _encode(enc, text, special)
        click.echo(json.dumps(ids) if as_json else " ".join(map(str, ids)))


@main.command()
@click.argument("ids", nargs=-1)
@encoding_options
def decode(ids, encoding_name, model):
    """Print the text of token IDS (arguments, or whitespace/JSON separated on stdin)."""
    enc = resolve_encoding(encoding_name, model)
    words = list(ids) or sys.stdin.read().replace("[", " ").replace("]", " ").replace(",", " ").split()
    try:
        tokens = [int(w) for w in words]
    except ValueError as e:
        raise click.BadParameter(f"not a token id: {e}") from None
    try:
        sys.stdout.write(enc.decode(tokens))
    except KeyError as e:
        raise click.ClickException(str(e)) from None
    sys.stdout.write("\n" if sys.stdout.isatty() else "")


@main.command(name="list")
def list_():
    """List the encodings bytepair knows."""
    import bytepair

    for name in bytepair.list_encoding_names():
        click.echo(name)
