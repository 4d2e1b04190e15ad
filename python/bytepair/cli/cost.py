"""`bytepair cost` and `bytepair prices`: what sending text to a model costs, from a dated price
list (bytepair/pricing.py), in exact decimal dollars."""

from __future__ import annotations

import json

import click

from bytepair.cli.app import UserError, _get_encoding, load_vocab, main, warn
from bytepair.cli.count import count_inputs, finish, progress_option, report_skipped, special_option
from bytepair.cli.inputs import Skipped, gather


def _prices(path: str | None):
    from bytepair import pricing

    if path is not None and not __import__("os").path.exists(path):
        raise click.BadParameter(f"{path}: no such file", param_hint="--prices")
    try:
        return pricing.load_prices(path)
    except pricing.PricesError as e:
        raise UserError(str(e)) from None


@main.command()
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@click.option("--text", "-t", default=None, help="Price this text instead of files or stdin.")
@click.option("-m", "--model", "models", multiple=True, required=True,
              help="A model in the price list (repeatable: a comparison table).")
@click.option("--output-tokens", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Tokens expected in the reply, priced at the output price.")
@click.option("--cached-tokens", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Prompt tokens read from the provider's prompt cache, in addition to PATH's, "
                   "priced at the cache-read price.")
@click.option("--prices", "prices_file", default=None, metavar="FILE",
              help="A price list in LiteLLM's model_prices_and_context_window.json schema "
                   "(default: `bytepair prices update`'s copy, else the bundled snapshot).")
@click.option("-e", "--encoding", "encoding_name", default=None,
              help="Count with this encoding for every model (say llama3 for a hosted Llama 3) "
                   "instead of each model's own or the stand-in.")
@click.option("--vocab", default=None, metavar="FILE",
              help="Count with this vocabulary file for every model, as -e does.")
@special_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (money as decimal strings).")
@progress_option
def cost(paths, text, models, output_tokens, cached_tokens, prices_file, encoding_name, vocab, special,
         as_json, progress):
    """Price the tokens of files, directories, stdin or --text for one or more models: input
    tokens at the input price, --output-tokens at the output price, --cached-tokens at the
    cache-read price, and whether it all fits the model's context window.

    Models bytepair has no tokenizer for (Claude, Gemini, ...) are counted with a named
    stand-in encoding and marked as estimates. Every output names the price list's date.

    \b
    Examples:
      bytepair cost prompt.txt -m gpt-4o --output-tokens 500
      bytepair cost . -m gpt-4o -m gpt-4.1-mini -m claude-sonnet-4-5
      git diff | bytepair cost -m gpt-4.1 --json
      bytepair cost prompt.txt -m cerebras/llama-3.3-70b -e llama3
    """
    from bytepair import pricing

    prices = _prices(prices_file)
    where = prices.describe()
    rows = []
    for model in models:
        try:
            price = prices.lookup(model)
            name, estimate = pricing.encoding_name_for(model, prices)
        except pricing.UnknownModelError as e:
            raise click.BadParameter(str(e), param_hint="-m/--model") from None
        rows.append((model, price, name, estimate))
    if encoding_name and vocab:
        raise click.UsageError("give --encoding or --vocab, not both")
    chosen = None
    if encoding_name or vocab:
        # The user names the tokenizer: exact for every model (no stand-in, no estimate).
        chosen = _get_encoding(encoding_name) if encoding_name else load_vocab(vocab)
        label = encoding_name or vocab
        rows = [(model, price, label, False) for model, price, _, _ in rows]
    items, _ = gather(paths, text)
    counts: dict[str, int] = {}
    results = None
    for name in dict.fromkeys(r[2] for r in rows):
        results = count_inputs(chosen or _get_encoding(name), items, special, progress)
        counts[name] = sum(r[1] for r in results if not isinstance(r, Skipped))
    skipped = report_skipped(results)
    try:
        costs = [pricing.cost(price, name, estimate, counts[name], output_tokens=output_tokens,
                              cached_tokens=cached_tokens, where=where)
                 for _, price, name, estimate in rows]
    except pricing.PricesError as e:
        raise UserError(str(e)) from None
    if as_json:
        click.echo(json.dumps(_as_json(prices, models, costs, results, skipped), indent=2))
    else:
        _table(models, costs)
        for model, c in zip(models, costs):
            if c.estimate:
                warn(f"{model}: bytepair does not have its tokenizer; counted with {c.encoding} as "
                     "a stand-in, so its count and cost are estimates (marked ~)")
        click.echo(f"USD, {where}")
    finish(results, skipped)


def _fits(c) -> str:
    limit = c.price.max_input_tokens
    if c.fits is None:
        return "window unknown"
    return f"{'fits' if c.fits else 'TOO LONG'} ({limit:,})"


def _table(models, costs) -> None:
    from bytepair.pricing import usd

    header = ("model", "encoding", "input tokens", "input", "cached", "output", "total", "context window")
    rows = [header]
    for model, c in zip(models, costs):
        mark = "~" if c.estimate else ""
        rows.append((model, c.encoding + (" (stand-in)" if c.estimate else ""),
                     f"{mark}{c.input_tokens:,}", mark + usd(c.input_cost), usd(c.cached_cost),
                     usd(c.output_cost), mark + usd(c.total), _fits(c)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])] + [v.rjust(w) for v, w in zip(r[2:7], widths[2:7])]
        click.echo("  ".join(cells + [r[7]]).rstrip())


def _as_json(prices, models, costs, results, skipped) -> dict:
    def money(d):
        return format(d.normalize(), "f") if d else "0"

    return {
        "prices": {"date": prices.date, "source": prices.source, "currency": "USD"},
        "files": [{"path": r[0]} for r in results if not isinstance(r, Skipped)],
        "skipped": [{"path": s.name, "reason": s.reason} for s in skipped],
        "models": [{
            "model": model, "price_entry": c.price.model, "provider": c.price.provider,
            "encoding": c.encoding, "estimate": c.estimate,
            "input_tokens": c.input_tokens, "cached_tokens": c.cached_tokens, "output_tokens": c.output_tokens,
            "input_cost": money(c.input_cost), "cached_cost": money(c.cached_cost),
            "output_cost": money(c.output_cost), "total_cost": money(c.total),
            "max_input_tokens": c.price.max_input_tokens, "max_output_tokens": c.price.max_output_tokens,
            "fits": c.fits,
        } for model, c in zip(models, costs)],
    }


@main.group()
def prices():
    """The price list `bytepair cost` uses: where it is from, how old, and updating it.

    \b
    Examples:
      bytepair prices info
      bytepair prices update
    """


@prices.command()
@click.option("--prices", "prices_file", default=None, metavar="FILE", help="Describe this file instead.")
def info(prices_file):
    """Say which price list is in use, its date and how many models it prices.

    \b
    Example:
      bytepair prices info
    """
    p = _prices(prices_file)
    click.echo(f"{p.describe()}: {len(p.models):,} chat and completion models")


@prices.command()
@click.option("--url", default=None, help="Fetch from this URL (default: LiteLLM's file on GitHub).")
def update(url):
    """Fetch LiteLLM's current price list, check it, and keep it in the user cache, where
    `bytepair cost` then reads it. Nothing changes if the fetch or the check fails.

    \b
    Example:
      bytepair prices update && bytepair prices info
    """
    from bytepair import pricing

    try:
        target = pricing.fetch_update(url or pricing.UPDATE_URL)
        p = pricing.load_prices(target)
    except pricing.PricesError as e:
        raise UserError(str(e)) from None
    click.echo(f"wrote {target}: {p.describe()}, {len(p.models):,} models")
