"""`bytepair count`: tokens in files, directory trees, stdin or literal text."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal

import click

from bytepair.cli.app import (EXIT_FAILURE, EXIT_PARTIAL, UserError, is_stand_in, main,
                              resolve_tokenizer, tokenizer_options, warn)
from bytepair.cli.inputs import Input, Skipped, gather, read_text

special_option = click.option(
    "--special/--no-special", default=False,
    help="Turn special-token spellings such as <|endoftext|> into their ids "
         "(default: encode them as ordinary text).")

progress_option = click.option(
    "--progress/--no-progress", default=None,
    help="A progress bar on stderr (default: when stderr is a terminal and the run takes over a second).")


def _special_policy(special: bool) -> dict:
    """What --special means, for every command that has it: every special spelling becomes
    its id, or (the default) none does and they are all ordinary text, never an error."""
    return {"allowed_special": "all"} if special else {"disallowed_special": ()}


def count_text(enc, text: str, special: bool) -> int:
    return enc.count(text, **_special_policy(special))


def encode_text(enc, text: str, special: bool) -> list[int]:
    return enc.encode(text, **_special_policy(special))


def count_inputs(enc, items: list[Input], special: bool, progress: bool | None = None):
    """[(name, tokens) or Skipped] for each input, in order, counted on all cores.

    Encoding.count releases the GIL for the whole count, so a thread per core reads and counts
    files at once without Python multiprocessing (no pickling of texts or the vocabulary); each
    thread holds only its current file."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item: Input):
        text = read_text(item)
        if isinstance(text, Skipped):
            return text
        return item.name, count_text(enc, text, special)

    if len(items) <= 1:
        return [one(item) for item in items]
    workers = min(len(items), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(one, items)
        show = sys.stderr.isatty() if progress is None else progress
        if show:
            from tqdm import tqdm

            # delay: a bar appears only when the run is long enough to want one.
            results = tqdm(results, total=len(items), unit="file", file=sys.stderr,
                           delay=0 if progress else 1.0, leave=False)
        return list(results)


def report_skipped(results) -> list[Skipped]:
    """Warns of each input skipped (binary files met in a directory: one line for all)."""
    skipped = [r for r in results if isinstance(r, Skipped)]
    binary = sum(s.expected for s in skipped)
    for s in skipped:
        if not s.expected:
            warn(f"skipped {s.name}: {s.reason}")
    if binary:
        click.echo(f"note: skipped {binary} binary file{'s' * (binary != 1)} (--json lists them)", err=True)
    return skipped


def finish(results, skipped) -> None:
    """Exit 1 when every input was skipped, 3 when some were (docs/cli.md); binary files met
    in a directory do not count."""
    unexpected = [s for s in skipped if not s.expected]
    if unexpected:
        sys.exit(EXIT_FAILURE if len(skipped) == len(results) else EXIT_PARTIAL)


def _ext(name: str) -> str:
    base = os.path.basename(name)
    root, ext = os.path.splitext(base)
    return ext.lower() if ext and root else "(none)"


@main.command()
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@click.option("--text", "-t", default=None, help="Count this text instead of files or stdin.")
@tokenizer_options
@special_option
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: per-file counts, total, encoding, skipped files and why.")
@click.option("--by", type=click.Choice(["file", "ext"]), default="file", show_default=True,
              help="One row per file, or per file extension.")
@click.option("--truncate", type=click.IntRange(min=0), default=None, metavar="N",
              help="Print the input cut to its first N tokens (at a token boundary) instead of a count.")
@click.option("--messages", "messages_file", default=None, metavar="FILE.json",
              help="Count the prompt tokens of a chat request: FILE holds a list of messages or "
                   '{"messages": [...], "tools": [...]} (OpenAI\'s counting recipe; needs -m).')
@click.option("--price", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Price per million tokens: print what the tokens cost beside each count "
                   "(a quick estimate; `bytepair cost` prices models from a dated price list).")
@progress_option
def count(paths, text, encoding_name, model, vocab, special, as_json, by, truncate, messages_file,
          price, progress):
    """Count the tokens in files, directories (recursively, honouring .gitignore and .ignore,
    skipping binary files), stdin (`-`, or no PATH) or --text.

    One input prints a bare number; several print a row per file and the total.
    Files that cannot be read or are not UTF-8 are named on stderr and skipped (exit 3).

    \b
    Examples:
      bytepair count README.md
      bytepair count . --by ext -m gpt-4o
      git diff | bytepair count
      bytepair count --text "hello world" -e cl100k_base
      bytepair count --messages request.json -m gpt-4o
      bytepair count --truncate 100 long.txt > head.txt
    """
    if messages_file is not None:
        return _count_messages(messages_file, paths, text, model, encoding_name, vocab, as_json)
    enc = resolve_tokenizer(encoding_name, model, vocab)
    items, single = gather(paths, text)
    if truncate is not None:
        return _truncate(enc, items, single, truncate, special)
    results = count_inputs(enc, items, special, progress)
    if single and len(items) == 1 and isinstance(results[0], Skipped):
        raise UserError(f"{results[0].name}: {results[0].reason}")
    skipped = report_skipped(results)
    counted = [r for r in results if not isinstance(r, Skipped)]
    total = sum(n for _, n in counted)
    per_million = None if price is None else Decimal(str(price))

    def cost(n: int) -> str:
        return "" if per_million is None else f"  ${(n * per_million / 10**6).quantize(Decimal('0.000001')):,}"

    if as_json:
        out = {"encoding": enc.name, "total": total,
               "files": [{"path": name, "tokens": n} for name, n in counted],
               "skipped": [{"path": s.name, "reason": s.reason} for s in skipped]}
        if is_stand_in(model):
            out.update(model=model, estimate=True)  # counted with a stand-in encoding
        if by == "ext":
            out["by_ext"] = {ext: {"files": f, "tokens": t} for ext, f, t in _group(counted)}
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
    elif single and len(items) == 1:
        if counted:
            click.echo(f"{total}{cost(total)}")
    elif by == "ext":
        for ext, files, tokens in _group(counted):
            click.echo(f"{tokens:>12,}{cost(tokens)}  {ext} ({files} file{'s' * (files != 1)})")
        click.echo(f"{total:>12,}{cost(total)}  total ({enc.name})")
    else:
        for name, n in counted:
            click.echo(f"{n:>12,}{cost(n)}  {name}")
        click.echo(f"{total:>12,}{cost(total)}  total ({enc.name})")
    finish(results, skipped)


def _group(counted):
    groups: dict[str, list[int]] = {}
    for name, n in counted:
        g = groups.setdefault(_ext(name), [0, 0])
        g[0] += 1
        g[1] += n
    return sorted(((ext, f, t) for ext, (f, t) in groups.items()), key=lambda r: (-r[2], r[0]))


def _truncate(enc, items, single, n: int, special: bool) -> None:
    if not (single and len(items) == 1):
        raise click.UsageError("--truncate takes one input (a file, stdin or --text)")
    text = read_text(items[0])
    if isinstance(text, Skipped):
        raise UserError(f"{text.name}: {text.reason}")
    ids = encode_text(enc, text, special)
    # Cut at the last token boundary at or before N that is also a character boundary, so the
    # output is valid UTF-8 and never ends in a replacement character.
    k = min(n, len(ids))
    while k > 0:
        try:
            cut = enc.decode_bytes(ids[:k]).decode("utf-8")
            break
        except UnicodeDecodeError:
            k -= 1
    else:
        cut = ""
    sys.stdout.write(cut)
    sys.stdout.flush()


def _count_messages(messages_file, paths, text, model, encoding_name, vocab, as_json) -> None:
    from bytepair.messages import MessagesError, count_messages

    if paths or text is not None:
        raise click.UsageError("--messages counts one request file; give no PATH or --text with it")
    if vocab or encoding_name:
        raise click.UsageError("--messages needs -m MODEL (the counting recipe is per model), "
                               "not -e or --vocab")
    if not model:
        raise click.UsageError("--messages needs -m MODEL, e.g. -m gpt-4o")
    try:
        if messages_file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(messages_file, "rb") as f:
                data = f.read()
    except FileNotFoundError:
        raise click.BadParameter(f"{messages_file}: no such file", param_hint="--messages") from None
    except OSError as e:
        raise UserError(f"{messages_file}: cannot read ({e.strerror or e})") from None
    try:
        request = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise UserError(f"{messages_file}: not JSON ({e})") from None
    if isinstance(request, dict):
        messages, tools = request.get("messages"), request.get("tools")
    else:
        messages, tools = request, None
    try:
        n = count_messages(messages, model=model, tools=tools)
    except MessagesError as e:
        raise UserError(f"{messages_file}: {e}") from None
    except KeyError as e:  # an unknown model
        raise click.BadParameter(str(e.args[0]) if e.args else str(e), param_hint="-m/--model") from None
    if as_json:
        click.echo(json.dumps({"model": model, "prompt_tokens": n}))
    else:
        click.echo(n)
