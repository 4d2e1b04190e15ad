"""`bytepair cost` and `bytepair prices`, and the price list they read (bytepair/pricing.py):
exact decimal money, the dated snapshot, stand-in encodings, the schema check and the update's
atomic write. No test touches the network."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from click.testing import CliRunner

import bytepair
from bytepair import pricing
from bytepair.cli import main
from bytepair.errors import PricesError

TEXT = "What does it cost to send this prompt to a model? " * 40


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


@pytest.fixture(autouse=True)
def no_user_cache(tmp_path, monkeypatch):
    """The bundled snapshot unless a test updates the cache (never the real user's cache)."""
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path / "cache"))


def test_bundled_snapshot_is_dated_and_exact():
    prices = pricing.load_prices()
    assert prices.date == "2026-11-25"
    assert "litellm" in prices.source and "bundled" in prices.source
    gpt4o = prices.lookup("gpt-4o")
    # The numbers are LiteLLM's text read as Decimal, not floats (2.5e-06 as a float is not
    # exactly 0.0000025).
    assert gpt4o.input_cost_per_token == Decimal("0.0000025")
    assert gpt4o.output_cost_per_token == Decimal("0.00001")
    assert gpt4o.cache_read_input_token_cost == Decimal("0.00000125")
    assert gpt4o.max_input_tokens == 128_000 and gpt4o.provider == "openai"
    assert all(m.mode in pricing.PROMPT_MODES for m in prices.models.values())


def test_trim_reproduces_the_bundled_file():
    """scripts/update_prices.py's trim is deterministic: run on its own output it gives the same
    bytes (the fields kept, their order and every number's digits)."""
    data = pricing.BUNDLED.read_bytes()
    meta = json.loads(data)[pricing.SNAPSHOT_KEY]
    assert pricing.trim(data, "bundled", date=meta["date"], source=meta["source"]) == data


def test_cost_of_one_model_is_exact_decimal():
    n = bytepair.get_encoding("o200k_base").count(TEXT)
    out = json.loads(run("cost", "--text", TEXT, "-m", "gpt-4o", "--output-tokens", 700,
                         "--cached-tokens", 1000, "--json").stdout)
    [m] = out["models"]
    want_in = n * Decimal("0.0000025")
    want_out = 700 * Decimal("0.00001")
    want_cached = 1000 * Decimal("0.00000125")
    assert m["input_tokens"] == n and m["encoding"] == "o200k_base" and m["estimate"] is False
    assert Decimal(m["input_cost"]) == want_in
    assert Decimal(m["output_cost"]) == want_out
    assert Decimal(m["cached_cost"]) == want_cached
    assert Decimal(m["total_cost"]) == want_in + want_out + want_cached
    assert m["fits"] is True
    assert out["prices"]["date"] == "2026-11-25"


def test_comparison_table_names_the_date_and_marks_estimates():
    r = run("cost", "--text", TEXT, "-m", "gpt-4o", "-m", "gpt-4", "-m", "claude-sonnet-4-5")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["model", "encoding"]
    rows = {line.split()[0]: line for line in lines[1:4]}
    assert " cl100k_base " in rows["gpt-4"] and " o200k_base " in rows["gpt-4o"]
    n = bytepair.get_encoding("cl100k_base").count(TEXT)
    assert f"{n:,}" in rows["gpt-4"] and pricing.usd(n * Decimal("0.00003")) in rows["gpt-4"]
    assert "(stand-in)" in rows["claude-sonnet-4-5"] and "~" in rows["claude-sonnet-4-5"]
    assert "2026-11-25" in lines[-1]  # every cost output names the prices' date
    assert "claude-sonnet-4-5" in r.stderr and "o200k_base as a stand-in" in r.stderr


def test_context_window(tmp_path):
    prices = tmp_path / "tiny.json"
    prices.write_text(json.dumps({
        "tiny-gpt-4o": {"mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
                        "max_input_tokens": 5, "max_output_tokens": 10, "litellm_provider": "openai"}}))
    long = json.loads(run("cost", "--text", "one two three four five six", "-m", "tiny-gpt-4o",
                          "--prices", prices, "--json").stdout)["models"][0]
    assert long["fits"] is False and long["encoding"] == "o200k_base"  # gpt-4o's prefix rule
    short = json.loads(run("cost", "--text", "one", "-m", "tiny-gpt-4o", "--prices", prices,
                           "--json").stdout)
    assert short["models"][0]["fits"] is True
    # A file with no recorded date is dated by its modification time, and says so.
    assert short["prices"]["date"].endswith("(file modified)") and short["prices"]["source"] == str(prices)
    too_much_out = run("cost", "--text", "one", "-m", "tiny-gpt-4o", "--prices", prices,
                       "--output-tokens", 11)
    assert "TOO LONG" in too_much_out.stdout


