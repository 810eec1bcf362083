"""A word count saved from an engine cluster's executors into the job's output: the driver runs
in its own container, the executors on the members, and `saveAsTextFile('/job/output/counts')`
(and a relative `saveAsJsonFile('output/counts-json')`, from the driver's working directory
/job) must leave the part files on the DRIVER's filesystem, where Spindle collects the job's
output. Prints `RESULT <json>`: the partitions and the hosts that computed them.
"""
import json
import os
import sys

from spindle_engine import Cluster, Engine, Worker

WORDS = [f"w{i:03d}" for i in range(200)]
LINES = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
PARTS = 4


def words_of(i):
    return " ".join(WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(10))


with Engine.start():
    text = "/tmp/words.txt"
    with open(text, "w") as f:
        f.writelines(words_of(i) + "\n" for i in range(LINES))
    python = Worker(Cluster(), "python")
    counts = python.textFile(text, 8).flatMap(lambda line: [(w, 1) for w in line.split()]) \
        .reduceByKey(lambda a, b: a + b, PARTS)
    counts.saveAsTextFile("/job/output/counts")
    counts.saveAsJsonFile("output/counts-json")
    result = {"parts": sorted(os.listdir("/job/output/counts")), "cwd": os.getcwd(),
              "hosts": sorted({ex.host for ex in python.executors})}
    print("RESULT " + json.dumps(result), flush=True)
