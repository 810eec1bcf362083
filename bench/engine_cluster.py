#!/usr/bin/env python3
"""The engine benchmarks on clusters launched by Spindle: a Spindle engine cluster vs a Spark
cluster with the same resources (2 executor/worker members × 0.75 CPU × 2 GiB × 2 hdd), side by
side in one run; the engine with executor affinity off and on; and the engine's K-Means with one
executor member killed during its 4th iteration (per-iteration times: the failing one vs the others).

One command (platform up, as root): ``.venv/bin/python bench/engine_cluster.py [--full]``
(``--full``: the engine-core issue's input sizes, see cluster_job.py; the fault run keeps its
size). The workloads
are bench/engine/cluster_job.py (pure-Python functions, the same code on both engines), run as
Spindle jobs; each job prints its own timings (computation only, after its engine started).
Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import docker
from results import machine, record

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.conftest import read_env_file  # noqa: E402
from tests.support.live_users import live_user  # noqa: E402

JOB = ROOT / "bench" / "engine" / "cluster_job.py"
KMEANS_JOB = ROOT / "tests" / "integration" / "platform" / "jobs" / "engine_kmeans.py"
KMEANS_FAULT_ARGS = ["120000", "16", "6", "30", "8"]
MEMBER = {"count": 2, "cpus": 0.75, "mem_mb": 2048, "disks": {"hdd": 2}}
ENGINE = ("engine", "1.0", {"roles": {"executor": MEMBER}})
SPARK = ("spark", "3.5", {"roles": {"master": {"cpus": 0.25}, "worker": MEMBER}})
COMMAND = ".venv/bin/python bench/engine_cluster.py"
HEADING = "## Engine vs Spark, both launched by Spindle"


def wait(client, cluster, states, timeout=600):
    deadline = time.monotonic() + timeout
    while (cluster := client.cluster(cluster))["state"] not in states:
        if time.monotonic() > deadline:
            raise SystemExit(f"cluster {cluster['id']} stuck in {cluster['state']}")
        time.sleep(0.2)
    return cluster


def launch(client, product):
    name, version, options = product
    cluster = wait(client, client.launch(name, version, options), ("RUNNING", "FAILED"))
    if cluster["state"] != "RUNNING":
        raise SystemExit(f"{name} did not start: {cluster['reason_code']}: {cluster['reason']}")
    return cluster


def destroy(client, cluster):
    client.delete(cluster)
    wait(client, cluster, ("DESTROYED",))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and any(d["free"] != d["total"] for d in client.capacity()):
        time.sleep(0.5)


def run_job(client, cluster, main, args, on_line=None):
    job = client.submit(cluster, main, args=args)
    seen = 0
    docker_client = docker.from_env()
    while (job := client.job(cluster, job["id"]))["state"] in ("PENDING", "RUNNING"):
        if on_line is not None:
            try:
                lines = docker_client.containers.get(f"spindle-job-{job['id']}").logs().decode().splitlines()
            except docker.errors.NotFound:
                lines = []
            for line in lines[seen:]:
                on_line(line)
            seen = max(seen, len(lines))
        time.sleep(0.05)
    if job["state"] != "SUCCEEDED":
        raise SystemExit(f"job {job['id']} {job['state']}: {job['message']}\n{job['stderr'][-3000:]}")
    return job["stdout"].splitlines()


def timings(lines):
    """({workload: seconds}, {workload: answer}, {workload: [seconds of each iteration]}) from a
    job's output."""
    times = {line.split()[1]: float(line.split()[2]) for line in lines if line.startswith("TIME ")}
    checks = {line.split()[1]: line.split(None, 2)[2] for line in lines if line.startswith("CHECK ")}
    iterations = {line.split()[1]: [float(t) for t in line.split()[2:]] for line in lines
                  if line.startswith("ITERS ")}
    return times, checks, iterations


