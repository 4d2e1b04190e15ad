"""The `bytepair` command line: one module per group of commands, all on `app.main`."""

from bytepair.cli import chat  # noqa: F401  (registers chat)
from bytepair.cli import cost  # noqa: F401  (registers cost, prices)
from bytepair.cli import count  # noqa: F401  (registers count)
from bytepair.cli import encode  # noqa: F401  (registers encode, decode, list)
from bytepair.cli import formats  # noqa: F401  (registers convert, inspect, verify)
from bytepair.cli import show  # noqa: F401  (registers show, compare)
from bytepair.cli import train  # noqa: F401  (registers train)
from bytepair.cli.app import main

__all__ = ["main"]
