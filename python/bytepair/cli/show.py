"""`bytepair show` and `bytepair compare`: seeing where the token boundaries fall.

Boundaries are shown by alternating background colours on a terminal, and never only by
colour: `--no-color` (the default when stdout is not a terminal or NO_COLOR is set) separates
tokens with a visible `|`, and `--ids` prints one token per line with its id. Whitespace is made
visible (`·` space, `→` tab, `↵` newline). A token's bytes that are not whole UTF-8 characters
(a token ending or starting inside a character) are shown as `\\xNN` escapes, never as U+FFFD."""

from __future__ import annotations

import json
import os
import sys

import click

from bytepair.cli.app import UserError, main, resolve_tokenizer, tokenizer_options
from bytepair.cli.count import encode_text, special_option
from bytepair.cli.inputs import Skipped, gather, read_text

# 256-colour backgrounds light enough for black text, cycled token by token.
BACKGROUNDS = (153, 223, 194, 225)
VISIBLE = {" ": "·", "\t": "→", "\r": "␍"}
SEPARATOR = "|"


def runs(piece: bytes) -> list[tuple[bool, str]]:
    """A token's bytes as (is_text, str) runs: whole UTF-8 characters as text, any other byte
    as its ``\\xNN`` escape (``b" \\xe6\\x97"`` -> ``[(True, " "), (False, "\\xe6\\x97")]``)."""
    out = []
    while piece:
        try:
            out.append((True, piece.decode("utf-8")))
            break
        except UnicodeDecodeError as e:
            if e.start:
                out.append((True, piece[:e.start].decode("utf-8")))
            out.append((False, "".join(f"\\x{b:02x}" for b in piece[e.start:e.end])))
            piece = piece[e.end:]
    return out


