"""A shuffle-heavy word count on generated data, submitted as a Spindle job to a Spark cluster.

Prints one JSON line: the counts, and the shuffle files each executor found on its /data/* disks
while the application was alive (they are removed when it ends); writes the counts to
/job/output/counts.json too (a job's downloadable output).
"""
import json
import os
import socket
import sys
import time

from pyspark.sql import SparkSession

WORDS = [f"w{i:03d}" for i in range(200)]
LINES = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000


def words_of(i):
    # Deterministic: line i holds 10 words; word j of it is WORDS[(i * 7 + j * 13) % 200].
    return [WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(10)]


def shuffle_files(_):
    time.sleep(0.3)  # long enough tasks that every executor takes some
    found = []
    for root in sorted(d for d in os.listdir("/data") if d.isdigit()):
        for folder, _dirs, files in os.walk(f"/data/{root}"):
            found += [f"{socket.gethostname()}:{folder}/{f}" for f in files if f.startswith("shuffle_")]
    return found


spark = SparkSession.builder.appName("spindle-wordcount").getOrCreate()
sc = spark.sparkContext
counts = dict(sc.parallelize(range(LINES), 16).flatMap(words_of).map(lambda w: (w, 1))
              .reduceByKey(lambda a, b: a + b, 24).collect())
files = sorted(set(sc.parallelize(range(32), 32).mapPartitions(shuffle_files).collect()))
print("RESULT " + json.dumps({"counts": counts, "shuffle_files": files}))
if os.path.isdir("/job/output"):
    with open("/job/output/counts.json", "w") as out:
        json.dump(counts, out)
spark.stop()
