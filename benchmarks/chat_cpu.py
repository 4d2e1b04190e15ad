#!/usr/bin/env python3
"""CPU time per conversation of render_many and of the Jinja path's stages, on benchmarks/chat.py's
conversations: what a shared machine disturbs less than chat.py's wall-clock rates.

- stages, one thread (`time.thread_time`, GC paused, best of --rounds): converting a conversation
  for the core (`ChatTemplate.prepare`), rendering it into parts with and without the mask
  (`JinjaConversation.parts()`, which also builds Python lists), and the `{% generation %}`
  version;
- render_many, 1 and 2 threads: the calling thread's CPU time (`time.thread_time`) and the
  process's (`time.process_time`; the pool's threads are the difference), median of --rounds.

Run it with PYTHONPATH at each build, alternating, and compare the columns side by side.

    python benchmarks/chat_cpu.py --corpus-dir corpus --n 4000 --rounds 5
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat import CHATML, CHATML_MARKED, arguments, dataset  # noqa: E402


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    from bytepair.chat import ChatTemplate, render_many

    convs, enc = dataset(args.corpus_dir, args.n)
    template, marked = ChatTemplate(CHATML), ChatTemplate(CHATML_MARKED)
    n = len(convs)

    def best(f) -> float:
        times = []
        for _ in range(args.rounds):
            gc.disable()
            start = time.thread_time()
            f()
            times.append(time.thread_time() - start)
            gc.enable()
        return min(times) / n * 1e6

    masked = [template.prepare(enc, c) for c in convs]
    unmasked = [template.prepare(enc, c, mask=False) for c in convs]
    generation = [marked.prepare(enc, c) for c in convs]
    print(f"{n} conversations; µs of CPU per conversation\n")
    print("| Jinja ChatML stage, one thread (best of rounds) | µs |\n|---|---:|")
    for name, f in [
        ("convert (`ChatTemplate.prepare`)", lambda: [template.prepare(enc, c) for c in convs]),
        ("render to parts, with the mask", lambda: [p.parts() for p in masked]),
        ("render to parts, no mask", lambda: [p.parts() for p in unmasked]),
        ("render to parts, `{% generation %}` version", lambda: [p.parts() for p in generation]),
    ]:
        print(f"| {name} | {best(f):.1f} |")

    render_many(enc, convs[:500], template=template)  # warm-up: the pool's threads, caches
    samples: dict = {}
    for _ in range(args.rounds):
        for name, t in [("Jinja ChatML", template), ("built-in chatml", "chatml")]:
            for workers in (1, 2):
                caller, process = time.thread_time(), time.process_time()
                out = render_many(enc, convs, template=t, num_workers=workers)
                del out  # freed inside the timing, as chat.py's rows are
                caller, process = time.thread_time() - caller, time.process_time() - process
                samples.setdefault((name, workers), []).append((caller / n * 1e6, process / n * 1e6))
    print("\n| render_many (median of rounds) | calling thread | pool | all |\n|---|---:|---:|---:|")
    for (name, workers), v in samples.items():
        caller = statistics.median(c for c, _ in v)
        total = statistics.median(p for _, p in v)
        print(f"| {name}, {workers} thread{'s' if workers > 1 else ''} | {caller:.1f} | {total - caller:.1f} | {total:.1f} |")


if __name__ == "__main__":
    main()
