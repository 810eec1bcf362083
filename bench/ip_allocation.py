#!/usr/bin/env python3
"""Floating-IP allocation throughput and IP move latency of network-service (real PostgreSQL,
real Docker).

One command (as root, platform up): ``.venv/bin/python bench/ip_allocation.py``. On a scratch
database it creates a pool (172.31.216.0/21: 1,023 floating IPs), then
  * allocations/s: N parallel HTTP clients, one owner per request, against the real app (uvicorn);
  * move latency: an IP moved back and forth between two containers (disconnect + connect), median;
  * per-cluster batching: members/s of ``POST /allocations/batch`` (clusters of ``--cluster-size``
    members, N parallel clients), without DNS names and with one Consul-registered name per member,
    each followed by one ``POST /allocations/release`` with ``owners`` per cluster.
The pool's Docker network, the containers and the Consul names are removed afterwards.
"""
import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

import docker
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_allocation import platform_database_url, run_parallel, summary  # noqa: E402

from spindle_common.auth import internal_headers  # noqa: E402
from spindle_common.db import scratch_database  # noqa: E402
from spindle_common.migrations import upgrade  # noqa: E402
from spindle_network.core.config import Settings  # noqa: E402
from spindle_network.main import build_app  # noqa: E402
from tests.support.live_server import serve  # noqa: E402

TOKEN = "bench-internal-token"
ADMIN = internal_headers(TOKEN, "bench", "admin", ttl_s=24 * 3600)
SERVICE = internal_headers(TOKEN, "bench", "service", ttl_s=24 * 3600)
POOL = {"name": "bench", "cidr": "172.31.216.0/21"}


def bench_allocations(base: str, total: int, clients: int) -> dict:
    with httpx.Client(base_url=base, headers=SERVICE, timeout=60) as http:
        def call(owner: str) -> bool:
            return http.post("/allocations", json={"owner": owner, "pool": "bench"}).status_code == 201

        seconds, latencies, ok = run_parallel([f"owner-{i}" for i in range(total)], clients, call)
    return summary("http", seconds, latencies, ok, clients)


def bench_moves(base: str, image: str, moves: int) -> dict:
    client = docker.from_env()
    boxes = [client.containers.run(image, ["sleep", "600"], detach=True, labels={"io.spindle.owned": "true"},
                                   name=f"spindle-bench-move-{uuid.uuid4().hex[:6]}") for _ in range(2)]
    try:
        with httpx.Client(base_url=base, headers=SERVICE, timeout=60) as http:
            ip = http.post("/allocations", json={"owner": "mover", "pool": "bench"}).json()["address"]
            http.post(f"/ips/{ip}/attach", json={"container": boxes[0].name}).raise_for_status()
            latencies = []
            for i in range(moves):
                started = time.perf_counter()
                http.post(f"/ips/{ip}/move", json={"container": boxes[(i + 1) % 2].name}).raise_for_status()
                latencies.append(time.perf_counter() - started)
        return {"mode": "move", "moves": moves, "median_ms": round(statistics.median(latencies) * 1000, 1),
                "max_ms": round(max(latencies) * 1000, 1)}
    finally:
        for box in boxes:
            box.remove(force=True)
        client.close()


def bench_batches(base: str, members: int, size: int, clients: int, dns: bool) -> dict:
    """Members/s of per-cluster batches (allocate all, then release all, one call per cluster each)."""
    tag = uuid.uuid4().hex[:6]
    clusters = [[{"owner": f"b{tag}-{c}-m{i}", **({"dns_name": f"m{i}"} if dns else {})} for i in range(size)]
                for c in range(members // size)]
    with httpx.Client(base_url=base, headers=SERVICE, timeout=60) as http:
        def allocate(index: int) -> bool:
            body = {"pool": "bench", "members": clusters[index], **({"dns_service": f"b{tag}-{index}"} if dns else {})}
            response = http.post("/allocations/batch", json=body)
            assert response.status_code == 201, response.text
            return True

        def release(index: int) -> bool:
            response = http.post("/allocations/release", json={"owners": [m["owner"] for m in clusters[index]]})
            assert response.status_code == 200 and len(response.json()) == size, response.text
            return True

        work = list(range(len(clusters)))
        a_seconds, a_latencies, _ = run_parallel(work, clients, allocate)
        r_seconds, _, _ = run_parallel(work, clients, release)
    done = len(clusters) * size
    return {"mode": f"batched-{size}" + ("+dns" if dns else ""), "clients": clients, "members": done,
            "calls": len(clusters), "allocate_members_per_s": round(done / a_seconds, 1),
            "allocate_call_p50_ms": round(statistics.median(a_latencies) * 1000, 1),
            "release_members_per_s": round(done / r_seconds, 1)}


def release_all(base: str, owners: list[str]) -> None:
    with httpx.Client(base_url=base, headers=SERVICE, timeout=120) as http:
        for i in range(0, len(owners), 500):
            http.post("/allocations/release", json={"owners": owners[i:i + 500]}).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--image", default="spindle/base:bookworm")
    parser.add_argument("--members", type=int, default=1000, help="members per batching mode")
    parser.add_argument("--cluster-size", type=int, default=20)
    args = parser.parse_args()
    with scratch_database(platform_database_url(), "spindle_bench") as url:
        upgrade("spindle_network", url)
        app = build_app(Settings(database_url=url, internal_token=TOKEN))
        with serve(app) as base:
            httpx.post(f"{base}/pools", json=POOL, headers=ADMIN, timeout=60).raise_for_status()
            try:
                print(json.dumps(bench_allocations(base, args.requests, args.clients)))
                release_all(base, [f"owner-{i}" for i in range(args.requests)])
                for dns in (False, True):
                    print(json.dumps(bench_batches(base, args.members, args.cluster_size, args.clients, dns)))
                print(json.dumps(bench_moves(base, args.image, args.moves)))
            finally:
                docker.from_env().networks.get("spindle-bench").remove()


if __name__ == "__main__":
    main()
