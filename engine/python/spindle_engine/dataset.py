"""Datasets: lazy lineage with PySpark RDD names; actions run through the backend planner."""

import bisect
import os
import random

from .backend.plan import Shuffle, Storage, run_on_records, run_partitions
from .codec import decode, encode
from .rpc import ttypes

OpKind = ttypes.OpKind
Sink = ttypes.Sink
SinkKind = ttypes.SinkKind
KeyMode = ttypes.KeyMode
Combine = ttypes.Combine
MergeKind = ttypes.MergeKind


class StorageLevel:
    """Persistence levels: in executor memory (as objects or raw bytes), in files on the scratch
    dirs (cluster mode: the executors' disks), or both."""

    MEMORY_ONLY = "MEMORY_ONLY"
    RAW_MEMORY = "RAW_MEMORY"  # encoded and zlib-compressed (level: storage.compression)
    DISK_ONLY = "DISK_ONLY"
    MEMORY_AND_DISK = "MEMORY_AND_DISK"
    # the seed's names
    MEMORY = MEMORY_ONLY
    DISK = DISK_ONLY


class Dataset:
    """A distributed dataset of one worker; transformations are lazy, actions run jobs."""

    def __init__(self, worker, kind, nparts, parents=(), op=None, source=None, shuffle=None):
        self.worker = worker
        self.id = worker.next_id()
        self.kind = kind
        self.nparts = nparts
        self.parents = list(parents)
        self.op = op
        self.source = source
        self.shuffle = shuffle
        self.storage = None

    def __repr__(self):
        what = self.op and OpKind._VALUES_TO_NAMES[self.op.kind] or self.kind
        return f"<Dataset {self.id} {what} on {self.worker.language}, {self.nparts} partitions>"

    def getNumPartitions(self):
        return self.nparts

    # -- narrow transformations (fused into one pass by the backend) --

    def _narrow(self, kind, f=None):
        fn = self.worker.function(f) if f is not None else None
        return Dataset(self.worker, "narrow", self.nparts, [self], op=ttypes.Op(kind=kind, fn=fn))

    def map(self, f):
        return self._narrow(OpKind.MAP, f)

    def flatMap(self, f):
        return self._narrow(OpKind.FLAT_MAP, f)

    def filter(self, f):
        return self._narrow(OpKind.FILTER, f)

    def keyBy(self, f):
        return self._narrow(OpKind.KEY_BY, f)

    def keys(self):
        return self._narrow(OpKind.KEYS)

    def values(self):
        return self._narrow(OpKind.VALUES)

    def mapPartitions(self, f):
        return self._narrow(OpKind.MAP_PARTITIONS, f)

    def mapValues(self, f):
        return self._narrow(OpKind.MAP_VALUES, f)

    def union(self, other):
        self._same_worker(other, "union")
        return Dataset(self.worker, "union", self.nparts + other.nparts, [self, other])

    # -- wide transformations (shuffles) --

    def _shuffled(self, parents, nparts, map_sinks, merge, merge_fn=None, sort=None):
        shuffle = Shuffle(self.worker, map_sinks, merge, merge_fn, sort)
        n = nparts or max(p.nparts for p in parents)
        return Dataset(self.worker, "shuffle", n, parents, shuffle=shuffle)

    def _hash_sink(self, key_mode=KeyMode.FIRST, combine=Combine.NONE, fn=None, zero=None):
        return Sink(kind=SinkKind.HASH_SHUFFLE, key_mode=key_mode, combine=combine, fn=fn,
                    zero=zero)

    def reduceByKey(self, func, numPartitions=None):
        fn = self.worker.function(func)
        sink = self._hash_sink(combine=Combine.MERGE_VALUES, fn=fn)
        return self._shuffled([self], numPartitions, [sink], MergeKind.MERGE_VALUES, fn)

    def aggregateByKey(self, zeroValue, seqFunc, combFunc, numPartitions=None):
        sink = self._hash_sink(combine=Combine.AGGREGATE, fn=self.worker.function(seqFunc),
                               zero=encode(zeroValue))
        return self._shuffled([self], numPartitions, [sink], MergeKind.MERGE_VALUES,
                              self.worker.function(combFunc))

    def groupByKey(self, numPartitions=None):
        return self._shuffled([self], numPartitions, [self._hash_sink()], MergeKind.GROUP)

    def distinct(self, numPartitions=None):
        sink = self._hash_sink(key_mode=KeyMode.WHOLE, combine=Combine.DISTINCT)
        return self._shuffled([self], numPartitions, [sink], MergeKind.DISTINCT)

    def repartition(self, numPartitions):
        sink = self._hash_sink(key_mode=KeyMode.ROUND_ROBIN)
        return self._shuffled([self], numPartitions, [sink], MergeKind.CONCAT)

    def join(self, other, numPartitions=None):
        self._same_worker(other, "join")
        sinks = [self._hash_sink(), self._hash_sink()]
        return self._shuffled([self, other], numPartitions, sinks, MergeKind.JOIN)

    def _sorted(self, key_mode, fn, ascending, numPartitions):
        sink = Sink(kind=SinkKind.RANGE_SHUFFLE, key_mode=key_mode, fn=fn,
                    ascending=bool(ascending))
        return self._shuffled([self], numPartitions, [sink], MergeKind.SORTED_RUNS,
                              sort=(key_mode, fn, bool(ascending)))

    def sort(self, ascending=True, numPartitions=None):
        return self._sorted(KeyMode.WHOLE, None, ascending, numPartitions)

    def sortBy(self, keyfunc, ascending=True, numPartitions=None):
        return self._sorted(KeyMode.FUNCTION, self.worker.function(keyfunc), ascending,
                            numPartitions)

    def sortByKey(self, ascending=True, numPartitions=None):
        return self._sorted(KeyMode.FIRST, None, ascending, numPartitions)

    # -- persistence --

    def persist(self, storageLevel=StorageLevel.MEMORY_ONLY):
        if self.storage is not None and self.storage.level != storageLevel:
            self.storage.drop()
            self.storage = None
        if self.storage is None:
            self.storage = Storage(self, storageLevel)
        return self

    def cache(self):
        return self.persist(StorageLevel.MEMORY_ONLY)

    def unpersist(self):
        if self.storage is not None:
            self.storage.drop()
            self.storage = None
        return self

    # -- actions --

    def _each(self, name, sink, partitions=None):
        return run_partitions(self, f"{name} of dataset {self.id}", lambda p, attempt: sink,
                              partitions)

    def collect(self):
        directory = self.worker.output_dir("collect")

        def sink_for(p, attempt):
            return Sink(kind=SinkKind.STORE, path=os.path.join(directory, f"{p}-{attempt}.bin"))

        out = []
        for result in run_partitions(self, f"collect of dataset {self.id}", sink_for):
            for path in result.files:
                out.extend(self.worker.read_output(result.executor, path))
        return out

    def count(self):
        return sum(r.records for r in self._each("count", Sink(kind=SinkKind.COUNT)))

    def reduce(self, f):
        fn = self.worker.function(f)
        partials = [x for r in self._each("reduce", Sink(kind=SinkKind.REDUCE, fn=fn))
                    for x in decode(r.value)]
        if not partials:
            raise ValueError("Can not reduce() empty dataset")
        final = run_on_records(self.worker, partials, Sink(kind=SinkKind.REDUCE, fn=fn),
                               f"reduce of dataset {self.id} (final)")
        return decode(final.value)[0]

    def fold(self, zeroValue, op):
        return self.aggregate(zeroValue, op, op)

    def aggregate(self, zeroValue, seqOp, combOp):
        zero = encode(zeroValue)
        seq = Sink(kind=SinkKind.FOLD, fn=self.worker.function(seqOp), zero=zero)
        partials = [decode(r.value) for r in self._each("aggregate", seq)]
        comb = Sink(kind=SinkKind.FOLD, fn=self.worker.function(combOp), zero=zero)
        final = run_on_records(self.worker, partials, comb, f"aggregate of dataset {self.id}")
        return decode(final.value)

    def take(self, num):
        out = []
        scanned = 0
        while len(out) < num and scanned < self.nparts:
            batch = [scanned] if scanned == 0 else list(range(scanned, self.nparts))
            sink = Sink(kind=SinkKind.TAKE, n=num - len(out))
            for r in self._each("take", sink, batch):
                out.extend(decode(r.value))
            scanned += len(batch)
        return out[:num]

    def first(self):
        taken = self.take(1)
        if not taken:
            raise ValueError("dataset is empty")
        return taken[0]

    def top(self, num, key=None):
        fn = self.worker.function(key) if key is not None else None
        sink = Sink(kind=SinkKind.TOP, n=num, key_mode=KeyMode.FUNCTION if fn else KeyMode.WHOLE,
                    fn=fn)
        partials = [x for r in self._each("top", sink) for x in decode(r.value)]
        final = run_on_records(self.worker, partials, sink, f"top of dataset {self.id}")
        return decode(final.value)

    def takeSample(self, withReplacement, num, seed=None):
        counts = [r.records for r in self._each("takeSample count", Sink(kind=SinkKind.COUNT))]
        total = sum(counts)
        rng = random.Random(seed)
        if total == 0 or num <= 0:
            return []
        if withReplacement:
            picks = [rng.randrange(total) for _ in range(num)]
        else:
            picks = rng.sample(range(total), min(num, total))
        starts = [0]
        for c in counts:
            starts.append(starts[-1] + c)
        wanted = {}
        for g in sorted(set(picks)):
            p = bisect.bisect_right(starts, g) - 1
            wanted.setdefault(p, []).append(g - starts[p])
        parts = sorted(wanted)
        sinks = {p: Sink(kind=SinkKind.SELECT, indices=wanted[p]) for p in parts}
        results = run_partitions(self, f"takeSample of dataset {self.id}",
                                 lambda p, attempt: sinks[p], parts)
        record_at = {}
        for p, r in zip(parts, results):
            for local, rec in zip(wanted[p], decode(r.value)):
                record_at[starts[p] + local] = rec
        return [record_at[g] for g in picks]

    def _save(self, path, kind, name):
        path = os.path.abspath(path)
        if os.path.exists(path) and os.listdir(path):
            raise FileExistsError(f"output directory {path} already exists")
        os.makedirs(path, exist_ok=True)

        def sink_for(p, attempt):
            return Sink(kind=kind, path=os.path.join(path, f"part-{p:05d}"))

        run_partitions(self, f"{name} of dataset {self.id}", sink_for)

    def saveAsTextFile(self, path):
        self._save(path, SinkKind.TEXT_FILE, "saveAsTextFile")

    def saveAsJsonFile(self, path):
        self._save(path, SinkKind.JSON_FILE, "saveAsJsonFile")

    def _same_worker(self, other, what):
        if other.worker is not self.worker:
            raise ValueError(f"{what}: datasets belong to different workers; "
                             "hand one over with worker.importData(dataset) first")
