"""Model prices and context windows, for `bytepair cost`: LiteLLM's price list, read exactly.

The list is LiteLLM's ``model_prices_and_context_window.json`` schema: one object per model
name, with ``input_cost_per_token``, ``output_cost_per_token``, ``cache_read_input_token_cost``
(US dollars per token), ``max_input_tokens``, ``max_output_tokens``, ``litellm_provider`` and
``mode``. A trimmed, dated snapshot is bundled (``data/model_prices.json``, made by
``scripts/update_prices.py``); ``bytepair prices update`` fetches the current list into the user's
cache, which is then used instead, and ``--prices FILE`` reads any file in the schema. Every
price is a :class:`~decimal.Decimal` parsed from the JSON text, so no money passes through a
float. Where the prices came from and their date travel with them (``Prices.source``,
``Prices.date``) so that every cost printed can name them.

Which encoding counts a model's tokens is the registry's fact (``registry/models.py``); for
models whose tokenizer bytepair does not have (Claude, Gemini, Mistral's API models, ...) the
count uses :data:`STAND_IN_ENCODING` and is marked as an estimate.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from bytepair.errors import PricesError, UnknownModelError

__all__ = ["Cost", "ModelPrice", "Prices", "PricesError", "UnknownModelError", "cost", "load_prices"]

BUNDLED = Path(__file__).resolve().parent / "data" / "model_prices.json"
# Where `bytepair prices update` writes: LiteLLM keeps the file on GitHub, beside its code.
UPDATE_URL = ("https://raw.githubusercontent.com/BerriAI/litellm/main/"
              "model_prices_and_context_window.json")
# The object in our snapshots that records where and when it was taken (not a model).
SNAPSHOT_KEY = "bytepair_snapshot"
# The models whose price is of a prompt's tokens, in LiteLLM's `mode` field.
PROMPT_MODES = ("chat", "responses", "completion")
# The fields bytepair reads, and what each must be.
MONEY = ("input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost")
COUNTS = ("max_input_tokens", "max_output_tokens", "max_tokens")
TEXTS = ("litellm_provider", "mode")
FIELDS = MONEY + COUNTS + TEXTS

# Counts a model whose tokenizer bytepair does not have. o200k_base is OpenAI's newest
# general vocabulary and is bundled; another vendor's tokenizer may split the same text into
# noticeably more or fewer tokens, which is why such a count is always labelled an estimate.
STAND_IN_ENCODING = "o200k_base"
# When a bare name (gemini-2.5-pro) matches several provider-prefixed entries, the model's own
# vendor's API wins over resellers.
PREFERRED_PROVIDERS = ("openai", "anthropic", "gemini", "mistral", "xai", "deepseek", "cohere_chat")


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices (USD per token, None where the list has none) and context window."""

    model: str
    provider: str | None
    mode: str | None
    input_cost_per_token: Decimal | None
    output_cost_per_token: Decimal | None
    cache_read_input_token_cost: Decimal | None
    max_input_tokens: int | None
    max_output_tokens: int | None


@dataclass(frozen=True)
class Prices:
    models: dict[str, ModelPrice]
    date: str  # YYYY-MM-DD: when the list was taken (or, for a file that does not say, its mtime)
    source: str  # where it came from: "bundled snapshot of ...", a path, a URL

    def describe(self) -> str:
        """One phrase naming the prices used, for every cost output."""
        return f"prices of {self.date} ({self.source})"

    def lookup(self, model: str) -> ModelPrice:
        """The entry for ``model``: the exact name, else the one entry whose name after a
        provider prefix is ``model`` (``gemini-2.5-pro`` -> ``gemini/gemini-2.5-pro``), the
        model vendor's own API first."""
        if model in self.models:
            return self.models[model]
        matches = [p for name, p in self.models.items() if name.rsplit("/", 1)[-1] == model]
        if len(matches) == 1:
            return matches[0]
        for provider in PREFERRED_PROVIDERS:
            own = [p for p in matches if p.provider == provider]
            if len(own) == 1:
                return own[0]
        if matches:
            names = ", ".join(sorted(p.model for p in matches)[:6])
            raise UnknownModelError(f"model {model!r} is ambiguous in the price list; name one of: {names}")
        raise UnknownModelError(f"no price for model {model!r} in the {self.describe()}"
                                f"{did_you_mean(model, self.models)}")

    def __contains__(self, model: str) -> bool:
        try:
            self.lookup(model)
            return True
        except UnknownModelError:
            return False


