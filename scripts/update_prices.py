"""Regenerates python/bytepair/data/model_prices.json, the price snapshot `bytepair cost` uses,
from LiteLLM's price list.

The source is the copy the ``litellm`` wheel ships,
``litellm/model_prices_and_context_window_backup.json`` (same schema as the
``model_prices_and_context_window.json`` in LiteLLM's repository). Only the models that take a
prompt (modes chat, responses, completion) and the fields bytepair reads are kept (see
``bytepair.pricing.FIELDS``), and the date the snapshot was taken and where it came from are
recorded under ``bytepair_snapshot``.

    pip download litellm --no-deps -d /tmp/litellm
    unzip -o /tmp/litellm/litellm-*.whl 'litellm/model_prices_and_context_window_backup.json' -d /tmp/litellm
    python scripts/update_prices.py /tmp/litellm/litellm/model_prices_and_context_window_backup.json \\
        --source "litellm 1.110.2 wheel, model_prices_and_context_window_backup.json"
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from bytepair import pricing  # noqa: E402
from bytepair.atomic import write_atomic  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source_file", type=Path, help="LiteLLM's price list (JSON)")
    parser.add_argument("--source", required=True, help="where the file came from (recorded)")
    parser.add_argument("--date", default=datetime.date.today().isoformat(),
                        help="the day the snapshot was taken (default today)")
    parser.add_argument("-o", "--output", type=Path, default=pricing.BUNDLED)
    args = parser.parse_args()
    data = pricing.trim(args.source_file.read_bytes(), str(args.source_file), date=args.date, source=args.source)
    write_atomic(args.output, data)
    n = len(pricing.parse(data, str(args.output)).models)
    print(f"wrote {n} models to {args.output} ({len(data):,} bytes, dated {args.date})")


if __name__ == "__main__":
    main()
