#!/usr/bin/env python3
"""HDFS with high availability: how soon the standby NameNode takes over and files are written again
after the active NameNode is killed, and that no acknowledged file is lost.

One command (run as root, nothing else running), on the platform ``make test`` starts (its 10 hdd and 4
ssd development disks: the cluster takes 7 hdds and 2 ssds; ``SPINDLE_DEV_DISKS=4:hdd,2:ssd,6:hdd,2:ssd
SPINDLE_AGENT_CPUS=4 ./deploy/up`` first: 4 cpus offered): ``.venv/bin/python bench/namenode_failover.py``.

A hadoop cluster as the HA test launches it on this one-node platform (``settings.ha``: two NameNodes,
each with its failover controller, three journal members, two DataNodes; replication 2) and a writer on
this machine creating one small file after another through WebHDFS (a file is acknowledged when its
DataNode answers 201), asking the NameNode it last found active first and the other one when that
fails, as an HA client does. Each round kills the active NameNode's container (a process's loss: on
one node the members share the node; a whole node's loss is ``bench/node_loss.py``'s for Kafka and
Cassandra) and measures from the kill: the other NameNode active (its JMX ``NameNodeStatus``, read
every 0.2 s), the first file acknowledged that was sent after the kill, and the longest time without
an acknowledged file. Then every acknowledged file must be there with its length, and the killed
NameNode comes back in place (its own disk and namespace) as the standby. Median of ``--rounds`` (3).

Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from results import machine, median_cell, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import read_env_file  # noqa: E402
from tests.integration.platform.cluster_checks import container_of  # noqa: E402
from tests.support.hdfs_records import FileWriter, active_and_standby, missing, state  # noqa: E402
from tests.support.live_users import live_user  # noqa: E402
from tests.support.nodes import wait_for  # noqa: E402
from tests.support.through_restarts import replaced, running_cluster  # noqa: E402

HEADING = "## HDFS NameNode failover (high availability, one node)"
TABLE_HEADER = ("| measured (UTC) | kill of the active NameNode → the standby active: median (rounds) "
                "| kill → first file acknowledged that was sent after it | longest pause in acknowledged files "
                "| acknowledged files lost | machine | command |\n|---|---|---|---|---|---|---|\n")
# As tests/integration/platform/test_hadoop_e2e.py's HA test (the NameNodes at 0.25 cpu).
LAUNCH = {"roles": {"namenode": {"cpus": 0.25, "mem_mb": 768, "disks": {"hdd": 0, "ssd": 1}},
                    "datanode": {"count": 2, "cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 2}}},
          "settings": {"replication": 2, "ha": True}, "wait_for_resources": True}


def round_of(client, cluster: dict, first: int) -> tuple[dict, float, float, float, int, int]:
    """(cluster, standby active s, first acknowledged file s, longest pause s, files lost, next file)."""
    namenodes = [m for m in cluster["members"] if m["role"] == "namenode"]
    active, standby = active_and_standby(namenodes)
    writer = FileWriter([active, standby], "/bench", first)
    writer.start()
    try:
        wait_for("files acknowledged", lambda: len(writer.acked_at) >= 20, 120)
        killed_at = time.monotonic()
        container_of(active).kill()
        took_over = wait_for("the standby active", lambda: state(standby) == "active" and time.monotonic(),
                             300, every=0.2) - killed_at
        writing = wait_for("a file sent after the kill acknowledged",
                           lambda: writer.serving_again_after(killed_at),
                           300, every=0.2)
        at = len(writer.acked_at)
        wait_for("files going on", lambda: len(writer.acked_at) >= at + 20, 120)
    finally:
        acked = writer.stop()
    pause = writer.longest_pause(killed_at)
    lost = len(missing(standby, acked))
    cluster, again = replaced(client, cluster, active["member_id"], timeout=600,
                              replacements=active["replacements"] + 1)
    assert (again["ip"], again["node"]) == (active["ip"], active["node"]), again
    assert active_and_standby([standby, again]) == (standby, again)
    return cluster, took_over, writing, pause, lost, writer.next


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    took_over, writing, pauses, lost, first = [], [], [], 0, 0
    with live_user(env["SPINDLE_DATABASE_URL"], "benchnn") as client, \
            running_cluster(client, "hadoop", "3.3", LAUNCH, timeout=900) as cluster:
        for i in range(args.rounds):
            cluster, standby, first_file, pause, missing_files, first = round_of(client, cluster, first)
            print(f"round {i + 1}: the standby active {standby:.2f} s after the kill, a file acknowledged after "
                  f"{first_file:.2f} s, longest pause {pause:.2f} s, {missing_files} acknowledged files lost",
                  flush=True)
            took_over.append(standby)
            writing.append(first_file)
            pauses.append(pause)
            lost += missing_files
    print(json.dumps({"standby_active_s": [round(x, 2) for x in took_over],
                      "first_file_s": [round(x, 2) for x in writing],
                      "longest_pause_s": [round(x, 2) for x in pauses], "lost": lost}))
    if args.no_record:
        return
    command = ".venv/bin/python bench/namenode_failover.py" + (f" --rounds {args.rounds}" if args.rounds != 3 else "")
    cells = " | ".join(median_cell(values) for values in (took_over, writing, pauses))
    record(HEADING, TABLE_HEADER,
           f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {cells} | {lost} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
