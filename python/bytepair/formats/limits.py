"""The size limit on vocabulary files, checked before a file is read.

A vocabulary file is read whole. Without a bound, ``load("/dev/zero")`` read until memory ran
out and a FIFO or a terminal blocked forever; so only regular files are read, and only up to
:data:`MAX_FILE_BYTES`, decided from the open file's own ``fstat`` (not a separate ``stat`` of
the path, which another process could swap between the check and the read).
"""

from __future__ import annotations

import os
import stat

from bytepair.errors import FormatError

# The largest vocabulary file read: 1 GiB. The largest real ones are tens of megabytes (a
# 256k-token tokenizer.json is about 35 MB); a file past this is not a vocabulary.
MAX_FILE_BYTES = 1 << 30


def read_vocab_file(path: str | os.PathLike, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at ``path``; FormatError for anything else (a device, a
    FIFO, a socket) or for a file over ``limit`` bytes, before reading it. OSError as ``open``
    raises it (missing file, no permission, a directory)."""
    source = os.fspath(path)
    # O_NONBLOCK: opening a FIFO with no writer must not block before fstat can refuse it.
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", source)
        if not stat.S_ISREG(st.st_mode):
            raise FormatError("not a regular file (a device, FIFO or socket); a vocabulary is read from a file",
                              None, source)
        if st.st_size > limit:
            raise FormatError(f"the file has {st.st_size} bytes, more than the {limit} a vocabulary may have",
                              None, source)
        # Read one byte past the limit: a file growing while it is read is caught too.
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FormatError(f"the file grew past the {limit} bytes a vocabulary may have while it was read",
                          None, source)
    return data