def test_bare_name_finds_the_vendors_own_entry():
    prices = pricing.load_prices()
    assert prices.lookup("gemini-2.5-pro").model in ("gemini-2.5-pro", "gemini/gemini-2.5-pro")
    assert prices.lookup("mistral-large-latest").model == "mistral/mistral-large-latest"
    assert pricing.encoding_name_for("azure/gpt-4o", prices) == ("o200k_base", False)
    assert pricing.encoding_name_for("gemini/gemini-2.5-pro", prices) == (pricing.STAND_IN_ENCODING, True)


@pytest.mark.parametrize("entry, field", [
    ({"mode": "chat", "input_cost_per_token": "0.1"}, "input_cost_per_token"),
    ({"mode": "chat", "output_cost_per_token": -1}, "output_cost_per_token"),
    ({"mode": "chat", "max_input_tokens": 1.5}, "max_input_tokens"),
    ({"mode": "chat", "litellm_provider": 3}, "litellm_provider"),
])
def test_schema_check_names_model_and_field(entry, field):
    with pytest.raises(PricesError, match=f"m1: {field}"):
        pricing.parse(json.dumps({"m1": entry}).encode(), "x.json")


def test_no_chat_model_is_not_a_price_list():
    with pytest.raises(PricesError, match="no chat or completion model"):
        pricing.parse(b'{"a": {"mode": "embedding"}}', "x.json")


def test_prices_update_writes_the_checked_trimmed_list_atomically(tmp_path, monkeypatch):
    served = {"gpt-4o": {"mode": "chat", "input_cost_per_token": 0.000005, "output_cost_per_token": 0.00002,
                         "max_input_tokens": 128000, "litellm_provider": "openai", "supports_vision": True},
              "sample_spec": {"max_input_tokens": "max input tokens, if the provider specifies it"},
              "dall-e-3": {"mode": "image_generation"}}
    monkeypatch.setattr(pricing, "_download", lambda url: json.dumps(served).encode())
    r = run("prices", "update")
    assert r.exit_code == 0, r.output
    cached = pricing.cache_path()
    assert cached.parent == tmp_path / "cache" and [p.name for p in cached.parent.iterdir()] == [cached.name]
    kept = json.loads(cached.read_text())
    assert set(kept) == {pricing.SNAPSHOT_KEY, "gpt-4o"}
    assert "supports_vision" not in kept["gpt-4o"]
    # cost now reads the update, and says so.
    out = json.loads(run("cost", "--text", "hi", "-m", "gpt-4o", "--json").stdout)
    assert out["prices"]["source"] == pricing.UPDATE_URL
    assert Decimal(out["models"][0]["input_cost"]) == Decimal("0.000005")
    assert "prices of " in run("prices", "info").stdout

    # A download that is not a price list changes nothing.
    before = cached.read_bytes()
    monkeypatch.setattr(pricing, "_download", lambda url: b"<html>rate limited</html>")
    r = run("prices", "update")
    assert r.exit_code == 1 and "not JSON" in r.stderr
    assert cached.read_bytes() == before and len(list(cached.parent.iterdir())) == 1


def test_usd_formats_exact_digits():
    assert pricing.usd(Decimal("0.0030850")) == "$0.003085"
    assert pricing.usd(Decimal("12")) == "$12.00"
    assert pricing.usd(Decimal("0")) == "$0.00"
    assert pricing.usd(Decimal("1E-7") * 3) == "$0.0000003"


def test_an_encoding_or_vocabulary_named_for_every_model(vocab_dir):
    text = "Counted with the tokenizer I name."
    n = bytepair.get_encoding("cl100k_base").count(text)
    for how in (["-e", "cl100k_base"], ["--vocab", vocab_dir / "cl100k_base.tiktoken"]):
        r = run("cost", "--text", text, "-m", "gpt-4o", "-m", "claude-sonnet-4-5", "--json", *how)
        models = json.loads(r.stdout)["models"]
        assert [m["input_tokens"] for m in models] == [n, n]
        assert not any(m["estimate"] for m in models) and "stand-in" not in r.stderr
