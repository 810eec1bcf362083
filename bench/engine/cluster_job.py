"""The engine benchmarks as one Spindle job, for an engine cluster or a Spark cluster launched by
Spindle with the same resources (bench/engine_cluster.py submits it to both).

  python3 cluster_job.py spindle [affinity=true|false]     (engine product: its job command)
  spark-submit ... cluster_job.py spark                     (spark product: its job command)

Pure-Python user functions (no numpy: neither image needs more than its engine), the same code
on both engines through their common Spark-like API. Prints `TIME <workload> <seconds>` per
workload (the computation only, after the engine started) and `CHECK <workload> <value>` so
both engines' answers can be compared.
"""
import hashlib
import random
import sys
import time

WORDS = [f"w{i:04d}" for i in range(5000)]
LINES = 1_000_000
KMEANS = (60_000, 16, 8, 10)  # points, dimensions, k, iterations
SORT_LINES = 1_000_000
BLOCKS, BITS = 64, 12
PARTS = 8


def line_of(i):
    return " ".join(WORDS[(i * 7919 + j * 104729) % len(WORDS)] for j in range(10))


def split_pairs(line):
    return [(w, 1) for w in line.split()]


def add(a, b):
    return a + b


def points_of(part):
    n, d, k, _ = KMEANS
    rng = random.Random(part)
    centers = [[(c * 7 + x * 3) % 11 for x in range(d)] for c in range(k)]
    return [[v + rng.gauss(0, 1) for v in centers[rng.randrange(k)]] for _ in range(n // PARTS)]


def closest(centroids):
    def assign(p):
        best, best_d = 0, float("inf")
        for j, c in enumerate(centroids):
            dist = 0.0
            for a, b in zip(p, c):
                dist += (a - b) * (a - b)
            if dist < best_d:
                best, best_d = j, dist
        return (best, (p, 1))
    return assign


def add_points(a, b):
    return ([x + y for x, y in zip(a[0], b[0])], a[1] + b[1])


def sort_line(i):
    return hashlib.md5(str(i).encode()).hexdigest() + " payload"


def identity(x):
    return x


def mine(block):
    txs = [hashlib.sha256(f"block {block} tx {i}".encode()).digest() for i in range(64)]
    while len(txs) > 1:
        txs = [hashlib.sha256(hashlib.sha256(txs[i] + txs[i + 1]).digest()).digest()
               for i in range(0, len(txs), 2)]
    header = txs[0] + block.to_bytes(4, "little")
    target = 1 << (256 - BITS)
    nonce = 0
    while int.from_bytes(hashlib.sha256(hashlib.sha256(header + nonce.to_bytes(4, "little"))
                                        .digest()).digest(), "big") >= target:
        nonce += 1
    return (block, nonce)


def timed(name, f):
    start = time.monotonic()
    value = f()
    print(f"TIME {name} {time.monotonic() - start:.3f}", flush=True)
    print(f"CHECK {name} {value}", flush=True)


def run(sc):
    timed("wordcount", lambda: len(sc.parallelize(range(LINES), PARTS).map(line_of)
                                   .flatMap(split_pairs).reduceByKey(add, PARTS).collect()))

    def kmeans():
        n, d, k, iterations = KMEANS
        points = sc.parallelize(range(PARTS), PARTS).flatMap(points_of).cache()
        centroids = points.take(k)
        for _ in range(iterations):
            sums = dict(points.map(closest(centroids)).reduceByKey(add_points, PARTS).collect())
            centroids = [[x / sums[j][1] for x in sums[j][0]] if j in sums else centroids[j]
                         for j in range(k)]
        points.unpersist()
        return round(sum(sum(c) for c in centroids), 6)
    timed("kmeans", kmeans)
    timed("sort", lambda: sc.parallelize(range(SORT_LINES), PARTS).map(sort_line)
          .sortBy(identity, True, PARTS).take(3)[0])
    timed("minebench", lambda: sum(n for _, n in sc.parallelize(range(BLOCKS), PARTS)
                                   .map(mine).collect()))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "spindle"
    if which == "spark":
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.appName("spindle-bench").getOrCreate()
        run(spark.sparkContext)
        spark.stop()
        return
    from spindle_engine import Cluster, Engine, Properties, Worker
    props = dict(a.split("=", 1) for a in sys.argv[2:])
    with Engine.start():
        run(Worker(Cluster(Properties({"executor.affinity": props.get("affinity", "false")})),
                   "python"))


if __name__ == "__main__":
    main()
