#!/usr/bin/env python3
"""HDFS write throughput per DataNode disk vs ``fio`` on the same disks, one run, and the ratio.

- **HDFS**: a hadoop 3.3 cluster launched through the REST API — NameNode 0.25 CPU on an ssd, one
  DataNode (1 CPU, 2 GiB) with ``--disks`` hdd, replication 1 — and one Spindle job (1 CPU) that
  writes ``--mb`` MiB per disk into HDFS as that many files at once (``hdfs dfs -put`` from
  ``/dev/zero``: HDFS neither compresses nor skips zeros, the client still checksums every byte).
  The DataNode spreads blocks over its disks (round robin). The time is the job's, from the first
  byte to the last ``-put`` returning, plus a ``sync`` of the disks from the host afterwards (the
  DataNode does not fsync; the page cache must not count as disk). Bytes per disk are what its
  block files hold.
- **fio**: on the same disks (the host's mounts of the DataNode's dedicated disks, while the
  cluster still holds them), one sequential buffered writer per disk at once, 64 KiB writes (HDFS's
  packet size), the same bytes per disk, ``end_fsync=1``.

One command (platform up, as root): ``.venv/bin/python bench/hdfs_write.py [--mb 1024] [--disks 2]``;
a row goes to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from live_platform import bench_user, run_job, running_hadoop  # noqa: E402

# $1 MiB per file, $2 files at once; prints the seconds from the first write to the last -put's end.
SCRIPT = """\
set -euo pipefail
mib="$1"; files="$2"
hdfs dfs -mkdir -p /bench
start=$(date +%s.%N)
for i in $(seq 1 "$files"); do
  head -c "${mib}M" /dev/zero | hdfs dfs -D dfs.replication=1 -put - "/bench/w$i" &
done
wait
end=$(date +%s.%N)
echo "WROTE $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
hdfs dfs -du -s /bench
"""
COMMAND = ".venv/bin/python bench/hdfs_write.py"
HEADING = "## HDFS write throughput per DataNode disk vs fio"


def launch_options(disks: int) -> dict:
    return {"roles": {"namenode": {"cpus": 0.25, "mem_mb": 1024, "disks": {"hdd": 0, "ssd": 1}},
                      "datanode": {"count": 1, "cpus": 1.0, "mem_mb": 2048, "disks": {"hdd": disks}}},
            "settings": {"replication": 1}, "wait_for_resources": True}


def block_bytes(mount_point: str) -> int:
    """Bytes of the HDFS block files (``blk_<id>``, not their ``.meta``) under a DataNode disk."""
    return sum(p.stat().st_size for p in Path(mount_point).rglob("blk_*") if not p.name.endswith(".meta"))


def sync_seconds(mount_points: list[str]) -> float:
    start = time.monotonic()
    for mount_point in mount_points:
        subprocess.run(["sync", "-f", mount_point], check=True)
    return time.monotonic() - start


def fio_mib_s(mount_point: str, size_bytes: int) -> float:
    """One fio sequential buffered writer on ``mount_point``: MiB/s, fsync at the end included."""
    target = Path(mount_point) / "fio-bench.dat"
    try:
        out = subprocess.run(["fio", "--name=seqwrite", f"--filename={target}", "--rw=write", "--bs=64k",
                              f"--size={size_bytes}", "--ioengine=psync", "--direct=0", "--end_fsync=1",
                              "--output-format=json"], capture_output=True, text=True, check=True).stdout
        return json.loads(out)["jobs"][0]["write"]["bw"] / 1024
    finally:
        target.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=1024, help="MiB written per disk")
    parser.add_argument("--disks", type=int, default=2, help="hdd disks of the DataNode")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    with bench_user() as client, tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "hdfs_write.sh"
        script.write_text(SCRIPT)
        with running_hadoop(client, launch_options(args.disks)) as cluster:
            datanode = next(m for m in cluster["members"] if m["role"] == "datanode")
            mounts = [disk["mount_point"] for disk in datanode["disks"]]
            out = run_job(client, cluster, script, [str(args.mb), str(args.disks)])
            seconds = float(next(line.split()[1] for line in out.splitlines() if line.startswith("WROTE ")))
            seconds += sync_seconds(mounts)
            per_disk = {mount: block_bytes(mount) for mount in mounts}
            hdfs = {mount: size / 2**20 / seconds for mount, size in per_disk.items()}
            print(f"HDFS: {sum(per_disk.values()) / 2**20:.0f} MiB in {seconds:.1f} s; per disk MiB/s: "
                  + ", ".join(f"{rate:.1f}" for rate in hdfs.values()))
            with ThreadPoolExecutor(len(mounts)) as pool:
                fio = dict(zip(mounts, pool.map(lambda m: fio_mib_s(m, per_disk[m]), mounts), strict=True))
            print("fio, same disks at once, MiB/s: " + ", ".join(f"{rate:.1f}" for rate in fio.values()))
    hdfs_mean = sum(hdfs.values()) / len(hdfs)
    fio_mean = sum(fio.values()) / len(fio)
    ratio = hdfs_mean / fio_mean
    print(f"HDFS per disk {hdfs_mean:.1f} MiB/s, fio per disk {fio_mean:.1f} MiB/s, HDFS ÷ fio {ratio:.2f}×")
    if args.no_record:
        return
    command = COMMAND + (f" --mb {args.mb}" if args.mb != 1024 else "") + (
        f" --disks {args.disks}" if args.disks != 2 else "")
    header = ("| measured (UTC) | disks × MiB | HDFS per disk (each) | fio per disk (each) | HDFS ÷ fio "
              "| machine | command |\n" + "|---" * 7 + "|")
    record(HEADING, header,
           f"| {started} | {args.disks} × {args.mb} | {hdfs_mean:.1f} MiB/s "
           f"({', '.join(f'{r:.0f}' for r in hdfs.values())}) | {fio_mean:.1f} MiB/s "
           f"({', '.join(f'{r:.0f}' for r in fio.values())}) | **{ratio:.2f}×** | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
