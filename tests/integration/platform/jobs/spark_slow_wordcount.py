"""A word count slow enough to outlive a resize of its cluster: LINES generated lines in PARTITIONS
partitions, each task sleeping SLEEP seconds, so the application keeps asking for cores while workers
come and go. Prints one JSON line: the counts, and the workers (their hostnames) whose executors ran
tasks of it."""
import json
import socket
import sys
import time

from pyspark.sql import SparkSession

WORDS = [f"w{i:03d}" for i in range(200)]
LINES, PARTITIONS, SLEEP = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])


def words_of(i):
    # As spark_wordcount.py: line i holds 10 words; word j of it is WORDS[(i * 7 + j * 13) % 200].
    return [WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(10)]


def slow(rows):
    time.sleep(SLEEP)
    return [(socket.gethostname(), list(rows))]


spark = SparkSession.builder.appName("spindle-slow-wordcount").getOrCreate()
sc = spark.sparkContext
ran = sc.parallelize(range(LINES), PARTITIONS).mapPartitions(slow).cache()
hosts = sorted(set(ran.map(lambda part: part[0]).collect()))
counts = dict(ran.flatMap(lambda part: part[1]).flatMap(words_of).map(lambda w: (w, 1))
              .reduceByKey(lambda a, b: a + b, 8).collect())
print("RESULT " + json.dumps({"counts": counts, "hosts": hosts}))
spark.stop()
