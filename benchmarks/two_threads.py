#!/usr/bin/env python3
"""Two threads against one on batches of ~4 KB documents (issue 14, figure 3), taken apart.

For each encoding, corpus, output (`encode_ordinary_batch`: a list of lists; `..._to_numpy`:
one flat buffer) and temperature (cold: `clear_cache` before the call, so every thread's kept
piece cache is dropped, as encode.py times cold; warm: the caches kept from earlier calls), the
same batch runs on 1 and on 2 threads, alternately, `--repeat` times in one process. Each call
is timed by the wall clock, and every thread of the process by its scheduler statistics
(`/proc/self/task/*/schedstat`: nanoseconds on a CPU and nanoseconds runnable but waiting for
one), read before and after the call. So the 2/1 ratio splits into two factors:

    ratio = wall(1) / wall(2),   wall(2) = (cpu(2) + idle(2) + wait(2)) / 2

summed over the process's threads, two cores' worth of wall time: `cpu` is time encoding (or
spinning), `wait` the time our threads were runnable but another process had the core (this
machine is shared: not ours to cut), `idle` the rest, a thread blocked on the other (the end
of a batch, a wake-up, the caller's lists). `work` = cpu(1) / cpu(2) is 1.0 when the second
thread repeats nothing (a cold second thread merges the words the first one also merged);
`proj` = 2 cpu(1) / (cpu(2) + idle(2)) is the ratio with the wait taken out, what an idle
machine would show if the threads' CPU and idle time stayed as measured (an idle thread
blocked on one that was descheduled counts as idle, so under load proj reads low). CPU time of
rayon workers includes their spinning before they sleep, so spinning shows as lost `work`;
perf (`perf record -s`, per thread) tells the two apart.

Each build runs in fresh processes, `--rounds` of them, alternating builds, so two builds can
be compared on the same load: the table gives, per cell, the median over rounds of each round's
median ratio, and the factors likewise. Ids on 2 threads are checked against 1 thread's in
every process, and between builds.

    python benchmarks/two_threads.py --builds /work/ab-now/python,python --corpus-dir corpus --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import gc, hashlib, json, os, sys, threading, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import encode as bench  # the documents of encode.py
import bytepair

corpus_dir, encodings, corpora, repeat, batch_mb = Path(sys.argv[2]), sys.argv[3].split(","), sys.argv[4].split(","), int(sys.argv[5]), float(sys.argv[6])

def sched():
    # {tid: (s on a CPU, ns runnable and waiting)} of every thread of this process. The CPU
    # time from the thread's own CPU clock (Linux's clock id of a thread: ~tid << 3 | 6), which
    # the kernel brings up to date when read; schedstat's run time of a running thread lags
    # by up to a scheduler tick (4 ms here, as long as a whole batch).
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                wait = int(f.read().split()[1])
            out[tid] = (time.clock_gettime((~int(tid) << 3) | 6), wait)
        except OSError:  # a thread that ended meanwhile
            continue
    return out

me = str(threading.get_native_id())  # the calling thread: it encodes and, for lists, builds every list
results, digests = {}, {}
for name in encodings:
    enc = bytepair.get_encoding(name)
    for c in corpora:
        text = (corpus_dir / f"{c}.txt").read_text(encoding="utf-8")
        docs = bench.documents(text.encode()[: int(batch_mb * 1e6)].decode("utf-8", errors="ignore"))
        for kind in ("list", "flat"):
            call = enc.encode_ordinary_batch if kind == "list" else enc.encode_ordinary_batch_to_numpy
            got = {}
            for threads in (1, 2):
                r = call(docs, num_threads=threads)
                got[threads] = r if kind == "list" else (r[0].tolist(), r[1].tolist())
            if got[1] != got[2]:
                raise SystemExit(f"{name} {c} {kind}: 2 threads gave other ids than 1")
            digests[f"{name} {c} {kind}"] = hashlib.sha256(json.dumps(got[1]).encode()).hexdigest()
            for temp in ("cold", "warm"):
                rows = {1: [], 2: []}
                for k in range(repeat):
                    for threads in ((1, 2) if k % 2 == 0 else (2, 1)):
                        if temp == "cold":
                            enc.clear_cache()
                        gc.disable()
                        before = sched()
                        t0 = time.perf_counter()
                        out = call(docs, num_threads=threads)
                        wall = time.perf_counter() - t0
                        after = sched()
                        del out  # freed outside the clocks: the caller pays that when it drops the result
                        gc.enable()
                        cpu = wait = 0
                        caller = other = 0
                        for tid, (run, w) in after.items():
                            r0, w0 = before.get(tid, (0, 0))
                            cpu += run - r0
                            wait += (w - w0) / 1e9
                            if tid == me:
                                caller += run - r0
                            else:
                                other += run - r0
                        rows[threads].append({"wall": wall, "cpu": cpu, "wait": wait, "caller": caller, "workers": other})
                results[f"{name}|{c}|{kind}|{temp}"] = rows
print(json.dumps({"results": results, "digests": digests, "mb": batch_mb}))
"""


