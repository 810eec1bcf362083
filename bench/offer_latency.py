#!/usr/bin/env python3
"""Offer-to-launch latency on the embedded Mesos master: the time from ACCEPT(LAUNCH) to the
framework receiving TASK_RUNNING, through the real pymesos scheduler and executor drivers (the
executor is the conformance suite's minimal one, so this measures the Mesos path, not Docker).

One command: ``.venv/bin/python bench/offer_latency.py [--launches 20]``; prints the median.
"""
import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from pymesos import MesosSchedulerDriver, Scheduler

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.integration.mesos.conftest import EXECUTOR  # noqa: E402
from tests.support.embedded_master import embedded_master  # noqa: E402


class Timer(Scheduler):
    def __init__(self, launches: int):
        self.remaining, self.sent, self.latencies, self.done = launches, {}, [], threading.Event()

    def resourceOffers(self, driver, offers):  # noqa: N802
        for offer in offers:
            if self.remaining <= 0:
                driver.declineOffer([offer["id"]], {"refuse_seconds": 60})
                continue
            self.remaining -= 1
            task_id = f"lat-{self.remaining}"
            cpus = next(r for r in offer["resources"] if r["name"] == "cpus")
            mem = next(r for r in offer["resources"] if r["name"] == "mem")
            task = {"name": task_id, "task_id": {"value": task_id}, "agent_id": offer["agent_id"],
                    "resources": [{**cpus, "scalar": {"value": 0.1}}, {**mem, "scalar": {"value": 32}}],
                    "executor": {"executor_id": {"value": task_id}, "command": {"value": EXECUTOR, "shell": True}}}
            self.sent[task_id] = time.perf_counter()
            driver.launchTasks([offer["id"]], [task], {"refuse_seconds": 0})

    def statusUpdate(self, driver, update):  # noqa: N802
        task_id = update["task_id"]["value"]
        if update["state"] == "TASK_RUNNING" and task_id in self.sent:
            self.latencies.append(time.perf_counter() - self.sent.pop(task_id))
            driver.killTask({"value": task_id})
            if self.remaining <= 0 and not self.sent:
                self.done.set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--launches", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spindle-bench-mesos-"))
    with embedded_master(work, SPINDLE_AGENT_CPUS="64", SPINDLE_AGENT_MEM_MB="65536") as url:
        timer = Timer(args.launches)
        driver = MesosSchedulerDriver(timer, {"user": "root", "name": "bench", "roles": ["spindle"],
                                              "capabilities": [{"type": "MULTI_ROLE"}]}, url, use_addict=True)
        driver.start()
        finished = timer.done.wait(300)
        driver.stop()
        driver.join()
    if not finished:
        raise SystemExit(f"only {len(timer.latencies)} of {args.launches} launches reached TASK_RUNNING")
    print(json.dumps({"launches": args.launches,
                      "accept_to_running_median_ms": round(statistics.median(timer.latencies) * 1000, 1),
                      "max_ms": round(max(timer.latencies) * 1000, 1)}))

if __name__ == "__main__":
    main()
