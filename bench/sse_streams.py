#!/usr/bin/env python3
"""Does a crowd of open event streams slow everyone else's requests? ``GET /me`` latency through the
public API with no stream open, then with ``--streams`` (100) live SSE streams of one user to a
cluster that waits for resources (so they stay open), in one run: p50/p95 and the ratio.

One command (platform up): ``.venv/bin/python bench/sse_streams.py``. Rows go to docs/BENCHMARKS.md
(``--no-record`` only prints)."""
import argparse
import statistics
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import STATE_DIR, read_env_file  # noqa: E402
from tests.support.live_users import API_URL, live_user  # noqa: E402

HEADING = "## Open event streams"
TABLE_HEADER = ("| measured (UTC) | `GET /me` p50 / p95, no stream | with N open SSE streams | p50 ratio | "
                "requests each | machine | command |\n|---|---|---|---|---|---|---|\n")


def latencies(headers: dict[str, str], requests: int) -> list[float]:
    times = []
    with httpx.Client(base_url=API_URL, headers=headers, timeout=30) as client:
        for _ in range(requests):
            start = time.perf_counter()
            assert client.get("/me").status_code == 200
            times.append(time.perf_counter() - start)
    return times


def p(times: list[float], q: float) -> float:
    return sorted(times)[min(len(times) - 1, int(q * len(times)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    database_url = read_env_file(STATE_DIR / "spindle.env")["SPINDLE_DATABASE_URL"]
    with live_user(database_url, "bench-sse") as user:
        headers = {"Authorization": f"Bearer {user.token}"}
        baseline = latencies(headers, args.requests)
        launched = httpx.post(f"{API_URL}/products/static-web/1.0", headers=headers, timeout=30,
                              json={"wait_for_resources": True, "roles": {"server": {"count": 5, "cpus": 4}}})
        launched.raise_for_status()
        cluster = launched.json()
        path = f"{API_URL}/clusters/{user.username}/static-web/1.0/{cluster['id']}/events?stream=true"
        opened, stop = [], threading.Event()

        def watch() -> None:
            with httpx.stream("GET", path, headers=headers, timeout=None) as response:
                if response.status_code == 200:
                    opened.append(1)
                for _ in response.iter_lines():
                    if stop.is_set():
                        return

        watchers = [threading.Thread(target=watch, daemon=True) for _ in range(args.streams)]
        try:
            for watcher in watchers:
                watcher.start()
            deadline = time.monotonic() + 60
            while len(opened) < args.streams and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(opened) == args.streams, f"only {len(opened)} streams opened"
            loaded = latencies(headers, args.requests)
        finally:
            stop.set()
            httpx.delete(f"{API_URL}/clusters/{user.username}/static-web/1.0/{cluster['id']}", headers=headers,
                         timeout=30)
            for watcher in watchers:
                watcher.join(30)
    ratio = statistics.median(loaded) / statistics.median(baseline)
    print(f"GET /me p50/p95: {p(baseline, .5):.1f}/{p(baseline, .95):.1f} ms alone, "
          f"{p(loaded, .5):.1f}/{p(loaded, .95):.1f} ms with {args.streams} streams open ({ratio:.2f}×)")
    if not args.no_record:
        command = "`.venv/bin/python bench/sse_streams.py" + (f" --streams {args.streams}" if args.streams != 100
                                                                else "") + "`"
        record(HEADING, TABLE_HEADER,
               f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {p(baseline, .5):.1f} / {p(baseline, .95):.1f} ms "
               f"| {args.streams}: {p(loaded, .5):.1f} / {p(loaded, .95):.1f} ms | **{ratio:.2f}×** "
               f"| {args.requests} | {machine()} | {command} |")


if __name__ == "__main__":
    main()
