#!/usr/bin/env python3
"""TeraSort of 1 GB (Hadoop 3.3.6's examples jar) on a Spindle hadoop cluster with YARN vs the same
jars on one host's disk with the same cores, median of runs, and the ratio.

- **Spindle**: a hadoop 3.3 cluster launched through the REST API — NameNode 0.25 CPU (its disk an
  ssd), 2 DataNodes × 0.5 CPU × 2 GiB × 2 hdd (each running a NodeManager; the development host has
  6 dedicated disks), a ResourceManager 0.25 CPU, replication 1
  (TeraSort writes its output with 1 replica anyway) — and one Spindle job that runs TeraGen once,
  then TeraSort ``--runs`` times (MapReduce on YARN, 512 MB containers), then TeraValidate.
- **One host**: the same image in one ``docker run`` with the DataNodes' CPUs (``--cpus 1``) and
  memory, MapReduce's LocalJobRunner (as many maps and reduces at once as YARN could run) on
  ``file://`` paths in a folder of the host's disk, the same input size, splits (128 MB) and
  reduces.

Each side times its own TeraSorts inside its container (``date`` around ``hadoop jar``: JVM starts
and job submission included). One command (platform up, as root):
``.venv/bin/python bench/terasort.py [--gb 1] [--runs 3]``; a row goes to docs/BENCHMARKS.md
(``--no-record`` only prints).
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import docker
from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from live_platform import bench_user, run_job, running_hadoop  # noqa: E402

from spindle_common.images import wait_ready  # noqa: E402

IMAGE = "spindle/hadoop:3.3"
DATANODES, DN_CPUS, DN_MEM_MB = 2, 0.5, 2048
CONTAINER_MB = 512
REDUCES = 3
SPLIT = 128 << 20
LAUNCH = {
    "roles": {"namenode": {"cpus": 0.25, "mem_mb": 1024, "disks": {"hdd": 0, "ssd": 1}},
              "datanode": {"count": DATANODES, "cpus": DN_CPUS, "mem_mb": DN_MEM_MB, "disks": {"hdd": 2}},
              "resourcemanager": {"count": 1, "cpus": 0.25, "mem_mb": 1024}},
    "settings": {"replication": 1, "container_mb": CONTAINER_MB},
    "wait_for_resources": True,
}
# What both sides run: $1 rows, $2 runs, $3 where the data goes, then options for every job.
SCRIPT = """\
set -euo pipefail
rows="$1"; runs="$2"; base="$3"; shift 3
examples=/opt/hadoop/lib/hadoop-mapreduce-examples-3.3.6.jar
now() { date +%s.%N; }
hadoop jar "$examples" teragen "$@" -Dmapreduce.job.maps=3 "$rows" "$base/in"
for run in $(seq 1 "$runs"); do
  mkdir -p "/tmp/run$run" && cd "/tmp/run$run"  # the LocalJobRunner links _partition.lst into the cwd
  start=$(now)
  hadoop jar "$examples" terasort "$@" "$base/in" "$base/out$run"
  echo "TERASORT $run $(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')"
