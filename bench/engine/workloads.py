"""User functions of the engine benchmarks (word count, K-Means, Minebench, sort), written once and
used by both engines: the Spindle engine loads these classes by reference ("workloads.py:Class");
PySpark calls the same methods through lambdas. Records are plain Python values (bytes for
vectors), as each engine moves them.

K-Means: points are 500 float64s packed in bytes (like NUS-WIDE's 270,000 × 500 features); each
partition assigns its points to the nearest centroid with numpy and emits per-cluster sums.
Minebench: the seed's SHA-256 proof-of-work as two chained maps: a block's Merkle root and header
(data-intensive), then the nonce search until the header's double SHA-256 is under the target.
"""
import hashlib
import struct

import numpy as np

DIMENSIONS = 500


class KMeansPoints:
    """Partition number → its share of the points (deterministic per partition)."""

    def __init__(self, points=270_000, partitions=8):
        self.points, self.partitions = points, partitions

    def call(self, partition, context=None):
        rng = np.random.default_rng(1000 + partition)
        count = self.points // self.partitions + (partition < self.points % self.partitions)
        centres = np.random.default_rng(7).normal(0, 10, (12, DIMENSIONS))
        rows = centres[rng.integers(0, 12, count)] + rng.normal(0, 1, (count, DIMENSIONS))
        return [row.tobytes() for row in rows]


class KMeansAssign:
    """A partition of points → (cluster, (sum of its points as bytes, count)) per cluster. Made
    per iteration with that iteration's centroids (both engines ship it with the task)."""

    def __init__(self, centroids):
        self.centroids = centroids

    def call(self, points, context=None):
        block = np.frombuffer(b"".join(points), dtype=np.float64).reshape(-1, DIMENSIONS)
        if not len(block):
            return []
        # |x - c|² = |x|² - 2 x·c + |c|²: one matrix product, no 3-D temporary.
        distances = ((block ** 2).sum(axis=1)[:, None] - 2 * block @ self.centroids.T
                     + (self.centroids ** 2).sum(axis=1)[None, :])
        nearest = distances.argmin(axis=1)
        return [(int(k), (block[nearest == k].sum(axis=0).tobytes(), int((nearest == k).sum())))
                for k in np.unique(nearest)]


class KMeansMerge:
    """Two (sum, count) partials of one cluster → their sum."""

    def call(self, a, b, context=None):
        return ((np.frombuffer(a[0]) + np.frombuffer(b[0])).tobytes(), a[1] + b[1])


def new_centroids(partials, old):
    centroids = old.copy()
    for k, (total, count) in partials:
        centroids[k] = np.frombuffer(total) / count
    return centroids


class MineBlock:
    """Block number → its header (80 bytes): Merkle root of its 64 transactions + fixed fields."""

    def call(self, block, context=None):
        txs = [hashlib.sha256(f"block {block} tx {i}".encode()).digest() for i in range(64)]
        while len(txs) > 1:
            txs = [hashlib.sha256(hashlib.sha256(txs[i] + txs[i + 1]).digest()).digest()
                   for i in range(0, len(txs), 2)]
        return struct.pack("<I32s32sII", 2, b"\0" * 32, txs[0], 1_700_000_000 + block, 0x1F00FFFF)


class MineNonce:
    """A header → (nonce, hash) of the first nonce whose double SHA-256 has `bits` leading zero bits."""

    def __init__(self, bits=14):
        self.target = 1 << (256 - bits)

    def call(self, header, context=None):
        nonce = 0
        while True:
            digest = hashlib.sha256(hashlib.sha256(header + nonce.to_bytes(4, "little")).digest()).digest()
            if int.from_bytes(digest, "big") < self.target:
                return (nonce, digest.hex())
            nonce += 1


class SortKey:
    """A text line is its own sort key."""

    def call(self, line, context=None):
        return line


class WordSplit:
    """A line → (word, 1) per word (the seed's Figure 5 tokenizer)."""

    def call(self, line, context=None):
        return [(word, 1) for word in line.split()]


class WordJoin:
    """Two counts of one word → their sum."""

    def call(self, a, b, context=None):
        return a + b
