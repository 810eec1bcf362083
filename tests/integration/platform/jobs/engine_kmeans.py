"""K-Means with Python functions as a Spindle job on an engine cluster.

Deterministic data (seeded per partition) and initial centroids, so every run, disturbed or not,
computes the same centroids. Prints `ITER <i> <seconds>` per iteration as it goes (a test can
kill a member meanwhile) and `RESULT <json>` at the end (centroids, iteration times, metrics).
Arguments: points, dimensions, k, iterations, partitions.
"""
import json
import random
import sys
import time

from spindle_engine import Cluster, Engine, Properties, Worker

DEFAULTS = [40000, 16, 6, 8, 8]
N, D, K, ITERATIONS, PARTS = [int(a) for a in sys.argv[1:6]] + DEFAULTS[len(sys.argv[1:6]):]


def points_of(part):
    rng = random.Random(part)
    per = N // PARTS
    centers = [[(c * 7 + d * 3) % 11 for d in range(D)] for c in range(K)]
    for i in range(per):
        c = centers[(part * per + i) % K]
        yield [x + rng.gauss(0, 1) for x in c]


def initial():
    return [list(p) for p in list(points_of(0))[:K]]


def closest(centroids):
    def assign(p):
        best, best_d = 0, float("inf")
        for j, c in enumerate(centroids):
            d = 0.0
            for a, b in zip(p, c, strict=True):  # a point and a centroid: D coordinates each
                d += (a - b) * (a - b)
            if d < best_d:
                best, best_d = j, d
        return (best, (p, 1))
    return assign


def add(a, b):
    return ([x + y for x, y in zip(a[0], b[0], strict=True)], a[1] + b[1])


def kmeans(points, iterations, report=print):
    centroids = initial()
    times = []
    for it in range(iterations):
        start = time.monotonic()
        sums = dict(points.map(closest(centroids)).reduceByKey(add, PARTS).collect())
        centroids = [[x / sums[j][1] for x in sums[j][0]] if j in sums else centroids[j]
                     for j in range(K)]
        times.append(time.monotonic() - start)
        report(f"ITER {it} {times[-1]:.3f}")
    return centroids, times


if __name__ == "__main__":
    with Engine.start():
        cluster = Cluster(Properties({"task.max_failures": "6"}))
        python = Worker(cluster, "python")
        points = python.parallelize(range(PARTS), PARTS).flatMap(points_of).cache()
        assert points.count() == N // PARTS * PARTS
        centroids, times = kmeans(points, ITERATIONS, lambda line: print(line, flush=True))
        print("RESULT " + json.dumps({"centroids": centroids, "times": times,
                                      "metrics": python.metrics,
                                      "down": [ex.name for ex in python.executors if ex.down]}),
              flush=True)
