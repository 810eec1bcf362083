"""The seed's Figure 5 as a Spindle job on an engine cluster: a Python worker tokenizes, the
dataset is handed over with importData, and a C++ worker (its function compiled here, in the
driver, against the engine's header-only API) reduces the counts.

The same counts by a groupByKey (no map-side combining) make the shuffle spill. A parallelize
larger than a container's /dev/shm checks where the driver keeps its files.
Prints `RESULT <json>`: the counts, the shuffle and spill files each executor member found on
its /data/* disks while the job ran, and the workers' metrics. Writes the counts to
/job/output/counts.json.
"""
import glob
import json
import os
import socket
import subprocess
import sys

from spindle_engine import Cluster, Engine, Properties, Worker

WORDS = [f"w{i:03d}" for i in range(200)]
LINES = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
BIG = 9_000_000  # records of a parallelize: ≈ 80 MB encoded


def words_of(i):
    return " ".join(WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(10))


def disk_files(_):
    """What this executor's member holds on its dedicated disks (run on the executors)."""
    found = []
    for path in glob.glob("/data/*/spindle-engine/*/**/*.bin", recursive=True):
        found.append(f"{socket.gethostname()}:{path}")
    return found


def compile_reducer():
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wordcount.cpp")
    out_dir = "/tmp/spindle-functions"
    os.makedirs(out_dir, exist_ok=True)
    lib = os.path.join(out_dir, "libwordcount.so")
    subprocess.run(["g++", "-O2", "-std=c++17", "-shared", "-fPIC",
                    "-I", os.environ["SPINDLE_ENGINE_INCLUDE"], src, "-o", lib], check=True)
    return lib


with Engine.start():
    lib = compile_reducer()
    text = "/tmp/words.txt"
    with open(text, "w") as f:
        f.writelines(words_of(i) + "\n" for i in range(LINES))
    # small executor memory: the shuffle spills to the members' disks
    cluster = Cluster(Properties({"executor.memory": "2MB"}))
    python = Worker(cluster, "python")
    cpp = Worker(cluster, "cpp")
    pairs = python.textFile(text, 8).flatMap(lambda line: [(w, 1) for w in line.split()])
    counts = dict(cpp.importData(pairs).reduceByKey(f"{lib}:Join", 8).collect())
    # no map-side combining here: 10 values per line cross the shuffle and spill over 2MB
    grouped = dict(pairs.groupByKey(8).mapValues(len).collect())
    assert grouped == counts, "groupByKey and the C++ reduceByKey disagree"
    files = sorted(set(python.parallelize(range(8), 8).mapPartitions(disk_files).collect()))
    # the driver's own files outgrow a container's 64 MB /dev/shm (the job sets /tmp instead)
    big = python.parallelize(range(BIG), 8).filter(lambda x: x % 3 == 0).count()
    result = {"counts": counts, "files": files, "big_count": big, "driver_dir": cluster.shm_dir,
              "metrics": {"python": python.metrics, "cpp": cpp.metrics},
              "hosts": sorted({ex.host for ex in python.executors})}
    print("RESULT " + json.dumps(result), flush=True)
    with open("/job/output/counts.json", "w") as out:
        json.dump(counts, out)