done
hadoop jar "$examples" teravalidate "$@" "$base/out1" "$base/report"
echo "REPORT $(hadoop fs -cat "$base/report/part-r-00000" | tr '\\t\\n' ' ;')"
"""
COMMAND = ".venv/bin/python bench/terasort.py"
HEADING = "## TeraSort: Spindle's HDFS + YARN vs one host"


def parse(output: str) -> tuple[list[float], str]:
    times = [float(m.group(1)) for m in re.finditer(r"^TERASORT \d+ ([0-9.]+)$", output, re.MULTILINE)]
    report = re.search(r"^REPORT (.*)$", output, re.MULTILINE)
    return times, report.group(1).strip() if report else ""


def run_on_spindle(client, rows: int, runs: int, script: Path) -> tuple[list[float], str]:
    with running_hadoop(client, LAUNCH) as cluster:
        time.sleep(30)  # the NodeManagers register with the ResourceManager after the members are up
        return parse(run_job(client, cluster, script, [str(rows), str(runs), "/bench",
                                                       f"-Dmapreduce.job.reduces={REDUCES}"]))


def run_on_one_host(rows: int, runs: int, script: Path) -> tuple[list[float], str]:
    """The same image and script in one container with the DataNodes' CPUs and memory, on a folder of
    the host's disk (/var/tmp), MapReduce's LocalJobRunner."""
    work = Path(tempfile.mkdtemp(prefix="spindle-terasort-", dir="/var/tmp"))
    try:
        shutil.copy(script, work / "terasort.sh")
        (work / "conf").mkdir()
        (work / "conf" / "core-site.xml").write_text(
            '<?xml version="1.0"?>\n<configuration>\n  <property><name>fs.defaultFS</name><value>file:///</value>'
            '</property>\n</configuration>\n')
        os.chown(work, 65534, 65534)
        slots = DATANODES * ((DN_MEM_MB - 1024) // CONTAINER_MB)
        options = [f"-Dmapreduce.job.reduces={REDUCES}", "-Dmapreduce.framework.name=local",
                   f"-Dmapreduce.local.map.tasks.maximum={slots}", f"-Dmapreduce.local.reduce.tasks.maximum={slots}",
                   f"-Dmapreduce.input.fileinputformat.split.minsize={SPLIT}", "-Dhadoop.tmp.dir=/work/tmp",
                   "-Dmapreduce.cluster.local.dir=/work/local", "-Dfs.defaultFS=file:///"]
        wait_ready(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")), IMAGE)  # (a first up builds it late)
        output = docker.from_env().containers.run(
            IMAGE, ["bash", "/work/terasort.sh", str(rows), str(runs), "file:///work/data", *options],
            entrypoint=[], user="65534:65534", read_only=True, tmpfs={"/tmp": "size=256m,exec"},
            environment={"HADOOP_CONF_DIR": "/work/conf", "HADOOP_HEAPSIZE_MAX": f"{DATANODES * DN_MEM_MB - 1024}m"},
            volumes={str(work): {"bind": "/work", "mode": "rw"}}, nano_cpus=int(DATANODES * DN_CPUS * 1e9),
            mem_limit=f"{DATANODES * DN_MEM_MB}m", network_mode="none", remove=True, stdout=True, stderr=False,
            labels={"io.spindle.owned": "true"})
        return parse(output.decode())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gb", type=float, default=1.0, help="TeraGen's size in GB (10^9 bytes)")
    parser.add_argument("--runs", type=int, default=3, help="TeraSorts on each side (median)")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    rows = int(args.gb * 1e9 / 100)
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "terasort.sh"
        script.write_text(SCRIPT)
        started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
        host_times, host_report = run_on_one_host(rows, args.runs, script)
        print(f"one host: TeraSort {host_times} s, TeraValidate: {host_report}")
        with bench_user() as client:
            spindle_times, spindle_report = run_on_spindle(client, rows, args.runs, script)
        print(f"Spindle: TeraSort {spindle_times} s, TeraValidate: {spindle_report}")
    if len(host_times) != args.runs or len(spindle_times) != args.runs:
        raise SystemExit("a side did not report all its runs")
    valid = all(r.startswith("checksum ") and "misorder" not in r for r in (host_report, spindle_report))
    same = host_report == spindle_report
    spindle, host = statistics.median(spindle_times), statistics.median(host_times)
    ratio = spindle / host
    print(f"median TeraSort of {args.gb:g} GB: Spindle {spindle:.1f} s, one host {host:.1f} s, "
          f"Spindle ÷ one host {ratio:.2f}×; sorted: {valid}, same checksum: {same}")
    if args.no_record:
        return
    command = COMMAND + (f" --gb {args.gb:g}" if args.gb != 1 else "")
    command += f" --runs {args.runs}" if args.runs != 3 else ""
    header = ("| measured (UTC) | size | runs | Spindle (HDFS + YARN), median | one host (LocalJobRunner), median "
              "| Spindle ÷ one host | valid, same checksum | machine | command |\n" + "|---" * 9 + "|")
    record(HEADING, header,
           f"| {started} | {args.gb:g} GB | {args.runs} | {spindle:.1f} s | {host:.1f} s | **{ratio:.2f}×** | "
           f"{'yes' if valid else 'NO'}, {'yes' if same else 'no'} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
