"""The `bytepair` command group, the options its commands share, and the one place where a
user's mistake becomes one line on stderr and an exit code (docs/cli.md lists them)."""

from __future__ import annotations

import os
import sys

import click

from bytepair import __version__

# Exit codes, documented in docs/cli.md. Click's own usage errors already exit 2.
EXIT_OK = 0
EXIT_FAILURE = 1  # an input or output could not be used: not a vocabulary, unwritable path, ...
EXIT_USAGE = 2  # the command line is wrong: unknown option, encoding, model, missing path, ...
EXIT_PARTIAL = 3  # the command finished, but skipped some inputs (each named on stderr)
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_INTERNAL = 70  # a bug in bytepair (EX_SOFTWARE); BYTEPAIR_TRACEBACK=1 shows the traceback


# A mistake in the input or output: click's ClickException already exits 1 (EXIT_FAILURE)
# and has no usage text; the name says which kind of error is meant.
UserError = click.ClickException


class _Group(click.Group):
    """Runs a command and turns every failure into one line on stderr and an exit code.

    Click in standalone mode prints usage errors over several lines (usage, hint, error);
    here every error is one line, ``bytepair COMMAND: message``, so that scripts can read it
    and people see it."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name or "bytepair", complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:  # `bytepair` or `bytepair cmd` alone
            e.show()
            sys.exit(EXIT_USAGE)
        except click.ClickException as e:
            where = e.ctx.command_path if getattr(e, "ctx", None) else _command_path(args)
            _die(f"{where}: {_one_line(e.format_message())}", e.exit_code)
        except click.exceptions.Abort:
            _die("bytepair: aborted", EXIT_INTERRUPTED)
        except KeyboardInterrupt:
            _die("bytepair: interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            # `bytepair show big.txt | head`: the reader left; say nothing more. stdout is
            # pointed at devnull so that Python's flush at exit does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_FAILURE)
        except Exception as e:
            from bytepair.errors import BytepairError

            if isinstance(e, (BytepairError, OSError)):  # an error a command did not wrap
                _die(f"{_command_path(args)}: {_one_line(str(e))}", EXIT_FAILURE)
            if os.environ.get("BYTEPAIR_TRACEBACK"):
                raise
            _die(f"{_command_path(args)}: internal error: {type(e).__name__}: {_one_line(str(e))} "
                 "(please report it; BYTEPAIR_TRACEBACK=1 shows the traceback)", EXIT_INTERNAL)
        if isinstance(rv, int):  # click returns ctx.exit(n)'s code in non-standalone mode
            sys.exit(rv)
        sys.exit(EXIT_OK)


def _command_path(args) -> str:
    """``bytepair SUB [SUBSUB]`` from the arguments, for errors raised without a context."""
    args = sys.argv[1:] if args is None else list(args)
    path, cmd = ["bytepair"], main
    for a in args:
        if a.startswith("-"):
            continue
        if isinstance(cmd, click.Group) and a in cmd.commands:
            path.append(a)
            cmd = cmd.commands[a]
        else:
            break
    return " ".join(path)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _die(message: str, code: int):
    click.echo(message, err=True)
    sys.exit(code)


def warn(message: str) -> None:
    """A warning: one line on stderr, the run goes on."""
    click.echo(f"warning: {message}", err=True)


@click.group(name="bytepair", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bytepair")
def main() -> None:
    """bytepair: exact, fast byte-pair encoding for language models.

    \b
    Examples:
      bytepair count .                      # tokens in a repository (honours .gitignore)
      bytepair cost prompt.txt -m gpt-4o    # what sending it costs
      bytepair show --text "hello world"    # see the tokens
    """


def encoding_options(f):
    """`-e/--encoding` and `-m/--model`, resolved to an Encoding by `resolve_encoding`."""
    f = click.option("-m", "--model", help="Pick the encoding a model uses, e.g. gpt-4o.")(f)
    f = click.option("-e", "--encoding", "encoding_name", default=None,
                     help="Encoding name (default o200k_base). See `bytepair list`.")(f)
    return f


def tokenizer_options(f):
    """`-e/--encoding`, `-m/--model` and `--vocab FILE`, resolved by `resolve_tokenizer`."""
    f = click.option("--vocab", metavar="FILE",
                     help="A vocabulary file (any format `bytepair inspect` reads) instead of -e/-m.")(f)
    return encoding_options(f)


def resolve_encoding(encoding_name: str | None, model: str | None):
    """The Encoding that ``-e`` or ``-m`` names (o200k_base when neither is given).

    A model whose tokenizer bytepair does not have (Claude, Gemini, ...) but which the price
    list knows is counted with a stand-in encoding, with a warning saying so."""
    if encoding_name and model:
        raise click.UsageError("give --encoding or --model, not both")
    if model:
        from bytepair import pricing, registry

        try:
            return _get_encoding(registry.encoding_name_for_model(model))
        except KeyError:
            pass
        try:  # only now the price list, which knows the models bytepair has no tokenizer for
            name, stand_in = pricing.encoding_name_for(model, _prices_or_none())
        except pricing.UnknownModelError as e:
            raise click.BadParameter(str(e), param_hint="-m/--model") from None
        if stand_in:
            warn(f"bytepair does not have {model}'s tokenizer; counted with {name} as a "
                 "stand-in, so the count is an estimate")
        return _get_encoding(name)
    return _get_encoding(encoding_name or "o200k_base")


def is_stand_in(model: str | None) -> bool:
    """Whether ``-m model`` is counted with the stand-in encoding (the registry lacks it)."""
    if not model:
        return False
    from bytepair import registry

    try:
        registry.encoding_name_for_model(model)
        return False
    except KeyError:
        return True


def _prices_or_none():
    """The price list, to recognise models that only it knows; None if it cannot be read (then
    those models are unknown, which the error says)."""
    from bytepair import pricing

    try:
        return pricing.load_prices()
    except pricing.PricesError:
        return None


def _get_encoding(name: str):
    import bytepair
    from bytepair.registry import constructors

    known = list(constructors())
    if name not in known:
        hint = _did_you_mean(name, known) or f" (known: {', '.join(known)})"
        raise click.BadParameter(f"unknown encoding {name!r}{hint}; "
                                 "`bytepair list` shows the ones available here",
                                 param_hint="-e/--encoding")
    try:
        return bytepair.get_encoding(name)
    except (ValueError, OSError) as e:  # a vocabulary that is missing here (llama3, r50k offline)
        raise UserError(f"{name}: {e}") from None


def _did_you_mean(name: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        close = [k for k in known if name.lower() in k.lower()][:3]
    return f" (did you mean {', '.join(close)}?)" if close else ""


def resolve_tokenizer(encoding_name: str | None, model: str | None, vocab: str | None):
    """The Encoding of ``--vocab FILE``, or else of ``-e``/``-m``."""
    if vocab is None:
        return resolve_encoding(encoding_name, model)
    if encoding_name or model:
        raise click.UsageError("give --vocab or --encoding/--model, not both")
    return load_vocab(vocab)


def load_vocab(path: str):
    import bytepair

    if not os.path.exists(path):
        raise click.BadParameter(f"{path}: no such file or directory", param_hint="--vocab")
    try:
        return bytepair.load(path)
    except (ValueError, OSError) as e:
        message = _one_line(str(e))
        raise UserError(message if message.startswith(path) else f"{path}: {message}") from None


def check_writable(path: str) -> None:
    """Fails now, before any work, if ``path`` cannot be written: its folder is missing or not
    writable, or it is a directory (the writers write a temporary file beside it)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory; give a file name to write")
    if not os.path.isdir(folder):
        raise UserError(f"{path}: cannot write: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{path}: cannot write: the folder {folder} is not writable")


def write_error(path: str, e: OSError) -> UserError:
    """An OSError while writing ``path`` as one line naming ``path`` (not the temporary file)."""
    return UserError(f"{path}: cannot write ({e.strerror or e}); nothing was written")


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
        except (FileNotFoundError, IsADirectoryError) as e:
            raise click.BadParameter(f"{name}: {e.strerror}") from None
        except OSError as e:
            raise UserError(f"{name}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise UserError(f"{name}: not UTF-8 (byte {e.start}: {e.reason})") from None
    return out
