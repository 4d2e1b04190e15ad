"""The `bytepair` command group and the options its commands share."""

from __future__ import annotations

import sys

import click

from bytepair import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bytepair")
def main() -> None:
    """bytepair: exact, fast byte-pair encoding for language models."""


def encoding_options(f):
    """`-e/--encoding` and `-m/--model`, resolved to an Encoding by `resolve_encoding`."""
    f = click.option("-m", "--model", help="Pick the encoding a model uses, e.g. gpt-4o.")(f)
    f = click.option("-e", "--encoding", "encoding_name", default=None,
                     help="Encoding name (default o200k_base). See `bytepair list`.")(f)
    return f


def resolve_encoding(encoding_name: str | None, model: str | None):
    import bytepair

    if encoding_name and model:
        raise click.UsageError("give --encoding or --model, not both")
    try:
        if model:
            return bytepair.encoding_for_model(model)
        return bytepair.get_encoding(encoding_name or "o200k_base")
    except KeyError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="--model") from None
    except (ValueError, FileNotFoundError) as e:
        raise click.ClickException(str(e)) from None


def read_inputs(files: tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, text) for each file, or for stdin when no file (or `-`) is given."""
    if not files:
        files = ("-",)
    out = []
    for name in files:
        try:
            if name == "-":
                data = sys.stdin.buffer.read()
                name = "<stdin>"
            else:
                with open(name, "rb") as f:
                    data = f.read()
            out.append((name, data.decode("utf-8")))
        except OSError as e:
            raise click.ClickException(f"{name}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise click.ClickException(f"{name}: not UTF-8 (byte {e.start}: {e.reason})") from None
    return out
