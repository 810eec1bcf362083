"""A word count of an engine cluster bound to an HDFS cluster: reads `hdfs:///<input>` (one
partition per block, tasks placed on the executors of the nodes holding each block), saves the
counts with saveAsTextFile to `hdfs:///<output>` and to the job's output (`/job/output/counts`).
The driver prints each stage's `locality: node_local=N any=M` line (stderr) and `RESULT <json>`:
input partitions, per-stage locality, the executors' nodes, the counts.

    engine_hdfs_wordcount.py INPUT_PATH OUTPUT_PATH
"""
import json
import os
import sys

from spindle_engine import Cluster, Engine, Worker

source, target = sys.argv[1], sys.argv[2]

with Engine.start():
    python = Worker(Cluster(), "python")
    lines = python.textFile(f"hdfs://{source}")
    counts = lines.flatMap(lambda line: [(w, 1) for w in line.split()]) \
        .reduceByKey(lambda a, b: a + b, 4).persist()
    counts.saveAsTextFile(f"hdfs://{target}")
    counts.saveAsTextFile("/job/output/counts")
    result = {"partitions": lines.getNumPartitions(), "locality": python.locality,
              "nodes": sorted({ex.node for ex in python.executors}),
              "webhdfs": os.environ.get("SPINDLE_HDFS_WEBHDFS"),
              "counts": dict(counts.collect())}
    print("RESULT " + json.dumps(result), flush=True)