def child(build: Path, a) -> dict:
    env = dict(os.environ, PYTHONPATH=str(build.resolve()), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).resolve().parent), str(a.corpus_dir),
                          a.encodings, a.corpora, str(a.repeat), str(a.batch_mb)],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{build}: child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def med(xs):
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = os.environ.get("BYTEPAIR_CORPUS_DIR")
    ap.add_argument("--builds", required=True, help="comma-separated python/ dirs (PYTHONPATH of each build)")
    ap.add_argument("--corpus-dir", type=Path, default=Path(env) if env else None, required=env is None)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--corpora", default="en,code,de,zh-fortunes,uk,tr,vi")
    ap.add_argument("--batch-mb", type=float, default=1.0, help="MB of each corpus cut into ~4 KB documents")
    ap.add_argument("--repeat", type=int, default=7, help="calls per thread count per process (alternated)")
    ap.add_argument("--rounds", type=int, default=3, help="processes per build (builds alternated)")
    a = ap.parse_args()
    builds = [Path(b) for b in a.builds.split(",")]
    print(f"`{' '.join(['python'] + sys.argv)}`\n")
    print(f"load at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)\n")
    per: dict[str, list[dict]] = {str(b): [] for b in builds}
    digests = None
    for r in range(a.rounds):
        for b in (builds if r % 2 == 0 else builds[::-1]):
            got = child(b, a)
            if digests is None:
                digests = got["digests"]
            elif got["digests"] != digests:
                bad = [k for k in digests if got["digests"].get(k) != digests[k]]
                raise SystemExit(f"{b}: ids differ from the first build's on {bad}")
            per[str(b)].append(got["results"])
            print(f"round {r + 1} {b}: done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    print("Per cell: the median over rounds of each process's medians over its calls (range of ratio over rounds "
          "in brackets). ratio = wall 1t / wall 2t; proj = 2 cpu 1t / (cpu 2t + idle 2t); work = cpu 1t / cpu 2t; "
          "idle and wait as shares of 2 x wall 2t (see the module docs); pool = the pool workers' share of the "
          "2-thread CPU (the rest is the calling thread's; about half when both take part); MB/s = 1 thread, median "
          "wall.\n")
    heads = [f"{Path(b).parent.name}/{Path(b).name}" for b in builds]
    print("| encoding | corpus | output | temp | " + " | ".join(f"{h} ratio | proj | work | idle | wait | pool | MB/s" for h in heads) + " |")
    print("|---|---|---|---|" + "---|---|---|---|---|---|---|" * len(builds))
    for key in per[str(builds[0])][0]:
        enc, c, kind, temp = key.split("|")
        cells = []
        for b in builds:
            ratio, proj, work, idle, wait, pool, mbs = [], [], [], [], [], [], []
            for res in per[str(b)]:
                one, two = res[key]["1"], res[key]["2"]
                w1, w2 = med([x["wall"] for x in one]), med([x["wall"] for x in two])
                c1, c2 = med([x["cpu"] for x in one]), med([x["cpu"] for x in two])
                i2 = med([max(0.0, 2 * x["wall"] - x["cpu"] - x["wait"]) for x in two])
                ratio.append(w1 / w2)
                proj.append(2 * c1 / (c2 + i2))
                work.append(c1 / c2)
                idle.append(i2 / (2 * w2))
                wait.append(med([x["wait"] for x in two]) / (2 * w2))
                pool.append(med([x["workers"] / x["cpu"] for x in two]))
                mbs.append(a.batch_mb / w1)
            cells.append(f"{med(ratio):.2f} ({min(ratio):.2f}-{max(ratio):.2f}) | {med(proj):.2f} | {med(work):.2f} | "
                         f"{med(idle):.0%} | {med(wait):.0%} | {med(pool):.0%} | {med(mbs):.0f}")
        print(f"| {enc} | {c} | {kind} | {temp} | " + " | ".join(cells) + " |", flush=True)
    print("\nCPU ms per call, all threads (medians as above): what cold costs over warm is learning the "
          "pieces (merging each missed piece once per thread that meets it); `dup` = what 2 threads spend on it "
          "beyond what 1 thread spends, as a share of 1 thread's cold call.\n")
    print("| build | encoding | corpus | output | 1t cold | 1t warm | 2t cold | 2t warm | learning, 1t | dup |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b in builds:
        for key in per[str(b)][0]:
            enc, c, kind, temp = key.split("|")
            if temp != "cold":
                continue
            cpu = {}
            for t in ("1", "2"):
                for tp in ("cold", "warm"):
                    k = f"{enc}|{c}|{kind}|{tp}"
                    cpu[(t, tp)] = med([med([x["cpu"] for x in res[k][t]]) for res in per[str(b)]]) * 1e3
            learn1 = cpu[("1", "cold")] - cpu[("1", "warm")]
            dup = (cpu[("2", "cold")] - cpu[("2", "warm")]) - learn1
            print(f"| {Path(b).parent.name}/{Path(b).name} | {enc} | {c} | {kind} | {cpu[('1', 'cold')]:.2f} | "
                  f"{cpu[('1', 'warm')]:.2f} | {cpu[('2', 'cold')]:.2f} | {cpu[('2', 'warm')]:.2f} | "
                  f"{learn1 / cpu[('1', 'cold')]:.0%} | {dup / cpu[('1', 'cold')]:+.0%} |")
    print(f"\nload at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
