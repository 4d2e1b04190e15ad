"""``tiktoken.registry``: encoding names -> encodings, through bytepair's registry.

- ``ENCODINGS`` is the registry's cache itself (name -> shared Encoding), as in tiktoken.
- ``ENCODING_CONSTRUCTORS`` names every known encoding with its constructor, built-in and from
  plugins (bytepair's entry points and tiktoken's ``tiktoken_ext`` modules). Unlike tiktoken's,
  it is never None and it is a fresh dict on each access: add encodings with a plugin, not by
  writing into it.
- ``list_encoding_names`` lists only what ``get_encoding`` can build here (its docstring gives
  the rule); tiktoken lists every name it could download.
"""

from __future__ import annotations

from bytepair.registry import _cache as ENCODINGS
from bytepair.registry import _lock, get_encoding, list_encoding_names  # noqa: F401 (tiktoken's names)

__all__ = ["ENCODINGS", "ENCODING_CONSTRUCTORS", "get_encoding", "list_encoding_names"]


def __getattr__(name: str):
    # Computed on access: finding plugins costs ~10 ms, which `import tiktoken` should not pay.
    if name == "ENCODING_CONSTRUCTORS":
        from bytepair.registry import constructors

        return constructors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _find_constructors() -> None:
    """tiktoken's hook for discovering plugins; bytepair finds them on first need, so this
    only makes that happen now."""
    from bytepair.registry import constructors

    constructors()


def _available_plugin_modules() -> list[str]:
    """The ``tiktoken_ext`` plugin modules in use (tiktoken's own ``openai_public`` is not:
    its encodings are bytepair's built-ins)."""
    from bytepair.registry import _tiktoken_plugin_modules

    return [m.__name__ for m in _tiktoken_plugin_modules()]

