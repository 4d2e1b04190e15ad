"""Encoding names -> Encoding objects.

Built-in encodings are zero-argument constructors (``registry/openai.py``,
``registry/llama.py``), run on first use and cached. Other packages add encodings through the
``bytepair.encodings`` entry-point group: each entry point names either a mapping
``{name: constructor}`` or a module with such a mapping called ``ENCODING_CONSTRUCTORS``.
tiktoken's own plugins (modules in the ``tiktoken_ext`` namespace package with
``ENCODING_CONSTRUCTORS``) are found too, except tiktoken's ``openai_public``, whose encodings
are the built-in ones here. A constructor returns an :class:`~bytepair.Encoding`, or (as
tiktoken plugins do) the keyword arguments of ``Encoding(...)``.
"""

from __future__ import annotations

import _thread

from bytepair.encoding import Encoding
from bytepair.registry import llama, models, openai

# threading, typing and collections.abc are left out for start-up's sake (_thread is built in).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    Constructor = Callable[..., "Encoding | dict[str, Any]"]

ENTRY_POINT_GROUP = "bytepair.encodings"

_BUILTIN: dict[str, Constructor] = {**openai.ENCODING_CONSTRUCTORS, **llama.ENCODING_CONSTRUCTORS}
# Whether each built-in encoding can be built here without a network (see list_encoding_names).
_AVAILABLE = {**dict.fromkeys(openai.ENCODING_CONSTRUCTORS, openai.is_available),
              **dict.fromkeys(llama.ENCODING_CONSTRUCTORS, llama.is_available)}
_lock = _thread.RLock()
_cache: dict[str, Encoding] = {}
_plugins: dict[str, Constructor] | None = None


def _plugin_constructors() -> dict[str, Constructor]:
    global _plugins
    with _lock:
        if _plugins is None:
            # Imported here: importlib.metadata costs ~10 ms, and start-up should not pay it.
            from collections.abc import Mapping
            from importlib.metadata import entry_points

            found: dict[str, Constructor] = {}

            def add(plugin: str, table: object) -> None:
                if not isinstance(table, Mapping):
                    raise ValueError(
                        f"bytepair plugin {plugin!r} must name a mapping of encoding names to "
                        "constructors, or a module with ENCODING_CONSTRUCTORS"
                    )
                for name, ctor in table.items():
                    if name in _BUILTIN or name in found:
                        raise ValueError(f"bytepair plugin {plugin!r} redefines encoding {name!r}")
                    found[name] = ctor

            for ep in entry_points(group=ENTRY_POINT_GROUP):
                obj = ep.load()
                add(ep.value, getattr(obj, "ENCODING_CONSTRUCTORS", obj))
            for module in _tiktoken_plugin_modules():
                add(module.__name__, getattr(module, "ENCODING_CONSTRUCTORS", None))
            _plugins = found
        return _plugins


def _tiktoken_plugin_modules() -> list:
    """The modules of tiktoken's plugin namespace, ``tiktoken_ext``, but tiktoken's own."""
    import importlib
    import importlib.util
    import pkgutil

    try:
        spec = importlib.util.find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [importlib.import_module(m.name)
            for m in pkgutil.iter_modules(spec.submodule_search_locations, "tiktoken_ext.")
            if m.name != "tiktoken_ext.openai_public"]


def constructors() -> dict[str, Constructor]:
    """Every encoding name ``get_encoding`` knows, built-in and from plugins, with its
    constructor (a new dict: adding to it registers nothing; plugins do)."""
    return {**_BUILTIN, **_plugin_constructors()}


def _constructor(name: str) -> Constructor:
    if name in _BUILTIN:
        return _BUILTIN[name]
    plugins = _plugin_constructors()
    if name in plugins:
        return plugins[name]
    raise ValueError(
        f"Unknown encoding {name!r}. Known encodings: {', '.join(constructors())}"
    )


def _build(name: str, ctor: Constructor, options: dict[str, Any]) -> Encoding:
    made = ctor(**options)
    if isinstance(made, Encoding):
        return made
    return Encoding(**made)


def get_encoding(encoding_name: str, **options: Any) -> Encoding:
    """The encoding called ``encoding_name``, built once and then shared.

    ``options`` go to the constructor, e.g. ``get_encoding("llama3", path="tokenizer.model")``;
    an encoding built with options is not cached.
    """
    if not isinstance(encoding_name, str):
        raise TypeError(f"encoding name must be str, got {type(encoding_name).__name__}")
    if options:
        return _build(encoding_name, _constructor(encoding_name), options)
    enc = _cache.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        enc = _cache.get(encoding_name)
        if enc is None:
            enc = _build(encoding_name, _constructor(encoding_name), {})
            _cache[encoding_name] = enc
        return enc


def list_encoding_names() -> list[str]:
    """The encodings ``get_encoding`` can build on this machine now, without a network.

    The rule, name by name:

    - ``cl100k_base``, ``o200k_base``, ``o200k_harmony``: always (bundled);
    - ``r50k_base``, ``p50k_base``, ``p50k_edit``, ``gpt2``: when their pinned files are in a
      cache directory (``bytepair.fetch.cache_dirs()``; the hash is checked when they load);
    - ``llama3``: when its ``tokenizer.model`` is found (``$BYTEPAIR_LLAMA3_PATH``, or the
      ``llama-models`` package);
    - plugins' encodings: always (what they need is known only by building them).

    tiktoken lists every name it could download. bytepair does not promise a download it cannot
    check without trying, so ``[get_encoding(n) for n in list_encoding_names()]`` works offline.
    ``get_encoding`` still builds (downloading if it must) every name in :func:`constructors`.
    """
    names = [n for n in _BUILTIN if _AVAILABLE[n](n)]
    return names + [n for n in _plugin_constructors() if n not in _BUILTIN]


def is_registered_instance(enc: Encoding) -> bool:
    """True if ``enc`` is the shared instance ``get_encoding(enc.name)`` returns (so it can be
    pickled by name)."""
    return _cache.get(enc.name) is enc


def encoding_name_for_model(model_name: str) -> str:
    """The encoding name of an OpenAI model (tiktoken's table: exact names, then prefixes).

    Raises KeyError for a model it does not know.
    """
    if model_name in models.MODEL_TO_ENCODING:
        return models.MODEL_TO_ENCODING[model_name]
    for prefix, name in models.MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `bytepair.get_encoding` to explicitly get the tokeniser you expect."
    ) from None


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding of an OpenAI model; KeyError for an unknown model."""
    return get_encoding(encoding_name_for_model(model_name))
