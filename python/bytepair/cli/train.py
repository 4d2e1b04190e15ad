"""`bytepair train`: learn a vocabulary from files and write it as a .tiktoken file."""

from __future__ import annotations

import logging

import click

from bytepair.cli.app import main


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--vocab-size", "-n", type=click.IntRange(min=1), required=True,
              help="Tokens in the vocabulary, special tokens included.")
@click.option("--pattern", "-p", default="gpt4", show_default=True,
              help="Split pattern: gpt2, gpt4 (= cl100k), o200k, llama3, nanochat, or a regex.")
@click.option("--special", "specials", multiple=True, metavar="TOKEN",
              help="A special token (repeatable); they get the ids after the merges, in order.")
@click.option("--text-field", default="text", show_default=True,
              help="The field holding the text in .jsonl files.")
@click.option("--min-frequency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Stop when no pair occurs this often.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Threads (default: all cores).")
@click.option("--errors", type=click.Choice(["strict", "replace"]), default="strict", show_default=True,
              help="Bytes that are not UTF-8: fail (naming file and offset) or read them as U+FFFD.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, writable=True),
              help="Where to write the .tiktoken file (written only when training succeeds).")
@click.option("-v", "--verbose", is_flag=True, help="Log what training does.")
def train(files, vocab_size, pattern, specials, text_field, min_frequency, threads, errors, progress,
          output, verbose):
    """Train a byte-level BPE vocabulary on FILES (plain text: one document per line; .jsonl:
    one JSON object per line) and write it to OUTPUT as a .tiktoken file.

    \b
    Example:
      bytepair train corpus.txt --vocab-size 32768 --pattern nanochat \\
          --special '<|bos|>' -o tok.tiktoken
    """
    import bytepair

    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    try:
        enc = bytepair.train_files(
            list(files), vocab_size, text_field=text_field, errors=errors, pattern=pattern,
            special_tokens=list(specials), min_frequency=min_frequency, num_threads=threads,
            show_progress=progress,
        )
        enc.save(output)
    except (ValueError, OSError) as e:
        raise click.ClickException(str(e)) from None
    n_ranks = len(enc._mergeable_ranks)
    click.echo(f"wrote {n_ranks} tokens to {output}")
    if enc.special_tokens:
        shown = ", ".join(f"{s}={i}" for s, i in enc.special_tokens.items())
        click.echo(f"special tokens (not stored in .tiktoken files): {shown}")
