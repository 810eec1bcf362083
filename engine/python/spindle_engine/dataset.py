"""Datasets: lazy lineage with PySpark RDD names; actions run through the backend planner."""

import bisect
import math
import os
import random

from . import hdfs
from .backend.plan import Shuffle, Storage, run_on_records, run_partitions
from .codec import decode, encode
from .errors import EngineError, FetchFailed
from .rpc import ttypes

OpKind = ttypes.OpKind
Sink = ttypes.Sink
SinkKind = ttypes.SinkKind
KeyMode = ttypes.KeyMode
Combine = ttypes.Combine
MergeKind = ttypes.MergeKind


def local_path(path):
    """The absolute driver path of a save target: `file://` stripped, a relative path taken from
    the driver's working directory."""
    path = os.fspath(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(path)


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
    """A distributed dataset of one worker: PySpark's RDD, with the same operation names.

    A dataset is a lineage (its source and the operations after it), split into partitions that the
    worker's executors compute. Transformations (``map``, ``reduceByKey``, ``sortBy``, ...) are lazy
    and return a new dataset; actions (``collect``, ``count``, ``take``, ...) run a job and return
    its result to the driver. Consecutive narrow transformations run fused, as one task per
    partition; wide ones (``reduceByKey``, ``groupByKey``, ``join``, sorts, ...) shuffle.

    Datasets are not built directly: a :class:`Worker` creates them (``parallelize``, ``textFile``,
    ``importData``) and every transformation returns one.

    **Functions.** Every ``f``/``func``/``key`` parameter is either a Python callable (Python
    worker only; sent to the executors with cloudpickle) or a reference string to a function
    class: ``"path/to/file.py:ClassName"`` on a Python worker, ``"path/to/lib.so:Symbol"`` on a
    C++ worker (``engine/cpp/include/spindle/api.hpp``). A function class's ``call`` also receives
    the task context (partition, stage, properties).

    Parameters
    ----------
    worker : Worker
        The worker whose executors compute the dataset.
    kind : str
        ``"source"``, ``"narrow"``, ``"union"`` or ``"shuffle"``: how the backend plans it.
    nparts : int
        Its number of partitions.
    parents : sequence of Dataset, optional
        The datasets it is computed from.
    op, source, shuffle : optional
        The narrow operation, the source or the shuffle that makes it (backend objects).
    partitioner : int, optional
        ``n`` when every record's key (its first element) hashes to the bucket of its partition
        among ``n`` (FORMAT.md), as after ``reduceByKey``; what a shuffle's default partition
        count follows (see ``union``).

    Examples
    --------
    Every example of this class runs on ``worker``, a Python worker (PySpark's ``sc``):

    >>> from spindle_engine import Cluster, Engine, Worker
    >>> engine = Engine.start()
    >>> worker = Worker(Cluster(), "python")
    >>> words = worker.parallelize(["to be", "or not", "to be"]).flatMap(lambda line: line.split())
    >>> sorted(words.map(lambda w: (w, 1)).reduceByKey(lambda a, b: a + b).collect())
    [('be', 2), ('not', 1), ('or', 1), ('to', 2)]
    """

    def __init__(self, worker, kind, nparts, parents=(), op=None, source=None, shuffle=None,
                 partitioner=None):
        self.worker = worker
        self.id = worker.next_id()
        self.kind = kind
        self.nparts = nparts
        self.parents = list(parents)
        self.op = op
        self.source = source
        self.shuffle = shuffle
        self.partitioner = partitioner
        self.storage = None

    def __repr__(self):
        what = self.op and OpKind._VALUES_TO_NAMES[self.op.kind] or self.kind
        return f"<Dataset {self.id} {what} on {self.worker.language}, {self.nparts} partitions>"

    def getNumPartitions(self):
        """Return the number of partitions of this dataset.

        Returns
        -------
        int

        Examples
        --------
        >>> worker.parallelize([1, 2, 3, 4], 3).getNumPartitions()
        3
        """
        return self.nparts

    # -- narrow transformations (fused into one pass by the backend) --

    def _narrow(self, kind, f=None):
        fn = self.worker.function(f) if f is not None else None
        keeps_keys = kind in (OpKind.FILTER, OpKind.MAP_VALUES)  # as PySpark's preservesPartitioning
        return Dataset(self.worker, "narrow", self.nparts, [self], op=ttypes.Op(kind=kind, fn=fn),
                       partitioner=self.partitioner if keeps_keys else None)

    def map(self, f):
        """Return a new dataset by applying a function to each record.

        Parameters
        ----------
        f : callable or str
            ``f(record) -> record`` (see *Functions* in the class docstring).

        Returns
        -------
        Dataset
            One record per input record, with the same partitions.

        Examples
        --------
        >>> worker.parallelize([1, 2, 3]).map(lambda x: x * 2).collect()
        [2, 4, 6]
        """
        return self._narrow(OpKind.MAP, f)

    def flatMap(self, f):
        """Return a new dataset by applying a function to each record and flattening the results.

        Parameters
        ----------
        f : callable or str
            ``f(record) -> iterable of records`` (see *Functions* in the class docstring).

        Returns
        -------
        Dataset
            Every record of every returned iterable, with the same partitions.

        Examples
        --------
        >>> worker.parallelize(["to be", "or"]).flatMap(lambda line: line.split()).collect()
        ['to', 'be', 'or']
        """
        return self._narrow(OpKind.FLAT_MAP, f)

    def filter(self, f):
        """Return a new dataset of the records that satisfy a predicate.

        Parameters
        ----------
        f : callable or str
            ``f(record) -> bool`` (see *Functions* in the class docstring).

        Returns
        -------
        Dataset
            The records for which ``f`` is true, in their order, with the same partitions.

        Examples
        --------
        >>> worker.parallelize([1, 2, 3, 4]).filter(lambda x: x % 2 == 0).collect()
        [2, 4]
        """
        return self._narrow(OpKind.FILTER, f)

    def keyBy(self, f):
        """Return a new dataset of ``(f(record), record)`` pairs.

        Parameters
        ----------
        f : callable or str
            ``f(record) -> key`` (see *Functions* in the class docstring).

        Returns
        -------
        Dataset
            A pair per record, with the same partitions.

        Examples
        --------
        >>> worker.parallelize(["apple", "fig"]).keyBy(len).collect()
        [(5, 'apple'), (3, 'fig')]
        """
        return self._narrow(OpKind.KEY_BY, f)

    def keys(self):
        """Return a new dataset of the keys of a dataset of ``(key, value)`` pairs.

        Returns
        -------
        Dataset
            The first element of each pair.

        Examples
        --------
        >>> worker.parallelize([("a", 1), ("b", 2)]).keys().collect()
        ['a', 'b']
        """
        return self._narrow(OpKind.KEYS)

    def values(self):
        """Return a new dataset of the values of a dataset of ``(key, value)`` pairs.

        Returns
        -------
        Dataset
            The second element of each pair.

        Examples
        --------
        >>> worker.parallelize([("a", 1), ("b", 2)]).values().collect()
        [1, 2]
        """
        return self._narrow(OpKind.VALUES)

    def mapPartitions(self, f):
        """Return a new dataset by applying a function to each partition.

        Parameters
        ----------
        f : callable or str
            ``f(iterator of records) -> iterable of records``, called once per partition (see
            *Functions* in the class docstring).

        Returns
        -------
        Dataset
            The records ``f`` returns for each partition, with the same partitions.

        Examples
        --------
        >>> worker.parallelize(range(10), 2).mapPartitions(lambda it: [sum(it)]).collect()
        [10, 35]
        """
        return self._narrow(OpKind.MAP_PARTITIONS, f)

    def mapValues(self, f):
        """Return a new dataset of ``(key, f(value))`` for each ``(key, value)`` pair.

        Parameters
        ----------
        f : callable or str
            ``f(value) -> value`` (see *Functions* in the class docstring).

        Returns
        -------
        Dataset
            The same keys in the same partitions.

        Examples
        --------
        >>> worker.parallelize([("a", [1, 2]), ("b", [3])]).mapValues(len).collect()
        [('a', 2), ('b', 1)]
        """
        return self._narrow(OpKind.MAP_VALUES, f)

    def union(self, other):
        """Return the union of this dataset and another one of the same worker.

        Nothing is shuffled: the result has the partitions of both, this dataset's first. Use
        ``distinct()`` to drop duplicates. When both are hash-partitioned by key into the same
        number of partitions (both came out of ``reduceByKey``, say), so is the union, and a
        shuffle of it keeps that number (Spark's partitioner-aware union): an iteration
        ``cur = cur.reduceByKey(f).union(cur).reduceByKey(f)`` does not double its partitions.

        Parameters
        ----------
        other : Dataset
            A dataset of the same worker (``worker.importData(other)`` brings one over).

        Returns
        -------
        Dataset
            ``self.getNumPartitions() + other.getNumPartitions()`` partitions.

        Raises
        ------
        ValueError
            When ``other`` belongs to another worker.

        Examples
        --------
        >>> worker.parallelize([1, 2]).union(worker.parallelize([3])).collect()
        [1, 2, 3]
        """
        self._same_worker(other, "union")
        same = self.partitioner if self.partitioner == other.partitioner else None
        return Dataset(self.worker, "union", self.nparts + other.nparts, [self, other],
                       partitioner=same)

    # -- wide transformations (shuffles) --

    def _shuffled(self, parents, nparts, map_sinks, merge, merge_fn=None, sort=None):
        shuffle = Shuffle(self.worker, map_sinks, merge, merge_fn, sort)
        n = nparts or _default_partitions(parents)
        by_key = all(s.kind == SinkKind.HASH_SHUFFLE and s.key_mode == KeyMode.FIRST
                     for s in map_sinks)
        return Dataset(self.worker, "shuffle", n, parents, shuffle=shuffle,
                       partitioner=n if by_key else None)

    def _hash_sink(self, key_mode=KeyMode.FIRST, combine=Combine.NONE, fn=None, zero=None):
        return Sink(kind=SinkKind.HASH_SHUFFLE, key_mode=key_mode, combine=combine, fn=fn,
                    zero=zero)

    def reduceByKey(self, func, numPartitions=None):
        """Merge the values of each key with an associative and commutative function.

        Values are combined on the map side before the shuffle (like a MapReduce combiner), then
        merged per key on the reduce side.

        Parameters
        ----------
        func : callable or str
            ``func(value, value) -> value`` (see *Functions* in the class docstring).
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            One ``(key, merged value)`` pair per key, hash-partitioned by key.

        Examples
        --------
        >>> pairs = worker.parallelize([("a", 1), ("b", 1), ("a", 1)])
        >>> sorted(pairs.reduceByKey(lambda a, b: a + b).collect())
        [('a', 2), ('b', 1)]
        """
        fn = self.worker.function(func)
        sink = self._hash_sink(combine=Combine.MERGE_VALUES, fn=fn)
        return self._shuffled([self], numPartitions, [sink], MergeKind.MERGE_VALUES, fn)

    def aggregateByKey(self, zeroValue, seqFunc, combFunc, numPartitions=None):
        """Aggregate the values of each key, starting from a zero value, into any type.

        Parameters
        ----------
        zeroValue : object
            The initial aggregate of each key in each partition (encoded once, never mutated).
        seqFunc : callable or str
            ``seqFunc(aggregate, value) -> aggregate``: adds a value within a partition.
        combFunc : callable or str
            ``combFunc(aggregate, aggregate) -> aggregate``: merges aggregates across partitions.
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            One ``(key, aggregate)`` pair per key, hash-partitioned by key.

        Examples
        --------
        >>> pairs = worker.parallelize([("a", 1), ("b", 2), ("a", 3)])
        >>> sorted(pairs.aggregateByKey((0, 0), lambda acc, v: (acc[0] + v, acc[1] + 1),
        ...                             lambda x, y: (x[0] + y[0], x[1] + y[1])).collect())
        [('a', (4, 2)), ('b', (2, 1))]
        """
        sink = self._hash_sink(combine=Combine.AGGREGATE, fn=self.worker.function(seqFunc),
                               zero=encode(zeroValue))
        return self._shuffled([self], numPartitions, [sink], MergeKind.MERGE_VALUES,
                              self.worker.function(combFunc))

    def groupByKey(self, numPartitions=None):
        """Group the values of each key into one list.

        Every value is shuffled; to aggregate them, ``reduceByKey`` or ``aggregateByKey`` move far
        less data.

        Parameters
        ----------
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            One ``(key, list of values)`` pair per key, hash-partitioned by key.

        Examples
        --------
        >>> pairs = worker.parallelize([("a", 1), ("b", 2), ("a", 3)])
        >>> sorted((k, sorted(v)) for k, v in pairs.groupByKey().collect())
        [('a', [1, 3]), ('b', [2])]
        """
        return self._shuffled([self], numPartitions, [self._hash_sink()], MergeKind.GROUP)

    def distinct(self, numPartitions=None):
        """Return a new dataset with each distinct record once.

        Parameters
        ----------
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            The distinct records, hash-partitioned.

        Examples
        --------
        >>> sorted(worker.parallelize([1, 1, 2, 3, 3]).distinct().collect())
        [1, 2, 3]
        """
        sink = self._hash_sink(key_mode=KeyMode.WHOLE, combine=Combine.DISTINCT)
        return self._shuffled([self], numPartitions, [sink], MergeKind.DISTINCT)

    def repartition(self, numPartitions):
        """Return a new dataset with exactly ``numPartitions`` partitions.

        Records are dealt round-robin (a shuffle), which also evens out skewed partitions.

        Parameters
        ----------
        numPartitions : int
            Partitions of the result.

        Returns
        -------
        Dataset

        Examples
        --------
        >>> worker.parallelize(range(10), 2).repartition(4).getNumPartitions()
        4
        """
        sink = self._hash_sink(key_mode=KeyMode.ROUND_ROBIN)
        return self._shuffled([self], numPartitions, [sink], MergeKind.CONCAT)

    def join(self, other, numPartitions=None):
        """Return the inner join of two datasets of ``(key, value)`` pairs on their keys.

        Parameters
        ----------
        other : Dataset
            A dataset of ``(key, other value)`` pairs of the same worker.
        numPartitions : int, optional
            Partitions of the result (default: the larger partition count of the two, or that of
            the hash partitioning by key one keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            ``(key, (value, other value))`` for every pair of records with equal keys.

        Raises
        ------
        ValueError
            When ``other`` belongs to another worker.

        Examples
        --------
        >>> left = worker.parallelize([("a", 1), ("b", 2), ("a", 3)])
        >>> right = worker.parallelize([("a", "x"), ("c", "y")])
        >>> sorted(left.join(right).collect())
        [('a', (1, 'x')), ('a', (3, 'x'))]
        """
        self._same_worker(other, "join")
        sinks = [self._hash_sink(), self._hash_sink()]
        return self._shuffled([self, other], numPartitions, sinks, MergeKind.JOIN)

    def _sorted(self, key_mode, fn, ascending, numPartitions):
        sink = Sink(kind=SinkKind.RANGE_SHUFFLE, key_mode=key_mode, fn=fn,
                    ascending=bool(ascending))
        return self._shuffled([self], numPartitions, [sink], MergeKind.SORTED_RUNS,
                              sort=(key_mode, fn, bool(ascending)))

    def sort(self, ascending=True, numPartitions=None):
        """Sort the records themselves (a range shuffle; FORMAT.md defines the order across types).

        Parameters
        ----------
        ascending : bool, optional
            Smallest first (default) or largest first.
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            The records in order: partition 0 first, each partition sorted.

        Examples
        --------
        >>> worker.parallelize([3, 1, 2]).sort().collect()
        [1, 2, 3]
        >>> worker.parallelize(["b", "a", "c"]).sort(ascending=False).collect()
        ['c', 'b', 'a']
        """
        return self._sorted(KeyMode.WHOLE, None, ascending, numPartitions)

    def sortBy(self, keyfunc, ascending=True, numPartitions=None):
        """Sort the records by a key computed from each of them.

        Parameters
        ----------
        keyfunc : callable or str
            ``keyfunc(record) -> key`` (see *Functions* in the class docstring).
        ascending : bool, optional
            Smallest key first (default) or largest first.
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            The records (not the keys) in key order, partition 0 first.

        Examples
        --------
        >>> worker.parallelize(["ccc", "a", "bb"]).sortBy(len).collect()
        ['a', 'bb', 'ccc']
        """
        return self._sorted(KeyMode.FUNCTION, self.worker.function(keyfunc), ascending,
                            numPartitions)

    def sortByKey(self, ascending=True, numPartitions=None):
        """Sort a dataset of ``(key, value)`` pairs by key.

        Parameters
        ----------
        ascending : bool, optional
            Smallest key first (default) or largest first.
        numPartitions : int, optional
            Partitions of the result (default: this dataset's, or those of the hash partitioning by
            key it keeps from a shuffle, see ``union``).

        Returns
        -------
        Dataset
            The pairs in key order, partition 0 first.

        Examples
        --------
        >>> worker.parallelize([("b", 1), ("c", 3), ("a", 2)]).sortByKey().collect()
        [('a', 2), ('b', 1), ('c', 3)]
        """
        return self._sorted(KeyMode.FIRST, None, ascending, numPartitions)

    # -- persistence --

    def persist(self, storageLevel=StorageLevel.MEMORY_ONLY):
        """Keep this dataset's partitions once computed, at a storage level.

        The partitions are stored by the next action that computes them; later jobs read them
        instead of recomputing the lineage. Partitions lost with an executor or host are
        recomputed. Persisting again at another level drops the old copies first.

        Parameters
        ----------
        storageLevel : str, optional
            A :class:`StorageLevel`: ``MEMORY_ONLY`` (default, objects in the executor that
            computed them), ``RAW_MEMORY`` (encoded and zlib-compressed), ``DISK_ONLY`` (partition
            files in the scratch dirs, or the hosts' disks in cluster mode) or ``MEMORY_AND_DISK``.

        Returns
        -------
        Dataset
            This dataset, for chaining.

        Examples
        --------
        >>> from spindle_engine import StorageLevel
        >>> squares = worker.parallelize(range(4)).map(lambda x: x * x).persist(StorageLevel.DISK_ONLY)
        >>> squares.count()
        4
        >>> squares.collect()
        [0, 1, 4, 9]
        """
        if self.storage is not None and self.storage.level != storageLevel:
            self.storage.drop()
            self.storage = None
        if self.storage is None:
            self.storage = Storage(self, storageLevel)
        return self

    def cache(self):
        """Persist this dataset at the default level, ``StorageLevel.MEMORY_ONLY``.

        Returns
        -------
        Dataset
            This dataset, for chaining.

        Examples
        --------
        >>> squares = worker.parallelize(range(4)).map(lambda x: x * x).cache()
        >>> squares.count(), squares.collect()
        (4, [0, 1, 4, 9])
        """
        return self.persist(StorageLevel.MEMORY_ONLY)

    def unpersist(self):
        """Drop the stored partitions of this dataset; later jobs recompute them.

        Returns
        -------
        Dataset
            This dataset, for chaining.

        Examples
        --------
        >>> squares = worker.parallelize(range(4)).map(lambda x: x * x).cache()
        >>> squares.count()
        4
        >>> squares.unpersist().collect()
        [0, 1, 4, 9]
        """
        if self.storage is not None:
            self.storage.drop()
            self.storage = None
        return self

    # -- actions --

    def _each(self, name, sink, partitions=None):
        return run_partitions(self, f"{name} of dataset {self.id}", lambda p, attempt: sink,
                              partitions)

    def collect(self):
        """Return every record of this dataset to the driver, as a list.

        The records are in partition order. The whole dataset must fit in the driver's memory.

        Returns
        -------
        list

        Examples
        --------
        >>> worker.parallelize([1, 2, 3], 2).map(str).collect()
        ['1', '2', '3']
        """
        directory = self.worker.output_dir("collect")

        def sink_for(p, attempt):
            return Sink(kind=SinkKind.STORE, path=os.path.join(directory, f"{p}-{attempt}.bin"))

        parts = {}

        def take(p, result):
            parts[p] = [record for path in result.files
                        for record in self.worker.read_output(result.executor, path)]

        self._run_then_fetch(f"collect of dataset {self.id}", sink_for, take)
        return [record for p in range(self.nparts) for record in parts[p]]

    def count(self):
        """Return the number of records in this dataset.

        Returns
        -------
        int

        Examples
        --------
        >>> worker.parallelize(range(100), 4).filter(lambda x: x % 3 == 0).count()
        34
        """
        return sum(r.records for r in self._each("count", Sink(kind=SinkKind.COUNT)))

    def reduce(self, f):
        """Reduce the records with an associative and commutative function.

        Each partition is reduced by its executor; the partial results are reduced once more.

        Parameters
        ----------
        f : callable or str
            ``f(record, record) -> record`` (see *Functions* in the class docstring).

        Returns
        -------
        object
            The reduced value.

        Raises
        ------
        ValueError
            When the dataset is empty.

        Examples
        --------
        >>> worker.parallelize([1, 2, 3, 4]).reduce(lambda a, b: a + b)
        10
        """
        fn = self.worker.function(f)
        partials = [x for r in self._each("reduce", Sink(kind=SinkKind.REDUCE, fn=fn))
                    for x in decode(r.value)]
        if not partials:
            raise ValueError("Can not reduce() empty dataset")
        final = run_on_records(self.worker, partials, Sink(kind=SinkKind.REDUCE, fn=fn),
                               f"reduce of dataset {self.id} (final)")
        return decode(final.value)[0]

    def fold(self, zeroValue, op):
        """Fold the records with an associative function and a neutral zero value.

        Like ``aggregate(zeroValue, op, op)``: the zero value starts every partition and the
        merge of the partitions' results, so it must be neutral for ``op`` (``0`` for ``+``).

        Parameters
        ----------
        zeroValue : object
            The neutral element of ``op``.
        op : callable or str
            ``op(value, value) -> value`` (see *Functions* in the class docstring).

        Returns
        -------
        object
            The folded value (``zeroValue`` for an empty dataset).

        Examples
        --------
        >>> worker.parallelize([1, 2, 3, 4]).fold(0, lambda a, b: a + b)
        10
        """
        return self.aggregate(zeroValue, op, op)

    def aggregate(self, zeroValue, seqOp, combOp):
        """Aggregate the records of each partition, then the partitions' results.

        Parameters
        ----------
        zeroValue : object
            The initial aggregate of every partition and of the final merge.
        seqOp : callable or str
            ``seqOp(aggregate, record) -> aggregate``: adds a record within a partition.
        combOp : callable or str
            ``combOp(aggregate, aggregate) -> aggregate``: merges two partitions' aggregates.

        Returns
        -------
        object
            The aggregate (``zeroValue`` for an empty dataset).

        Examples
        --------
        >>> worker.parallelize([1, 2, 3, 4]).aggregate(
        ...     (0, 0), lambda acc, x: (acc[0] + x, acc[1] + 1), lambda a, b: (a[0] + b[0], a[1] + b[1]))
        (10, 4)
        """
        zero = encode(zeroValue)
        seq = Sink(kind=SinkKind.FOLD, fn=self.worker.function(seqOp), zero=zero)
        partials = [decode(r.value) for r in self._each("aggregate", seq)]
        comb = Sink(kind=SinkKind.FOLD, fn=self.worker.function(combOp), zero=zero)
        final = run_on_records(self.worker, partials, comb, f"aggregate of dataset {self.id}")
        return decode(final.value)

    def take(self, num):
        """Return the first ``num`` records of this dataset.

        The first partition is tried alone; only when it holds fewer than ``num`` records are
        the others computed.

        Parameters
        ----------
        num : int
            How many records at most.

        Returns
        -------
        list
            Up to ``num`` records, in partition order.

        Examples
        --------
        >>> worker.parallelize(range(100), 4).take(3)
        [0, 1, 2]
        """
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
        """Return the first record of this dataset.

        Returns
        -------
        object

        Raises
        ------
        ValueError
            When the dataset is empty.

        Examples
        --------
        >>> worker.parallelize([5, 6, 7]).first()
        5
        """
        taken = self.take(1)
        if not taken:
            raise ValueError("dataset is empty")
        return taken[0]

    def top(self, num, key=None):
        """Return the ``num`` largest records, largest first.

        Parameters
        ----------
        num : int
            How many records at most.
        key : callable or str, optional
            ``key(record) -> sort key``; records are compared by it (default: themselves).

        Returns
        -------
        list
            Up to ``num`` records in descending order (of ``key``).

        Examples
        --------
        >>> worker.parallelize([3, 9, 1, 7]).top(2)
        [9, 7]
        >>> worker.parallelize([3, 9, 1, 7]).top(2, key=lambda x: -x)
        [1, 3]
        """
        fn = self.worker.function(key) if key is not None else None
        sink = Sink(kind=SinkKind.TOP, n=num, key_mode=KeyMode.FUNCTION if fn else KeyMode.WHOLE,
                    fn=fn)
        partials = [x for r in self._each("top", sink) for x in decode(r.value)]
        final = run_on_records(self.worker, partials, sink, f"top of dataset {self.id}")
        return decode(final.value)

    def takeSample(self, withReplacement, num, seed=None):
        """Return a random sample of ``num`` records.

        Parameters
        ----------
        withReplacement : bool
            Whether a record may be picked more than once.
        num : int
            The sample size (without replacement: at most the dataset's size).
        seed : int, optional
            Seed of the random generator: the same seed gives the same sample of the same data.

        Returns
        -------
        list
            The sampled records, in the order they were picked.

        Examples
        --------
        >>> data = worker.parallelize(range(100), 4)
        >>> sample = data.takeSample(False, 5, seed=7)
        >>> len(sample), len(set(sample)), sample == data.takeSample(False, 5, seed=7)
        (5, 5, True)
        """
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
        for p, r in zip(parts, results, strict=False):
            for local, rec in zip(wanted[p], decode(r.value), strict=False):
                record_at[starts[p] + local] = rec
        return [record_at[g] for g in picks]

    def _save(self, path, kind, name):
        if hdfs.is_hdfs(path):
            self._save_hdfs(path, kind, f"{name} of dataset {self.id}")
            return
        path = local_path(path)
        if os.path.exists(path) and os.listdir(path):
            raise FileExistsError(f"output directory {path} already exists")
        os.makedirs(path, exist_ok=True)
        stage = f"{name} of dataset {self.id}"
        if not self.worker.cluster.agents:  # local mode: executors write the driver's files

            def sink_for(p, attempt):
                return Sink(kind=kind, path=os.path.join(path, f"part-{p:05d}"))

            run_partitions(self, stage, sink_for)
            return
        self._save_remote(path, kind, stage)

    def _save_hdfs(self, url, kind, stage):
        """Hadoop's committer convention: each task writes its part with CREATE into
        `dir/_temporary/<save>/`; once every part is written the driver renames them to
        `dir/part-NNNNN`, removes `_temporary` and writes `dir/_SUCCESS`. A failed save
        removes `dir`. Executors write straight to the DataNodes, in both modes."""
        if self.worker.language != "python":
            raise ValueError(f"a {self.worker.language} worker cannot write {url}: hand the "
                             "dataset to a python worker with importData first")
        out = hdfs.parse(url)
        client = hdfs.WebHdfs(out)
        if client.status(out.path) is not None:
            raise FileExistsError(f"output directory {url} already exists")
        temporary = f"{out.path.rstrip('/')}/_temporary"
        attempt_dir = f"{temporary}/{self.worker.cluster.engine.id}-{self.id}"
        client.mkdirs(attempt_dir)
        try:
            results = run_partitions(self, stage, lambda p, attempt: Sink(
                kind=kind, path=out.child(f"{attempt_dir}/part-{p:05d}-{attempt}").url))
            for p, result in enumerate(results):
                written = hdfs.parse(result.files[0]).path
                client.rename(written, f"{out.path.rstrip('/')}/part-{p:05d}")
            client.delete(temporary, recursive=True)
            client.create(f"{out.path.rstrip('/')}/_SUCCESS", [b""])
        except BaseException:
            try:
                client.delete(out.path, recursive=True)
            except hdfs.HdfsError:
                pass  # the save's own error says more
            raise

    def _save_remote(self, path, kind, stage):
        """Cluster mode: each task writes its part file in its host's work dirs; the driver then
        streams every part from that host's file server into `path` (FETCH.md). A part whose
        host vanished before it was fetched is written again elsewhere."""
        directory = self.worker.output_dir(f"save{self.id}-{self.worker.next_id()}")

        def sink_for(p, attempt):
            return Sink(kind=kind, path=f"{directory}/part-{p:05d}-{attempt}")

        self._run_then_fetch(stage, sink_for, lambda p, result: self.worker.fetch_output(
            result.executor, result.files[0], os.path.join(path, f"part-{p:05d}")))

    def _run_then_fetch(self, stage, sink_for, take):
        """Run every partition into the files of `sink_for`, then `take(p, result)` each one's
        file from its executor (cluster mode: from its host). A partition whose host vanished
        before its file was taken (FetchFailed: an executor there ran a task just before it died)
        runs again on the executors that are left."""
        todo = list(range(self.nparts))
        for _ in range(self.worker.max_failures + 1):
            lost = []
            for p, result in zip(todo, run_partitions(self, stage, sink_for, todo), strict=True):
                try:
                    take(p, result)
                except FetchFailed as e:
                    lost.append(p)
                    self.worker.metrics["fetch_failures"] += 1
                    self.worker.cluster.forget_host(e.host)
            if not lost:
                return
            todo = lost
        raise EngineError(f"{stage}: the results kept getting lost with their hosts",
                          kind="FETCH_FAILED", stage=stage)

    def saveAsTextFile(self, path):
        """Write the records as text files, one line per record.

        Each partition becomes the file ``part-NNNNN`` of the directory ``path``. A string is
        written as is; any other record as its JSON text (bytes as base64, tuples as arrays).

        Parameters
        ----------
        path : str or os.PathLike
            The output directory on the driver's filesystem (a plain path or ``file://``; a
            relative one from the driver's working directory): created; it must not exist with
            files in it. In cluster mode the executors write the parts on their hosts and the
            driver streams them into this directory. Or an HDFS directory (``hdfs://``,
            ``webhdfs://``): the executors write the parts to the DataNodes, the driver commits
            them and writes ``_SUCCESS`` (python workers only).

        Raises
        ------
        FileExistsError
            When ``path`` already holds files (an HDFS ``path``: when it exists at all).

        Examples
        --------
        >>> import os, tempfile
        >>> out = os.path.join(tempfile.mkdtemp(), "words")
        >>> worker.parallelize(["to", "be"], 2).saveAsTextFile(out)
        >>> sorted(os.listdir(out))
        ['part-00000', 'part-00001']
        """
        self._save(path, SinkKind.TEXT_FILE, "saveAsTextFile")

    def saveAsJsonFile(self, path):
        """Write the records as JSON Lines files, one JSON value per line.

        Each partition becomes the file ``part-NNNNN`` of the directory ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            The output directory on the driver's filesystem (a plain path or ``file://``; a
            relative one from the driver's working directory): created; it must not exist with
            files in it. In cluster mode the executors write the parts on their hosts and the
            driver streams them into this directory. Or an HDFS directory (``hdfs://``,
            ``webhdfs://``): the executors write the parts to the DataNodes, the driver commits
            them and writes ``_SUCCESS`` (python workers only).

        Raises
        ------
        FileExistsError
            When ``path`` already holds files (an HDFS ``path``: when it exists at all).

        Examples
        --------
        >>> import os, tempfile
        >>> out = os.path.join(tempfile.mkdtemp(), "json")
        >>> worker.parallelize([{"k": 1}], 1).saveAsJsonFile(out)
        >>> open(os.path.join(out, "part-00000")).read().splitlines()
        ['{"k":1}']
        """
        self._save(path, SinkKind.JSON_FILE, "saveAsJsonFile")

    def _same_worker(self, other, what):
        if other.worker is not self.worker:
            raise ValueError(f"{what}: datasets belong to different workers; "
                             "hand one over with worker.importData(dataset) first")


def _default_partitions(parents):
    """A shuffle's partitions when the call names none, as Spark's default partitioner: the
    largest partition count of the parents, unless one is hash-partitioned by key into at least a
    tenth of that many (a ``union`` of two ``reduceByKey`` results, say): then that count."""
    most = max(p.nparts for p in parents)
    kept = max((p.partitioner for p in parents if p.partitioner), default=None)
    if kept and math.log10(most) - math.log10(kept) < 1:
        return kept
    return most
