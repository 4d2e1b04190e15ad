"""`bytepair convert`, `inspect` and `verify`: the vocabulary-file commands."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import click

from bytepair.cli.app import check_writable, main, write_error
from bytepair.formats.detect import FORMATS

_path = click.Path(exists=True, dir_okay=True)


def _load(path: str, **options):
    import bytepair

    try:
        return bytepair.load(path, **options)
    except (ValueError, OSError) as e:
        raise click.ClickException(str(e)) from None


def refusal(e, dst) -> str:
    """A LossyFormatError as one line for the command line (flags, not Python arguments)."""
    from bytepair.formats import _SUFFIXES

    keep = ""
    if e.keeps:
        suffix = next((s for s, f in _SUFFIXES.items() if f == e.keeps), None)
        keep = f"write {Path(dst).with_suffix(suffix)}, which keeps everything, or " if suffix else ""
    return (f"{dst}: {e.format} cannot carry the {'; the '.join(e.dropped)}; nothing was written "
            f"({keep}pass --lossy to write it without them)")


def _specials(values: tuple[str, ...]) -> dict[str, int] | None:
    """``--special TOKEN=ID`` options as a dict (None when none are given)."""
    if not values:
        return None
    out = {}
    for v in values:
        token, sep, token_id = v.rpartition("=")
        if not sep or not token or not token_id.isdigit():
            raise click.BadParameter(f"expected TOKEN=ID, got {v!r}", param_hint="--special")
        out[token] = int(token_id)
    return out


@main.command()
@click.argument("src", type=_path)
@click.argument("dst", type=click.Path(dir_okay=False))
@click.option("--to", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from DST's suffix).")
@click.option("--lossy", is_flag=True,
              help="Write even if the format cannot carry everything (the split pattern, special "
                   "tokens, ...); what was dropped is printed.")
@click.option("--pattern", "-p", default=None,
              help="Split pattern of a rank vocabulary whose file records none (an unknown "
                   ".tiktoken file): gpt2, cl100k, o200k, llama3, nanochat, or a regex.")
@click.option("--special", "specials", multiple=True, metavar="TOKEN=ID",
              help="A special token of such a vocabulary (repeatable).")
def convert(src, dst, fmt, lossy, pattern, specials):
    """Convert the vocabulary SRC (any supported format, detected from its content) to DST.

    A format that cannot carry everything SRC's tokenizer needs to encode as it does (a
    .tiktoken file has no split pattern or special tokens; QTKR and LEAP no pattern) is refused
    unless --lossy is given.

    \b
    Examples:
      bytepair convert python/bytepair/data/cl100k_base.bpe2 cl100k.json
      bytepair convert tokenizer.model tok.bpe2
      bytepair convert my.tiktoken my.bpe2 --pattern cl100k --special '<|endoftext|>=100257'
    """
    from bytepair.errors import LossyFormatError
    from bytepair.formats import format_for_path, save
    from bytepair.train import resolve_pattern

    options = {}
    if pattern:
        options["pat_str"] = resolve_pattern(pattern)
    if specials:
        options["special_tokens"] = _specials(specials)
    check_writable(dst)
    tok = _load(src, **options)
    try:
        fmt = fmt or format_for_path(dst)
        dropped = save(tok, dst, fmt, lossy=lossy)
    except LossyFormatError as e:
        raise click.ClickException(refusal(e, dst)) from None
    except OSError as e:
        raise write_error(dst, e) from None
    except (ValueError, TypeError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{src} -> {dst} ({fmt})")
    if dropped:
        click.echo(f"{dst}: dropped the {'; the '.join(dropped)}", err=True)


def describe(path: str) -> dict:
    """What `inspect` prints, as a dict."""
    import bytepair
    from bytepair.errors import FormatError
    from bytepair.formats import detect

    from bytepair.formats.limits import read_vocab_file

    p = Path(path)
    try:
        # Read and detected inside the try: an unrecognised file (say, a deeply nested JSON
        # array) is one line on stderr, not a traceback. The read is bounded as load's is.
        data = b"" if p.is_dir() else read_vocab_file(p)
        fmt = "gpt2 (directory)" if p.is_dir() else detect(data, path)
        tok = bytepair.load(path)
        pattern = getattr(tok, "_pat_str", None)
    except FormatError as e:
        if e.location != "split pattern":
            raise click.ClickException(str(e)) from None
        # A rank table that records no split pattern (an unknown .tiktoken file) is still
        # described: any pattern reads the same table, and the pattern is reported as none.
        tok = _load(path, pat_str=".")
        pattern = None
    except (ValueError, OSError) as e:
        raise click.ClickException(str(e)) from None
    info = {
        "file": path,
        "format": fmt,
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest() if data else None,
        "name": getattr(tok, "name", None),
        "tokenizer": type(tok).__name__,
        "n_vocab": tok.n_vocab,
        "special_tokens": dict(sorted(tok.special_tokens.items(), key=lambda kv: kv[1])),
        "max_token_len": max((len(tok.decode_single_token_bytes(i)) for i in range(tok.n_vocab)
                              if _has(tok, i)), default=0),
    }
    if fmt in ("bpe2", "bpz2"):
        from bytepair.formats import bpe2

        head = bpe2.info(data, path)
        info["source_sha256"] = head["source_hash"].hex()
        info["pattern"] = head.get("pattern") or None
        info["compressed_size"] = head["compressed_size"]
    elif hasattr(tok, "_pat_str"):
        info["pattern"] = pattern
    for attr in ("bos_id", "eos_id", "unk_id", "pad_id"):
        if getattr(tok, attr, None) is not None:
            info[attr] = getattr(tok, attr)
    # Added tokens that are not special (tokenizer.json): vocabulary always split out of the text.
    model = tok.model
    added = {s: i for s, i, special in sorted(model.added_tokens(), key=lambda t: t[1])
             if not special} if model.kind == "merge" else {}
    if added:
        info["added_tokens"] = added
    return info


def _has(tok, i: int) -> bool:
    try:
        tok.decode_single_token_bytes(i)
        return True
    except KeyError:
        return False


@main.command()
@click.argument("file", type=_path)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def inspect(file, as_json):
    """Show a vocabulary file's format, size, special tokens, longest token and hashes.

    \b
    Examples:
      bytepair inspect python/bytepair/data/o200k_base.bpe2
      bytepair inspect tokenizer.json --json
    """
    info = describe(file)
    if as_json:
        click.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    for key, value in info.items():
        if key in ("special_tokens", "added_tokens"):
            shown = ", ".join(f"{s}={i}" for s, i in list(value.items())[:8])
            more = f" (+{len(value) - 8} more)" if len(value) > 8 else ""
            click.echo(f"{key:>16}: {len(value)}  {shown}{more}")
        else:
            click.echo(f"{key:>16}: {value}")


@main.command()
@click.argument("table", type=click.Path(exists=True, dir_okay=False))
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
def verify(table, source):
    """Check that the BPE2/BPZ2 TABLE was made from the .tiktoken SOURCE: its embedded SHA-256
    and every token. Exits 1 on any difference.

    \b
    Example:
      bytepair verify python/bytepair/data/cl100k_base.bpe2 cl100k_base.tiktoken
    """
    from bytepair.formats import bpe2

    from bytepair.formats.limits import read_vocab_file

    try:
        report = bpe2.verify(read_vocab_file(table), read_vocab_file(source), table, source)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    for problem in report.problems:
        click.echo(problem, err=True)
    if not report.ok:
        raise SystemExit(1)
    click.echo(f"OK: source hash matches; {report.tokens_compared} tokens identical")
