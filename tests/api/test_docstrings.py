"""The examples in Encoding's docstrings are true (run as doctests against cl100k_base)."""

from __future__ import annotations

import doctest

import bytepair
import bytepair.encoding


def test_encoding_docstring_examples():
    globs = {"enc": bytepair.get_encoding("cl100k_base")}
    result = doctest.testmod(bytepair.encoding, globs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0


def test_stream_docstring_examples():
    import bytepair.stream

    result = doctest.testmod(bytepair.stream, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3
    assert result.failed == 0
