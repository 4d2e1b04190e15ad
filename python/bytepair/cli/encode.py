"""`bytepair encode`, `decode` and `list`: ids in, ids out."""

from __future__ import annotations

import json
import sys

import click

from bytepair.cli.app import UserError, main, read_inputs, resolve_tokenizer, tokenizer_options
from bytepair.cli.count import encode_text, special_option


@main.command()
@click.argument("files", nargs=-1, metavar="[FILE|-]...")
@click.option("--text", "-t", default=None, help="Encode this text instead of files or stdin.")
@tokenizer_options
@special_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of space-separated ids.")
def encode(files, text, encoding_name, model, vocab, special, as_json):
    """Print the token ids of FILES (or stdin, or --text), one line per input.

    \b
    Examples:
      echo "hello world" | bytepair encode -e cl100k_base
      bytepair encode --text "hello world" --json -m gpt-4o
      bytepair encode --vocab tok.bpe2 notes.txt
    """
    enc = resolve_tokenizer(encoding_name, model, vocab)
    if text is not None:
        if files:
            raise click.UsageError("give FILEs or --text, not both")
        inputs = [("<text>", text)]
    else:
        inputs = read_inputs(files)
    for _, t in inputs:
        ids = encode_text(enc, t, special)
        click.echo(json.dumps(ids) if as_json else " ".join(map(str, ids)))


def parse_ids(words: list[str]) -> list[int]:
    """Token ids from words (a JSON list's brackets and commas already blanked)."""
    tokens = []
    for i, w in enumerate(words, 1):
        try:
            value = int(w)
        except ValueError:
            shown = w if len(w) <= 20 else w[:17] + "..."
            raise click.BadParameter(f"{shown!r} (id number {i}) is not a token id; ids are "
                                     "whole numbers, separated by spaces or as a JSON list",
                                     param_hint="IDS") from None
        if value < 0:
            raise click.BadParameter(f"{value} (id number {i}) is negative; token ids start at 0",
                                     param_hint="IDS")
        tokens.append(value)
    return tokens


@main.command()
@click.argument("ids", nargs=-1)
@tokenizer_options
def decode(ids, encoding_name, model, vocab):
    """Print the text of token IDS (arguments, or whitespace/JSON separated on stdin).

    \b
    Examples:
      bytepair decode -e cl100k_base 15339 1917
      bytepair encode -m gpt-4o --json notes.txt | bytepair decode -m gpt-4o
    """
    enc = resolve_tokenizer(encoding_name, model, vocab)
    words = list(ids) or sys.stdin.read().replace("[", " ").replace("]", " ").replace(",", " ").split()
    tokens = parse_ids(words)
    try:
        text = enc.decode(tokens)
    except KeyError as e:  # UnknownTokenError: an id the vocabulary does not have
        raise UserError(str(e)) from None
    sys.stdout.write(text)
    sys.stdout.write("\n" if sys.stdout.isatty() else "")


@main.command(name="list")
def list_():
    """List the encodings bytepair can load here, without a network.

    \b
    Example:
      bytepair list
    """
    import bytepair

    for name in bytepair.list_encoding_names():
        click.echo(name)
