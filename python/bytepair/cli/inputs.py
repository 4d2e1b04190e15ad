"""What `count`, `cost` and `show` read: files, directories (walked, honouring .gitignore and
.ignore), stdin and literal text, and the inputs they skip, each with its reason.

A directory is walked as git would list it: `.git` is never entered, and the patterns of every
`.gitignore` and `.ignore` from the repository root down apply to the files below them (through
pathspec, which implements git's wildmatch rules). A file named on the command line is always
read, ignored or not, as `git add -f` or `rg FILE` would; so is a directory named on the command
line that its repository ignores (the ignore files inside it still apply)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import click

IGNORE_FILES = (".gitignore", ".ignore")
# Git's own test for a binary file: a NUL byte in the first 8000 bytes.
BINARY_SNIFF = 8000


@dataclass(frozen=True)
class Input:
    """One text to read: a path, `-` (stdin) or a literal (``text`` set)."""

    name: str
    path: str | None = None  # None for stdin and --text
    text: str | None = None
    walked: bool = False  # found in a directory, not named on the command line
    error: str | None = None  # why a folder met in the walk could not be listed


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str
    # A binary file found in a directory is skipped as git's tools skip it: expected, so it
    # neither warns one by one nor changes the exit code. Everything else skipped does both.
    expected: bool = False


def not_a_path(arg: str) -> click.BadParameter:
    shown = arg if len(arg) <= 40 else arg[:37] + "..."
    return click.BadParameter(
        f"{shown!r} is not a file or directory; to use literal text, pass --text \"...\" or pipe "
        "it to stdin", param_hint="PATH")


def gather(args: tuple[str, ...], text: str | None) -> tuple[list[Input], bool]:
    """The inputs that the PATH arguments and ``--text`` name, and whether it is exactly one
    input named directly (a file, stdin or the text: then commands print a bare result)."""
    if text is not None:
        if args:
            raise click.UsageError("give PATHs or --text, not both")
        return [Input("<text>", text=text)], True
    if not args:
        args = ("-",)
    out: list[Input] = []
    single = len(args) == 1
    for arg in args:
        if arg == "-":
            out.append(Input("<stdin>"))
        elif os.path.isdir(arg):
            single = False
            out.extend(walk(arg))
        elif os.path.exists(arg) or os.path.islink(arg):
            out.append(Input(arg, path=arg))
        else:
            raise not_a_path(arg)
    return out, single


def _ancestor_specs(directory: str) -> list[tuple[str, object]]:
    """The ignore rules above ``directory`` inside its git repository (none outside one)."""
    chain = []
    d = os.path.abspath(directory)
    while True:
        parent = os.path.dirname(d)
        if parent == d:
            return []  # reached / without finding a repository: no rules from above
        d = parent
        chain.append(d)
        if os.path.isdir(os.path.join(d, ".git")) or os.path.isfile(os.path.join(d, ".git")):
            break
    specs = []
    for d in reversed(chain):
        spec = _spec(d)
        if spec is not None:
            specs.append((d, spec))
    return specs


def _spec(directory: str):
    import pathspec

    lines: list[str] = []
    for name in IGNORE_FILES:
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                lines.extend(f.read().splitlines())
        except OSError:
            continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _ignored(path: str, is_dir: bool, specs) -> bool:
    # Later (deeper) files override earlier ones, as in git: the last matching rule wins, so a
    # deeper `!pattern` can re-include what a shallower file excluded.
    verdict = False
    for base, spec in specs:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        if is_dir:
            rel += "/"
        result = spec.check_file(rel)
        if result.include is not None:
            verdict = result.include
    return verdict


def walk(root: str) -> list[Input]:
    """The files under ``root`` that git would not ignore, in a stable (sorted) order."""
    found: list[Input] = []
    base_specs = _ancestor_specs(root)
    if base_specs and _ignored(os.path.abspath(root), True, base_specs):
        # The user named a folder its repository ignores (say `corpus/`): they want it read, so
        # the rules above it, which would drop all of it, give way; its own ignore files apply.
        base_specs = []
    # (directory, specs in force there): depth-first, so each directory adds its own file.
    stack = [(root, base_specs)]
    while stack:
        directory, specs = stack.pop()
        own = _spec(directory)
        if own is not None:
            specs = specs + [(os.path.abspath(directory), own)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as e:  # reported as skipped, with the others, when the inputs are read
            found.append(Input(os.path.normpath(directory), path=directory,
                               error=f"cannot list folder ({e.strerror or e})"))
            continue
        subdirs = []
        for entry in entries:
            full = os.path.join(directory, entry.name)
            absolute = os.path.abspath(full)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name == ".git" or _ignored(absolute, True, specs):
                    continue
                subdirs.append((full, specs))
            elif entry.is_symlink() and not os.path.isfile(full):
                continue  # a link to a directory (not followed: no loops) or a dangling link
            elif not _ignored(absolute, False, specs):
                found.append(Input(os.path.normpath(full), path=full, walked=True))
        stack.extend(reversed(subdirs))
    return found


def read_text(item: Input) -> str | Skipped:
    """The text of ``item``, or why it is skipped (unreadable, binary, not UTF-8)."""
    if item.text is not None:
        return item.text
    if item.error is not None:
        return Skipped(item.name, item.error)
    try:
        if item.path is None:
            data = sys.stdin.buffer.read()
        else:
            with open(item.path, "rb") as f:
                data = f.read()
    except IsADirectoryError:
        return Skipped(item.name, "is a directory")
    except OSError as e:
        return Skipped(item.name, f"cannot read ({e.strerror or e})")
    if b"\0" in data[:BINARY_SNIFF]:
        return Skipped(item.name, "binary (a NUL byte in its first 8000 bytes)", expected=item.walked)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return Skipped(item.name, f"not UTF-8 (byte {e.start}: {e.reason})")
