#!/usr/bin/env python3
"""Issue 24's loop, iteration by iteration, in local mode and in cluster mode on this machine:

    nxt = cur.reduceByKey(min).union(cur).reduceByKey(min).cache(); nxt.count(); cur = nxt

over 20,000 pairs in 4 partitions. Cluster mode runs two engine agents on 127.0.0.1 (each a
'host' with its own work dirs and file server) with a cluster secret, so every connection pays
the authentication handshake, as on Spindle. Prints per iteration: partitions, tasks run and
seconds. Prints only (the recorded rows are compare.py's and engine_cluster.py's).

    .venv/bin/python bench/engine/iterations.py [--iterations 20] [--mode local|cluster|both]

To compare another checkout of the engine on the same machine, put its package first:
``PYTHONPATH=<checkout>/engine/python .venv/bin/python bench/engine/iterations.py`` (the agents
run that package too).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def agents(root, secret):
    """Two agent processes of the engine package this interpreter imports; their addresses."""
    import spindle_engine
    package = os.path.dirname(os.path.dirname(spindle_engine.__file__))
    procs, addresses = [], []
    for name in ("a", "b"):
        disks = [os.path.join(root, name, d) for d in ("disk1", "disk2")]
        for d in disks:
            os.makedirs(d)
        proc = subprocess.Popen(
            [sys.executable, "-m", "spindle_engine.agent", "--bind", "127.0.0.1", "--port", "0",
             "--work", ",".join(disks), "--cores", "1"], stdout=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=package, SPINDLE_CLUSTER_SECRET=secret))
        procs.append(proc)
        addresses.append(f"127.0.0.1:{proc.stdout.readline().decode().split()[1]}")
    return procs, addresses


def loop(worker, iterations):
    cur = worker.parallelize([(i % 500, i) for i in range(20000)], 4).cache()
    cur.count()
    for k in range(iterations):
        tasks, start = worker.metrics["tasks"], time.perf_counter()
        nxt = cur.reduceByKey(min).union(cur).reduceByKey(min).cache()
        assert nxt.count() == 500
        print(f"  iteration {k + 1:2d}: {nxt.getNumPartitions():5d} partitions "
              f"{worker.metrics['tasks'] - tasks:6d} tasks {time.perf_counter() - start:8.3f} s",
              flush=True)
        cur = nxt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--mode", choices=("local", "cluster", "both"), default="both")
    args = parser.parse_args()
    import spindle_engine
    from spindle_engine import Cluster, Engine, Properties, Worker
    print(f"engine: {os.path.dirname(spindle_engine.__file__)}")
    if args.mode in ("local", "both"):
        print("local mode, 2 executors")
        with Engine.start():
            loop(Worker(Cluster(Properties({"executor.instances": 2, "executor.cores": 1})),
                        "python"), args.iterations)
    if args.mode in ("cluster", "both"):
        secret = os.urandom(32).hex()
        os.environ["SPINDLE_CLUSTER_SECRET"] = secret  # the driver's side of the handshake
        with tempfile.TemporaryDirectory() as root:
            procs, addresses = agents(root, secret)
            try:
                print(f"cluster mode, agents {', '.join(addresses)}")
                with Engine.start():
                    cluster = Cluster(Properties({"engine.mode": "cluster",
                                                  "engine.agents": ",".join(addresses)}))
                    loop(Worker(cluster, "python"), args.iterations)
            finally:
                for proc in procs:
                    proc.kill()
                    proc.wait()


if __name__ == "__main__":
    main()