def did_you_mean(name: str, known) -> str:
    import difflib

    known = list(dict.fromkeys(known))
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def cache_path() -> Path:
    """Where `bytepair prices update` keeps the fetched list: ``$BYTEPAIR_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/bytepair``, else ``~/.cache/bytepair``."""
    if os.environ.get("BYTEPAIR_CACHE_DIR"):
        base = Path(os.environ["BYTEPAIR_CACHE_DIR"])
    elif os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"]) / "bytepair"
    else:
        base = Path.home() / ".cache" / "bytepair"
    return base / "model_prices.json"


def load_prices(path: str | os.PathLike | None = None) -> Prices:
    """The prices in ``path``; without one, the list `bytepair prices update` fetched if there
    is one, else the bundled snapshot. Raises PricesError for a file that is not in the schema."""
    if path is None:
        cached = cache_path()
        path = cached if cached.is_file() else BUNDLED
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise PricesError(f"{path}: {e.strerror or e}") from None
    prices = parse(data, str(path))
    if path == BUNDLED:
        return Prices(prices.models, prices.date, f"bundled snapshot, {prices.source}")
    return prices


def _json(data: bytes, where: str) -> dict:
    try:
        # Decimal from the number's own text: 2.5e-06 is exactly 0.0000025, never a float.
        obj = json.loads(data, parse_float=Decimal)
    except (ValueError, RecursionError) as e:
        raise PricesError(f"{where}: not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise PricesError(f"{where}: expected a JSON object of model names, got {type(obj).__name__}")
    return obj


def _entry(name: str, entry: dict, where: str) -> ModelPrice:
    def bad(field, what):
        return PricesError(f"{where}: {name}: {field} must be {what}, got {entry[field]!r}")

    for field in MONEY:
        v = entry.get(field)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, Decimal)) or v < 0):
            raise bad(field, "a number >= 0 (USD per token)")
    for field in COUNTS:
        v = entry.get(field)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise bad(field, "a whole number >= 0")
    for field in TEXTS:
        v = entry.get(field)
        if v is not None and not isinstance(v, str):
            raise bad(field, "a string")

    def money(field):
        v = entry.get(field)
        return None if v is None else Decimal(v)

    return ModelPrice(
        model=name, provider=entry.get("litellm_provider"), mode=entry.get("mode"),
        input_cost_per_token=money("input_cost_per_token"),
        output_cost_per_token=money("output_cost_per_token"),
        cache_read_input_token_cost=money("cache_read_input_token_cost"),
        max_input_tokens=entry.get("max_input_tokens"),
        # LiteLLM's older entries give the output limit only as max_tokens.
        max_output_tokens=entry.get("max_output_tokens", entry.get("max_tokens")),
    )


def _prompt_models(obj: dict, where: str) -> dict[str, ModelPrice]:
    models = {}
    for name, entry in obj.items():
        if name in (SNAPSHOT_KEY, "sample_spec"):  # LiteLLM's schema description, not a model
            continue
        if not isinstance(entry, dict):
            raise PricesError(f"{where}: {name}: expected an object, got {type(entry).__name__}")
        if entry.get("mode") not in PROMPT_MODES:
            continue
        models[name] = _entry(name, entry, where)
    if not models:
        raise PricesError(f"{where}: no chat or completion model in it; is it LiteLLM's "
                          "model_prices_and_context_window.json?")
    return models


def parse(data: bytes, where: str) -> Prices:
    """The prompt models of a price list in LiteLLM's schema (checked field by field)."""
    obj = _json(data, where)
    models = _prompt_models(obj, where)
    meta = obj.get(SNAPSHOT_KEY)
    if isinstance(meta, dict) and isinstance(meta.get("date"), str):
        return Prices(models, meta["date"], str(meta.get("source", where)))
    import datetime

    try:  # a file that records no date is dated by its modification time, and says so
        mtime = os.stat(where).st_mtime
        date = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).date().isoformat()
        return Prices(models, f"{date} (file modified)", where)
    except OSError:
        return Prices(models, "unknown date", where)


