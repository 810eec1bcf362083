#!/usr/bin/env python3
"""Disk allocation throughput of disk-service against real PostgreSQL.

One command: ``.venv/bin/python bench/disk_allocation.py``. It creates a fresh database on the
platform's PostgreSQL (``/var/lib/spindle/spindle.env``), migrates it, fills the inventory with
1,000 nodes × 12 disks (8 hdd + 4 ssd), then measures allocations/s
  * over HTTP: the real service (uvicorn, its own process) and N parallel clients, and
  * in-process: ``spindle_disk.allocation.allocate`` from N threads, each with its own session,
and drops the database. Each allocation asks for 1–3 disks of one class on a random node.

Then, in the same run and against the same kind of server (its own uvicorn process, loopback
HTTP), per-cluster batching: members of 2 hdd each, placed by a shuffled round-robin over the
nodes (no node runs out), allocated and released
  * one call per member (``POST /allocations``, then ``POST /allocations/release`` per owner), and
  * one call per cluster of 3 and of 20 members (``POST /allocations/batch``, then one
    ``POST /allocations/release`` with ``owners``),
reporting members/s of each; the inventory is reset (every disk free) before each mode.
``--modes batch`` runs only this comparison.
"""
import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from spindle_common.auth import internal_headers
from spindle_common.db import scratch_database, session_factory
from spindle_common.errors import ApiError
from spindle_common.migrations import upgrade
from spindle_disk import allocation

TOKEN = "bench-internal-token"
HEADERS = internal_headers(TOKEN, "bench", "service", ttl_s=24 * 3600)  # the bench's process signs for its services
DISKS_PER_NODE = {"hdd": 8, "ssd": 4}


def platform_database_url() -> str:
    env = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env"
    values = dict(line.split("=", 1) for line in env.read_text().splitlines() if "=" in line)
    return os.environ.get("SPINDLE_DATABASE_URL", values["SPINDLE_DATABASE_URL"])


def fill_inventory(url: str, nodes: int) -> None:
    """nodes × 12 free disks, inserted in bulk (with their first audit row)."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO disk.nodes (name, address, disk_root, cpus, mem_mb) "
            "SELECT 'node-' || g, '10.1.' || (g / 250) || '.' || (g % 250), '/data', 12, 65536 "
            "FROM generate_series(1, :n) g"), {"n": nodes})
        offset = 0
        for disk_class, count in DISKS_PER_NODE.items():
            conn.execute(text(
                "INSERT INTO disk.disks (node_id, device_path, serial, size_bytes, rotational, mount_point, "
                "fs_type, fs_label, disk_class) "
                "SELECT n.id, '/dev/sd' || chr(97 + :off + i), n.name || '-' || (:off + i), 2199023255552, "
                ":rota, '/data/' || (:off + i + 1), 'xfs', 'spdl-' || (:off + i + 1), :cls "
                "FROM disk.nodes n CROSS JOIN generate_series(0, :count - 1) i"),
                {"off": offset, "count": count, "rota": disk_class == "hdd", "cls": disk_class})
            offset += count
        conn.execute(text("INSERT INTO disk.disk_transitions (disk_id, from_state, to_state, actor, reason) "
                          "SELECT id, NULL, 'free', 'bench', 'discovered' FROM disk.disks"))
        conn.execute(text("ANALYZE"))
    engine.dispose()


def requests(total: int, nodes: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(total):
        disk_class = rng.choice(["hdd", "hdd", "ssd"])
        out.append({"node": f"node-{rng.randint(1, nodes)}", "disk_class": disk_class,
                    "count": rng.randint(1, 3 if disk_class == "hdd" else 2), "owner": f"bench/{seed}/{i}"})
    return out


def run_parallel(work: list[dict], clients: int, call) -> tuple[float, list[float], int]:
    """Run ``call(request)`` over ``work`` from ``clients`` threads; (seconds, latencies, successes)."""
    latencies: list[float] = []
    ok = [0]
    lock = threading.Lock()
    it = iter(work)

    def worker():
        while True:
            with lock:
                request = next(it, None)
            if request is None:
                return
            started = time.perf_counter()
            success = call(request)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                ok[0] += success

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started, latencies, ok[0]


def start_server(url: str) -> tuple[subprocess.Popen, str]:
    """The real service in its own process (no lifespan: nothing is registered in Consul)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = ("import uvicorn; from spindle_disk.main import build_app; from spindle_disk.core.config import Settings;"
            f"uvicorn.run(build_app(Settings(database_url={url!r}, internal_token={TOKEN!r})),"
            f" host='127.0.0.1', port={port}, log_level='warning', lifespan='off')")
    server = subprocess.Popen([sys.executable, "-c", code])
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{base}/health").status_code == 200:
                return server, base
        except httpx.TransportError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("disk-service did not start")


def summary(name: str, seconds: float, latencies: list[float], ok: int, clients: int) -> dict:
    latencies = sorted(latencies)
    return {"mode": name, "clients": clients, "requests": len(latencies), "allocated": ok,
            "seconds": round(seconds, 2), "allocations_per_s": round(len(latencies) / seconds, 1),
            "p50_ms": round(statistics.median(latencies) * 1000, 1),
            "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1)}


def bench_http(url: str, work: list[dict], clients: int) -> dict:
    server, base = start_server(url)
    local = threading.local()

    def call(request: dict) -> bool:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base, headers=HEADERS, timeout=60)
        response = local.client.post("/allocations", json=request)
        assert response.status_code in (201, 409), response.text
        return response.status_code == 201

    try:
        return summary("http", *run_parallel(work, clients, call), clients)
    finally:
        server.terminate()
        server.wait(10)


