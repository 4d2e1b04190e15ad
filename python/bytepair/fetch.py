"""Reading vocabulary files by path or URL, with a cache, pinned hashes and no surprise
downloads.

Lookup order for a URL: ``$BYTEPAIR_CACHE_DIR``, then tiktoken's cache
(``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``), each under
tiktoken's cache key (the SHA-1 of the URL) or the file's own name; then a download into the
first writable cache directory. With no network and no cached copy the error says where to
put the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from bytepair.errors import HashMismatchError, VocabularyNotFoundError


def _is_url(blobpath: str) -> bool:
    return "://" in blobpath


def cache_dirs() -> list[Path]:
    """Directories searched for cached vocabulary files, in order."""
    import tempfile  # imports here and below keep ~10 ms out of `import bytepair`

    dirs = []
    for var in ("BYTEPAIR_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    dirs.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    if "BYTEPAIR_CACHE_DIR" not in os.environ:
        dirs.append(Path.home() / ".cache" / "bytepair")
    return dirs


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data``'s SHA-256 (hex) is ``expected_hash``."""
    import hashlib

    return hashlib.sha256(data).hexdigest() == expected_hash


def _check_hash(data: bytes, expected_hash: str | None, what: str) -> None:
    if expected_hash is None or check_hash(data, expected_hash):
        return
    import hashlib

    raise HashMismatchError(what, expected_hash, hashlib.sha256(data).hexdigest())


def find_cached(url: str) -> Path | None:
    """The cached copy of ``url`` (see the module docstring for where it is looked for), or
    None. Its hash is checked when it is read, not here."""
    import hashlib

    key = hashlib.sha1(url.encode()).hexdigest()
    filename = url.rsplit("/", 1)[-1]
    for d in cache_dirs():
        for name in (key, filename):
            if (d / name).is_file():
                return d / name
    return None


def read_file(blobpath: str | os.PathLike, expected_hash: str | None = None) -> bytes:
    """The bytes of a local file, or of a URL through the cache; checked against
    ``expected_hash`` (SHA-256 hex) when given."""
    blobpath = os.fspath(blobpath)
    from bytepair.formats.limits import read_vocab_file  # regular files, size bounded first

    if not _is_url(blobpath):
        data = read_vocab_file(blobpath)
        _check_hash(data, expected_hash, blobpath)
        return data

    cached = find_cached(blobpath)
    if cached is not None:
        data = read_vocab_file(cached)
        _check_hash(data, expected_hash, str(cached))
        return data

    import hashlib
    import urllib.error  # here, not at the top: urllib costs ~25 ms of start-up
    import urllib.request

    try:
        with urllib.request.urlopen(blobpath, timeout=30) as resp:
            data = resp.read()
    except (urllib.error.URLError, OSError) as e:
        filename = blobpath.rsplit("/", 1)[-1]
        target = cache_dirs()[0] / filename
        raise VocabularyNotFoundError(
            f"{filename} is not cached and could not be downloaded from {blobpath} ({e}). "
            f"Download it elsewhere and put it at {target} (or set BYTEPAIR_CACHE_DIR to the "
            "folder that holds it)."
        ) from None
    _check_hash(data, expected_hash, blobpath)
    _store(data, hashlib.sha1(blobpath.encode()).hexdigest())
    return data


def _store(data: bytes, key: str) -> None:
    """Write to the first writable cache directory (atomically: never half a file, no temp file
    left behind)."""
    from bytepair.atomic import write_atomic

    for d in cache_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
            write_atomic(d / key, data)
            return
        except OSError:
            continue