def trim(data: bytes, where: str, *, date: str, source: str) -> bytes:
    """LiteLLM's full list cut to the prompt models and FIELDS, with the snapshot's date and
    source: what the bundled file and the user-cache copy hold. Checked as ``parse`` checks."""
    obj = _json(data, where)
    _prompt_models(obj, where)  # the schema check, before anything is kept
    lines = [f"{json.dumps(SNAPSHOT_KEY)}: {json.dumps({'date': date, 'source': source})}"]
    for name in sorted(obj):
        entry = obj[name]
        if name in (SNAPSHOT_KEY, "sample_spec") or entry.get("mode") not in PROMPT_MODES:
            continue
        fields = ", ".join(f"{json.dumps(k)}: {_number_or_json(entry[k])}"
                           for k in FIELDS if entry.get(k) is not None)
        lines.append(f"{json.dumps(name)}: {{{fields}}}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


def _number_or_json(v) -> str:
    # A Decimal is written from its own digits (2.5E-6 is valid JSON), so the copy is exact.
    return str(v) if isinstance(v, Decimal) else json.dumps(v)


def fetch_update(url: str = UPDATE_URL, *, opener=None) -> Path:
    """Downloads the current list, checks it, and writes the trimmed copy to ``cache_path()``
    atomically. Raises PricesError (nothing written) when it cannot: no network, HTTP error,
    not the schema. ``opener(url) -> bytes`` replaces the download (the tests use it)."""
    import datetime

    from bytepair.atomic import write_atomic

    if opener is None:
        opener = _download
    data = opener(url)
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    trimmed = trim(data, url, date=today, source=url)
    target = cache_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, trimmed)
    except OSError as e:
        raise PricesError(f"{target}: cannot write ({e.strerror or e})") from None
    return target


def _download(url: str) -> bytes:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.read()
    except (urllib.error.URLError, OSError) as e:
        raise PricesError(f"cannot download {url} ({getattr(e, 'reason', e)}); the prices in use "
                          "are unchanged") from None


def encoding_name_for(model: str, prices: Prices | None) -> tuple[str, bool]:
    """(encoding name, whether it is a stand-in) for ``model``.

    The registry's table decides for OpenAI's models (also behind a provider prefix such as
    ``azure/gpt-4o``); a model only the price list knows is counted with STAND_IN_ENCODING.
    Raises UnknownModelError, with the closest names, for a model neither knows."""
    from bytepair import registry
    from bytepair.registry import models as known_models

    for name in (model, model.rsplit("/", 1)[-1]):
        try:
            return registry.encoding_name_for_model(name), False
        except KeyError:
            pass
    if prices is not None and model in prices:
        return STAND_IN_ENCODING, True
    names = list(known_models.MODEL_TO_ENCODING) + (list(prices.models) if prices else [])
    raise UnknownModelError(f"unknown model {model!r}{did_you_mean(model, names)}; name an "
                            "encoding with -e instead (`bytepair list` shows them)")


@dataclass(frozen=True)
class Cost:
    """What one request to ``price.model`` costs: ``input_tokens`` of prompt, ``cached_tokens``
    more read from the prompt cache, ``output_tokens`` expected in reply."""

    price: ModelPrice
    encoding: str
    estimate: bool  # counted with a stand-in encoding
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    input_cost: Decimal
    cached_cost: Decimal
    output_cost: Decimal

    @property
    def total(self) -> Decimal:
        return self.input_cost + self.cached_cost + self.output_cost

    @property
    def fits(self) -> bool | None:
        """Whether the prompt (and the expected reply) fit the model's limits; None if the list
        gives no input limit."""
        limit = self.price.max_input_tokens
        if limit is None:
            return None
        if self.input_tokens + self.cached_tokens > limit:
            return False
        out_limit = self.price.max_output_tokens
        return out_limit is None or self.output_tokens <= out_limit


def cost(price: ModelPrice, encoding: str, estimate: bool, input_tokens: int, *,
         output_tokens: int = 0, cached_tokens: int = 0, where: str = "the price list") -> Cost:
    """Prices a request; PricesError if a price it needs is not in the list (never a guess)."""

    def need(field: str, tokens: int) -> Decimal:
        value = getattr(price, field)
        if value is None:
            if tokens == 0:
                return Decimal(0)
            raise PricesError(f"{price.model} has no {field} in {where}")
        return value * tokens

    return Cost(price, encoding, estimate, input_tokens, cached_tokens, output_tokens,
                input_cost=need("input_cost_per_token", input_tokens),
                cached_cost=need("cache_read_input_token_cost", cached_tokens),
                output_cost=need("output_cost_per_token", output_tokens))


def usd(amount: Decimal) -> str:
    """Dollars as exact decimal digits, no exponent and no float: $0.0030850 -> "$0.003085"."""
    text = format(amount.normalize(), "f") if amount else "0"
    if "." in text:
        whole, frac = text.split(".")
        frac = frac.ljust(2, "0")
        text = f"{whole}.{frac}"
    else:
        text = f"{text}.00"
    return f"${text}"