def bench_in_process(url: str, work: list[dict], clients: int) -> dict:
    sessions = session_factory(url)

    def call(request: dict) -> bool:
        with sessions() as session:
            try:
                allocation.allocate(session, request["node"], request["disk_class"], request["count"],
                                    request["owner"], "bench")
            except ApiError as error:  # a node can run out of a class: counted, like the HTTP 409s
                assert error.code == "INSUFFICIENT_DISKS", error.code
                return False
        return True

    return summary("in-process", *run_parallel(work, clients, call), clients)


def reset_inventory(url: str) -> None:
    """Every allocation ended and every disk free again (as if all were wiped)."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE disk.allocations SET released_at = now(), released_by = 'bench' "
                          "WHERE released_at IS NULL"))
        conn.execute(text("UPDATE disk.disks SET state = 'free', state_reason = NULL WHERE state <> 'free'"))
        conn.execute(text("ANALYZE"))
    engine.dispose()


MEMBER_DISKS = 2  # hdd disks per member


def clusters(members: int, size: int, nodes: int, seed: int) -> list[list[dict]]:
    """``members`` members of MEMBER_DISKS hdd each, in clusters of ``size``; member k goes to the
    k-th node of a shuffled round-robin, so a cluster's members are on different nodes and no node
    is asked for more hdd disks than it has (members ≤ nodes × 8 / MEMBER_DISKS)."""
    if members * MEMBER_DISKS > nodes * DISKS_PER_NODE["hdd"]:
        raise SystemExit(f"{members} members of {MEMBER_DISKS} hdd do not fit on {nodes} nodes")
    order = list(range(1, nodes + 1))
    random.Random(seed).shuffle(order)
    out = [{"owner": f"c{seed}-{k // size}/m{k % size}", "node": f"node-{order[k % nodes]}", "disk_class": "hdd",
            "count": MEMBER_DISKS} for k in range(members)]
    return [out[i:i + size] for i in range(0, members, size)]


def bench_batching(url: str, members: int, nodes: int, clients: int, sizes: list[int]) -> list[dict]:
    """Members/s of one call per member vs one call per cluster, allocation and release, same server."""
    server, base = start_server(url)
    local = threading.local()

    def http() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base, headers=HEADERS, timeout=120)
        return local.client

    def per_member_allocate(request: dict) -> bool:
        response = http().post("/allocations", json=request)
        assert response.status_code == 201, response.text
        return True

    def per_member_release(request: dict) -> bool:
        response = http().post("/allocations/release", json={"owner": request["owner"]})
        assert response.status_code == 200, response.text
        return True

    def batch_allocate(cluster: list[dict]) -> bool:
        response = http().post("/allocations/batch", json={"requests": cluster})
        assert response.status_code == 201, response.text
        assert sum(len(d) for d in response.json()["allocations"].values()) == len(cluster) * MEMBER_DISKS
        return True

    def batch_release(cluster: list[dict]) -> bool:
        response = http().post("/allocations/release", json={"owners": [r["owner"] for r in cluster]})
        assert response.status_code == 200 and len(response.json()) == len(cluster) * MEMBER_DISKS, response.text
        return True

    def measure(name: str, work: list, allocate, release, size: int) -> dict:
        reset_inventory(url)
        a_seconds, a_latencies, _ = run_parallel(work, clients, allocate)
        r_seconds, r_latencies, _ = run_parallel(work, clients, release)
        a_latencies.sort()
        r_latencies.sort()
        return {"mode": name, "members_per_call": size, "clients": clients, "members": members,
                "calls": len(work), "disks_per_member": MEMBER_DISKS,
                "allocate_s": round(a_seconds, 2), "allocate_members_per_s": round(members / a_seconds, 1),
                "allocate_call_p50_ms": round(statistics.median(a_latencies) * 1000, 1),
                "allocate_call_p99_ms": round(a_latencies[max(0, int(len(a_latencies) * 0.99) - 1)] * 1000, 1),
                "release_s": round(r_seconds, 2), "release_members_per_s": round(members / r_seconds, 1),
                "release_call_p50_ms": round(statistics.median(r_latencies) * 1000, 1)}

    try:
        results = [measure("per-member", [m for c in clusters(members, 1, nodes, 10) for m in c],
                           per_member_allocate, per_member_release, 1)]
        for size in sizes:
            results.append(measure(f"batched-{size}", clusters(members, size, nodes, 10 + size),
                                   batch_allocate, batch_release, size))
        base_rate = results[0]["allocate_members_per_s"]
        for result in results:
            result["allocate_vs_per_member"] = round(result["allocate_members_per_s"] / base_rate, 1)
        return results
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=2000, help="allocations per mode")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--modes", default="http,in-process,batch",
                        help="comma-separated: http, in-process (single allocations), batch (batching comparison)")
    parser.add_argument("--members", type=int, default=4000, help="members per batching mode (≤ nodes × 4)")
    parser.add_argument("--cluster-sizes", default="3,20", help="members per batch call")
    args = parser.parse_args()
    modes = set(args.modes.split(","))

    with scratch_database(platform_database_url(), "spindle_bench") as url:
        upgrade("spindle_disk", url)
        started = time.perf_counter()
        fill_inventory(url, args.nodes)
        print(f"inventory: {args.nodes} nodes x 12 disks in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        results = []
        if "http" in modes:
            results.append(bench_http(url, requests(args.requests, args.nodes, 1), args.clients))
        if "in-process" in modes:
            results.append(bench_in_process(url, requests(args.requests, args.nodes, 2), args.clients))
        if "batch" in modes:
            sizes = [int(n) for n in args.cluster_sizes.split(",")]
            results.extend(bench_batching(url, args.members, args.nodes, args.clients, sizes))
        for result in results:
            print(json.dumps({"nodes": args.nodes, "disks": args.nodes * 12, **result}))


if __name__ == "__main__":
    main()