def _valid(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def visible(text: str, escape_separator: bool) -> str:
    """Whitespace and control characters made visible; newlines stay (after a ↵) so that lines
    still break. With ``escape_separator`` a literal `|` and `\\` are escaped, so that the
    plain output can be split back into tokens without ambiguity."""
    out = []
    for ch in text:
        if ch == "\n":
            out.append("↵\n")
        elif ch in VISIBLE:
            out.append(VISIBLE[ch])
        elif escape_separator and ch in (SEPARATOR, "\\"):
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def render_plain(pieces: list[bytes]) -> str:
    # The \xNN escapes of partial characters are the only unescaped backslashes in the output.
    return SEPARATOR.join("".join(visible(text, True) if is_text else text for is_text, text in runs(p))
                          for p in pieces)


def render_color(pieces: list[bytes]) -> str:
    out = []
    for i, piece in enumerate(pieces):
        bg = BACKGROUNDS[i % len(BACKGROUNDS)]
        for is_text, text in runs(piece):
            shown = visible(text, False) if is_text else text
            # Styled line by line: a background carried over a newline would paint the margin.
            out.append("\n".join(click.style(line, fg=16, bg=bg, underline=None if is_text else True) if line else line
                                 for line in shown.split("\n")))
    return "".join(out)


def render_ids(ids: list[int], pieces: list[bytes]) -> str:
    lines = []
    for token, piece in zip(ids, pieces):
        shown = json.dumps(piece.decode("utf-8"), ensure_ascii=False) if _valid(piece) else repr(piece)
        lines.append(f"{token}\t{shown}")
    return "\n".join(lines)


def _use_color(color: bool | None) -> bool:
    if color is not None:
        return color
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@main.command()
@click.argument("paths", nargs=-1, metavar="[PATH|-]")
@click.option("--text", "-t", default=None, help="Show this text instead of a file or stdin.")
@tokenizer_options
@special_option
@click.option("--ids", "show_ids", is_flag=True, help="One token per line: its id and its text.")
@click.option("--color/--no-color", default=None,
              help="Colour the tokens (default: on a terminal, unless NO_COLOR is set); "
                   "without colour, tokens are separated by |.")
def show(paths, text, encoding_name, model, vocab, special, show_ids, color):
    """Show the text with its token boundaries visible.

    Spaces show as ·, tabs as →, newlines as ↵; bytes of a token that are not whole UTF-8
    characters as \\xNN. Without colour a literal | or \\ in the text is written \\| or \\\\.

    \b
    Examples:
      bytepair show --text "Hello, world!"
      bytepair show -m gpt-4 notes.txt
      bytepair show --ids --text "お誕生日おめでとう" -e cl100k_base
      bytepair show --no-color README.md | less
    """
    enc = resolve_tokenizer(encoding_name, model, vocab)
    items, single = gather(paths, text)
    if not (single and len(items) == 1):
        raise click.UsageError("show takes one input: a file, - (stdin) or --text")
    content = read_text(items[0])
    if isinstance(content, Skipped):
        raise UserError(f"{content.name}: {content.reason}")
    ids = encode_text(enc, content, special)
    pieces = enc.decode_tokens_bytes(ids)
    if show_ids:
        click.echo(render_ids(ids, pieces))
    elif _use_color(color):
        click.echo(render_color(pieces), color=True)
        click.echo(click.style(f"{len(ids)} tokens, {len(content)} characters ({enc.name})", dim=True),
                   err=True, color=True)
    else:
        click.echo(render_plain(pieces))


def boundaries(pieces: list[bytes]) -> list[int]:
    """The byte offsets where each token ends."""
    ends, at = [], 0
    for piece in pieces:
        at += len(piece)
        ends.append(at)
    return ends


@main.command()
@click.argument("text", required=False)
@click.option("--file", "-f", "path", default=None, help="Compare on this file's text (- for stdin).")
@click.option("-e", "--encoding", "encodings", multiple=True, help="An encoding (repeatable).")
@click.option("-m", "--model", "models", multiple=True, help="A model's encoding (repeatable).")
@click.option("--vocab", "vocabs", multiple=True, metavar="FILE", help="A vocabulary file (repeatable).")
@click.option("--max-diffs", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many places where the boundaries differ to print.")
def compare(text, path, encodings, models, vocabs, max_diffs):
    """Compare how several encodings split TEXT: tokens and characters per token side by side,
    then the places where their boundaries differ (default: o200k_base and cl100k_base).

    \b
    Examples:
      bytepair compare "antidisestablishmentarianism" -e cl100k_base -e o200k_base
      bytepair compare -f notes.txt -m gpt-4 -m gpt-4o
    """
    if (text is None) == (path is None):
        raise click.UsageError("give TEXT or --file PATH (one of them)")
    if path is not None:
        items, _ = gather((path,), None)
        content = read_text(items[0])
        if isinstance(content, Skipped):
            raise UserError(f"{content.name}: {content.reason}")
    else:
        content = text
    tokenizers = ([resolve_tokenizer(e, None, None) for e in encodings]
                  + [resolve_tokenizer(None, m, None) for m in models]
                  + [resolve_tokenizer(None, None, v) for v in vocabs])
    labels = list(encodings) + [f"{m} ({t.name})" for m, t in zip(models, tokenizers[len(encodings):])] + list(vocabs)
    if not tokenizers:
        tokenizers = [resolve_tokenizer(n, None, None) for n in ("o200k_base", "cl100k_base")]
        labels = ["o200k_base", "cl100k_base"]
    if len(tokenizers) < 2:
        raise click.UsageError("compare needs two or more encodings (-e, -m, --vocab)")
    pieces = [enc.decode_tokens_bytes(enc.encode(content, disallowed_special=())) for enc in tokenizers]
    width = max(len(label) for label in labels)
    click.echo(f"{'encoding':<{width}}  {'tokens':>8}  {'chars/token':>11}")
    for label, p in zip(labels, pieces):
        ratio = f"{len(content) / len(p):.2f}" if p else "-"
        click.echo(f"{label:<{width}}  {len(p):>8,}  {ratio:>11}")
    _print_differences(content, labels, pieces, width, max_diffs)


def _print_differences(content: str, labels, pieces, width: int, max_diffs: int) -> None:
    """Cuts the text at the boundaries every encoding shares; prints the stretches between
    two such cuts where the encodings' tokens differ, each encoding's split on its own line."""
    ends = [boundaries(p) for p in pieces]
    shared = sorted(set.intersection(*(set(e) for e in ends)))
    data = content.encode("utf-8")
    diffs = []
    start = 0
    for cut in shared:
        splits = []
        for e in ends:
            inside = [b for b in e if start < b <= cut]
            splits.append(inside)
        if any(s != splits[0] for s in splits):
            diffs.append((start, cut, splits))
        start = cut
    if not diffs:
        click.echo("\nthe boundaries are the same everywhere")
        return
    click.echo(f"\nboundaries differ in {len(diffs)} place{'s' * (len(diffs) != 1)}:")
    for start, cut, splits in diffs[:max_diffs]:
        click.echo(f"at byte {start}:")
        for label, inside in zip(labels, splits):
            parts, at = [], start
            for b in inside:
                parts.append(data[at:b])
                at = b
            click.echo(f"  {label:<{width}}  {render_plain(parts)}")
    if len(diffs) > max_diffs:
        click.echo(f"... and {len(diffs) - max_diffs} more (--max-diffs)")
