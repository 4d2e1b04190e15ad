"""Writing a file atomically: the one helper every writer uses (vocabulary formats, the download
cache), so that a reader sees the old file or the new one, never half of one, and a failed write
leaves neither a damaged target nor a stray temporary file."""

from __future__ import annotations

import os


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same directory, renamed over
    ``path`` (``os.replace``, atomic on POSIX and Windows) once complete.

    On any error, Ctrl-C included, the temporary file is removed and ``path`` is untouched.
    The file is created with ``open`` (so with the umask's permissions, unlike ``mkstemp``'s
    0600) under a name no other writer uses. Not fsynced: this guards readers and failures, not
    power loss.
    """
    path = os.fspath(path)
    directory, name = os.path.split(path)
    # Unique per process and call; a leading dot keeps it out of `ls` and globs like *.tiktoken.
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # never created (the directory is missing or not writable), or already gone
        raise
