"""`bytepair train`: learn a vocabulary from files and write it (BPE2 unless the output's suffix
names another format; BPE2 keeps the ranks, the split pattern and the special tokens)."""

from __future__ import annotations

import logging
import os

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
              help="Where to write the vocabulary (only when training succeeds): in the format its "
                   "suffix names (.bpe2, .bpz2, .json, .tiktoken, ...), BPE2 for any other name.")
@click.option("--lossy", is_flag=True,
              help="Write even if OUTPUT's format cannot carry the split pattern and special "
                   "tokens (a .tiktoken file holds the ranks only); what was dropped is printed.")
@click.option("-v", "--verbose", is_flag=True, help="Log what training does.")
def train(files, vocab_size, pattern, specials, text_field, min_frequency, threads, errors, progress,
          output, lossy, verbose):
    """Train a byte-level BPE vocabulary on FILES (plain text: one document per line; .jsonl:
    one JSON object per line) and write it to OUTPUT.

    OUTPUT keeps everything needed to encode as the trained tokenizer does (BPE2, BPZ2,
    tokenizer.json); a .tiktoken file, which holds the ranks only, is refused unless --lossy.

    \b
    Example:
      bytepair train corpus.txt --vocab-size 32768 --pattern nanochat \\
          --special '<|bos|>' -o tok.bpe2
    """
    import bytepair
    from bytepair.cli.app import check_writable, write_error
    from bytepair.cli.formats import refusal
    from bytepair.errors import LossyFormatError
    from bytepair.formats import format_for_path, would_drop

    check_writable(output)  # before training, which can take hours
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    try:
        fmt = format_for_path(output)
    except ValueError:
        fmt = "bpe2"
    try:
        if not lossy:
            # Refuse before training, not after: what a format drops of a trained vocabulary
            # depends only on its pattern and special tokens (trained ranks are no known
            # vocabulary's), so the 256 byte tokens with the same pattern and specials tell.
            probe = bytepair.train(["probe"], 256 + len(specials), pattern=pattern,
                                   special_tokens=list(specials), show_progress=False)
            dropped = would_drop(probe, fmt)
            if dropped:
                raise LossyFormatError(fmt, dropped, output, "bpe2")
        enc = bytepair.train_files(
            list(files), vocab_size, text_field=text_field, errors=errors, pattern=pattern,
            special_tokens=list(specials), min_frequency=min_frequency, num_threads=threads,
            show_progress=progress,
        )
        dropped = enc.save(output, fmt, lossy=lossy)
    except LossyFormatError as e:
        raise click.ClickException(refusal(e, output)) from None
    except OSError as e:
        if e.filename and os.path.basename(str(e.filename)).startswith(f".{os.path.basename(output)}."):
            raise write_error(output, e) from None  # the writer's temporary file beside OUTPUT
        raise click.ClickException(str(e)) from None
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    n_ranks = len(enc.model.mergeable_ranks)
    click.echo(f"wrote {n_ranks} tokens to {output}")
    if enc.special_tokens:
        shown = ", ".join(f"{s}={i}" for s, i in enc.special_tokens.items())
        click.echo(f"special tokens: {shown}")
    if dropped:
        click.echo(f"{output}: dropped the {'; the '.join(dropped)}", err=True)
