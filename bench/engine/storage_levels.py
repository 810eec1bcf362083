#!/usr/bin/env python3
"""Memory held by a persisted dataset at MEMORY (objects) vs RAW_MEMORY (encoded + zlib), and
the time to read it back, measured on a Python executor in local mode.

One command: ``.venv/bin/python bench/engine/storage_levels.py``. For each dataset and level, a
fresh single-executor worker persists 4 copies; the executor's resident memory growth from the
1st to the 4th copy, divided by 3, is what one copy holds (the transient memory of encoding or
decoding is paid before the 1st and reused). Reading = `count()` over a stored copy.
Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from results import machine, record  # noqa: E402

from spindle_engine import Cluster, Engine, Properties, StorageLevel, Worker  # noqa: E402

ROWS = 200_000
HEADING = "## Engine storage levels: memory held"
TABLE = ("| measured (UTC) | dataset | level | held per copy | read back (count) | MEMORY ÷ level | "
         "machine | command |\n|---|---|---|---|---|---|---|---|\n")


def clicks():
    return [(i % 1000, f"user-{i % 5000:05d} clicked item {i % 997} from page {i % 13}")
            for i in range(ROWS)]


def floats():
    rng = random.Random(3)
    return [(i, [rng.random() for _ in range(4)]) for i in range(ROWS)]


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def measure(rows, level):
    cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": 1}))
    try:
        worker = Worker(cluster, "python")
        pid = worker.executor_pids()[0]
        base = worker.parallelize(rows, 1)
        copies = [base.map(lambda r: r).persist(level) for _ in range(4)]
        copies[0].count()
        first = rss(pid)
        for c in copies[1:]:
            c.count()
        held = (rss(pid) - first) / 3
        started = time.perf_counter()
        copies[0].count()
        return held, time.perf_counter() - started
    finally:
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    with Engine.start():
        for name, rows in ((f"{ROWS:,} click-log rows (int, str)", clicks()),
                           (f"{ROWS:,} rows of (int, 4 random floats)", floats())):
            results = {level: measure(rows, level) for level in (StorageLevel.MEMORY,
                                                                 StorageLevel.RAW_MEMORY)}
            for level, (held, read) in results.items():
                ratio = results[StorageLevel.MEMORY][0] / held
                print(f"{name}: {level}: {held / 1e6:.1f} MB held, read {read:.3f} s, {ratio:.1f}×")
                if not args.no_record:
                    record(HEADING, TABLE,
                           f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {name} | {level} | "
                           f"{held / 1e6:.1f} MB | {read:.3f} s | **{ratio:.1f}×** | {machine()} | "
                           "`.venv/bin/python bench/engine/storage_levels.py` |")


if __name__ == "__main__":
    main()