def kmeans_with_a_kill(client, cluster):
    victim = next(m for m in cluster["members"] if m["role"] == "executor")
    killed = []

    def on_line(line):
        if line.startswith("ITER 2 ") and not killed:
            [container] = docker.from_env().containers.list(
                filters={"label": f"io.spindle.member={victim['member_id']}"})
            container.kill()
            killed.append(time.monotonic())

    lines = run_job(client, cluster, KMEANS_JOB, KMEANS_FAULT_ARGS, on_line)
    result = json.loads(next(line for line in lines if line.startswith("RESULT "))[7:])
    return result["times"], result["metrics"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--full", action="store_true", help="the engine-core issue's input sizes")
    args = parser.parse_args()
    size = f"size={'full' if args.full else 'small'}"
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    with live_user(env["SPINDLE_DATABASE_URL"], "bench") as client:
        cluster = launch(client, ENGINE)
        try:
            engine, engine_checks, engine_iterations = timings(
                run_job(client, cluster, JOB, ["spindle", "affinity=false", size]))
            pinned, _, _ = timings(run_job(client, cluster, JOB, ["spindle", "affinity=true", size]))
            fault_times, fault_metrics = kmeans_with_a_kill(client, cluster)
        finally:
            destroy(client, cluster)
        cluster = launch(client, SPARK)
        try:
            spark, spark_checks, spark_iterations = timings(run_job(client, cluster, JOB, ["spark", size]))
        finally:
            destroy(client, cluster)
    report(engine, pinned, spark, engine_checks, spark_checks, fault_times, fault_metrics,
           {"engine": engine_iterations, "Spark": spark_iterations}, args.no_record,
           " (full size)" if args.full else "", COMMAND + (" --full" if args.full else ""))


def flatness(iterations, workload):
    """' (iteration n ÷ 2nd: engine r, Spark r)': whether the last iteration costs the second's."""
    runs = {who: each for who, by_workload in iterations.items()
            if len(each := by_workload.get(workload, [])) >= 2}
    if not runs:
        return ""
    n = max(len(each) for each in runs.values())
    return f" (iteration {n} ÷ 2nd: {', '.join(f'{who} {e[-1] / e[1]:.2f}' for who, e in runs.items())})"


def report(engine, pinned, spark, engine_checks, spark_checks, fault_times, fault_metrics, iterations,
           no_record, label, command):
    result = {"engine_s": engine, "engine_affinity_s": pinned, "spark_s": spark, "iterations_s": iterations,
              "same_answers": {w: engine_checks.get(w) == spark_checks.get(w) for w in engine},
              "kmeans_fault_iteration_s": fault_times, "fault_metrics": fault_metrics}
    print(json.dumps(result, indent=1))
    if no_record:
        return
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
    for w in engine:
        record(HEADING, "| measured (UTC) | workload | Spindle engine | Spark 3.5 | Spark ÷ engine | "
                        "engine, affinity on | same answer | machine | command |\n"
                        "|---|---|---|---|---|---|---|---|---|\n",
               f"| {when} | {w}{label}{flatness(iterations, w)} | {engine[w]:.2f} s | {spark[w]:.2f} s | "
               f"**{spark[w] / engine[w]:.2f}×** | "
               f"{pinned[w]:.2f} s ({engine[w] / pinned[w]:.2f}× vs off) | "
               f"{'yes' if engine_checks.get(w) == spark_checks.get(w) else 'NO'} | {machine()} | `{command}` |")
    others = fault_times[:3] + fault_times[4:]
    normal = statistics.median(others)
    record(HEADING + " — fault", "| measured (UTC) | K-Means iteration times, s (member killed during "
                                 "the 4th) | failing iteration ÷ median of the others | "
                                 "executors lost | machine | command |\n|---|---|---|---|---|---|\n",
           f"| {when} | {' · '.join(f'{t:.2f}' for t in fault_times)} | **{fault_times[3] / normal:.1f}×** | "
           f"{fault_metrics.get('executors_lost')} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
