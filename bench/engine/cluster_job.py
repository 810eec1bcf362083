"""The engine benchmarks as one Spindle job, for an engine cluster or a Spark cluster launched by
Spindle with the same resources (bench/engine_cluster.py submits it to both).

  python3 cluster_job.py spindle [affinity=true|false] [size=small|full]   (engine product)
  spark-submit ... cluster_job.py spark [size=small|full]                  (spark product)

Sizes: `small` (default) is a quick run; `full` is the engine-core issue's inputs where pure
Python allows: word count of ≈ 500 MB of text, a sort of ≈ 1 GB of 100-byte lines and Minebench
with 2,000 blocks at 14 bits (all generated in the workers); K-Means keeps 16 dimensions (pure
Python: 500 would take minutes per iteration) with 270,000 points. Two iterative workloads keep
their size in both (issue 24: what they measure is whether an iteration costs the same at the
20th as at the 2nd): `iterative` — `nxt = cur.reduceByKey(min).union(cur).reduceByKey(min)
.cache(); nxt.count()`, 20 times over 20,000 pairs — and `pagerank`, 10 iterations over a
generated graph of 20,000 vertices × 5 links (links cached, ranks joined and reduced each time).

Pure-Python user functions (no numpy: neither image needs more than its engine), the same code
on both engines through their common Spark-like API. Prints `TIME <workload> <seconds>` per
workload (the computation only, after the engine started), `ITERS <workload> <s> <s> ...` with
each iteration's seconds, and `CHECK <workload> <value>` so both engines' answers can be compared.
"""
import hashlib
import random
import sys
import time

WORDS = [f"w{i:04d}" for i in range(5000)]
SIZES = {  # lines of ≈ 59 bytes; K-Means points, dimensions, k, iterations; 100-byte lines; blocks, bits
    "small": {"lines": 1_000_000, "kmeans": (60_000, 16, 8, 10), "sort_lines": 1_000_000, "mine": (64, 12)},
    "full": {"lines": 8_500_000, "kmeans": (270_000, 16, 12, 10), "sort_lines": 10_000_000,
             "mine": (2_000, 14)},
}
PARTS = 8
# affinity=…, size=… (other words ignored: compare.py imports this module for its iterative rows)
ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
_SIZE = SIZES[ARGS.get("size", "small")]
LINES, KMEANS, SORT_LINES, (BLOCKS, BITS) = _SIZE["lines"], _SIZE["kmeans"], _SIZE["sort_lines"], _SIZE["mine"]
ITERATIVE = (20_000, 500, 20)  # pairs, keys, iterations
PAGERANK = (20_000, 5, 10)  # vertices, links per vertex, iterations


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
            for a, b in zip(p, c, strict=False):
                dist += (a - b) * (a - b)
            if dist < best_d:
                best, best_d = j, dist
        return (best, (p, 1))
    return assign


def add_points(a, b):
    return ([x + y for x, y in zip(a[0], b[0], strict=False)], a[1] + b[1])


def sort_line(i):
    return hashlib.md5(str(i).encode()).hexdigest() + f" {i:012d} " + "x" * 54  # 100 bytes


def identity(x):
    return x


def count_and_first(lines):
    count, first = 0, None
    for line in lines:
        if count == 0:
            first = line
        count += 1
    return [(count, first)]


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


def key_pair(i):
    return (i % ITERATIVE[1], i)


def links_of(v):
    n, per, _ = PAGERANK
    # skewed in-degrees (x² / n favours small ids), so ranks differ and the top ones tell
    return [(v, ((v * 7919 + j * 104729) % n) ** 2 // n) for j in range(per)]


def one(_):
    return 1.0


def contributions(kv):
    _, (urls, rank) = kv
    urls = list(urls)  # Spark's groupByKey gives an iterable, the engine's a list
    return [(u, rank / len(urls)) for u in urls]


def damp(rank):
    return 0.15 + 0.85 * rank


def iterative(sc, each):
    """The issue-24 loop; `each(seconds)` per iteration. Returns the keys' minima's sum."""
    pairs, _, iterations = ITERATIVE
    cur = sc.parallelize(range(pairs), 4).map(key_pair).cache()
    cur.count()
    for _ in range(iterations):
        start = time.monotonic()
        nxt = cur.reduceByKey(min).union(cur).reduceByKey(min).cache()
        nxt.count()
        cur = nxt
        each(time.monotonic() - start)
    return sum(v for _, v in cur.collect())


def pagerank(sc, each):
    """PageRank as in Spark's example; `each(seconds)` per iteration. Returns the ranks' sum
    (4 decimals: the engines add floats in different orders) and the 3 highest ranked."""
    n, _, iterations = PAGERANK
    links = sc.parallelize(range(n), PARTS).flatMap(links_of).groupByKey(PARTS).cache()
    ranks = links.mapValues(one)
    for _ in range(iterations):
        start = time.monotonic()
        ranks = links.join(ranks, PARTS).flatMap(contributions).reduceByKey(add, PARTS).mapValues(damp)
        ranks.count()  # each iteration computed on its own, as the loop above
        each(time.monotonic() - start)
    ranked = ranks.collect()
    top = sorted(ranked, key=lambda kv: (-kv[1], kv[0]))[:3]
    return (round(sum(r for _, r in ranked), 4), [v for v, _ in top])


def timed_iterations(name, f, sc):
    times = []
    timed(name, lambda: f(sc, times.append))
    print(f"ITERS {name} " + " ".join(f"{t:.3f}" for t in times), flush=True)


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
    def sort():  # every output partition merged; checked: all lines, partitions in order
        heads = (sc.parallelize(range(SORT_LINES), PARTS).map(sort_line).sortBy(identity, True, PARTS)
                 .mapPartitions(count_and_first).collect())
        firsts = [first for _, first in heads if first is not None]
        return (sum(n for n, _ in heads), firsts == sorted(firsts), firsts[0])
    timed("sort", sort)
    timed("minebench", lambda: sum(n for _, n in sc.parallelize(range(BLOCKS), PARTS)
                                   .map(mine).collect()))
    timed_iterations("iterative", iterative, sc)
    timed_iterations("pagerank", pagerank, sc)


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "spindle"
    if which == "spark":
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.appName("spindle-bench").getOrCreate()
        run(spark.sparkContext)
        spark.stop()
        return
    from spindle_engine import Cluster, Engine, Properties, Worker
    with Engine.start():
        run(Worker(Cluster(Properties({"executor.affinity": ARGS.get("affinity", "false")})),
                   "python"))


if __name__ == "__main__":
    main()
