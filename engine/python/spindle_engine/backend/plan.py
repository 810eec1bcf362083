"""From lineage to tasks: fuse narrow ops up to a boundary, materialize shuffles and storage."""

import copy
import math
import os

from ..codec import decode, encode, write_partition
from ..rpc import ttypes
from .scheduler import TaskSpec, run_stage

Source = ttypes.Source
SourceKind = ttypes.SourceKind
Sink = ttypes.Sink
SinkKind = ttypes.SinkKind
MergeKind = ttypes.MergeKind


def chain(ds, p, skip_storage=None):
    """(Source, fused ops, preferred executor, function refs) for partition p of ds.

    Walks narrow parents up to the first boundary: stored partition, shuffle or source.
    """
    ops = []
    node = ds
    preferred = None
    while True:
        hit = node.storage.source(p) if node.storage and node is not skip_storage else None
        if hit is not None:
            source, preferred = hit
            break
        if node.kind == "narrow":
            ops.append(node.op)
            node = node.parents[0]
        elif node.kind == "union":
            first = node.parents[0]
            if p < first.nparts:
                node = first
            else:
                p -= first.nparts
                node = node.parents[1]
        elif node.kind == "shuffle":
            source = node.shuffle.reduce_source(p)
            break
        else:
            source = node.source.source(p)
            break
    ops.reverse()
    refs = [op.fn.ref for op in ops if op.fn is not None]
    if source.fn is not None:
        refs.insert(0, source.fn.ref)
    return source, ops, preferred, refs


def prepare(ds):
    """Materialize every boundary (shuffle outputs, imports, persisted data) ds's tasks read."""
    if ds.storage and ds.storage.complete():
        return
    if ds.kind in ("narrow", "union"):
        for parent in ds.parents:
            prepare(parent)
    elif ds.kind == "shuffle":
        ds.shuffle.ensure(ds)
    else:
        ds.source.prepare()
    if ds.storage:
        ds.storage.store(ds)


def partition_specs(ds, stage, sink_for, partitions=None, skip_storage=None):
    """TaskSpecs computing `partitions` of ds into the sinks `sink_for(p, attempt)`."""
    specs = []
    for p in range(ds.nparts) if partitions is None else partitions:
        def plan(attempt, p=p):
            source, ops, preferred, _ = chain(ds, p, skip_storage)
            task = ttypes.Task(stage=stage, partition=p, source=source, ops=ops,
                               sink=sink_for(p, attempt), attempt=attempt)
            return task, preferred
        refs = chain(ds, p, skip_storage)[3]
        sink_fn = sink_for(p, 0).fn
        if sink_fn is not None:
            refs.append(sink_fn.ref)
        specs.append(TaskSpec(stage, p, plan, tuple(dict.fromkeys(refs))))
    return specs


def run_partitions(ds, stage, sink_for, partitions=None, skip_storage=None):
    """Prepare ds, then run one task per partition; return the TaskResults."""
    prepare(ds)
    return run_stage(ds.worker, partition_specs(ds, stage, sink_for, partitions, skip_storage))


def run_on_records(worker, records, sink, stage):
    """Run one task over `records` (written to shared memory) into `sink`; return its result."""
    path = worker.scratch_file("final")
    write_partition(path, records)
    source = Source(kind=SourceKind.FILES, paths=[path])
    task = ttypes.Task(stage=stage, partition=0, source=source, ops=[], sink=sink, attempt=0)
    refs = (sink.fn.ref,) if sink.fn is not None else ()
    try:
        return run_stage(worker, [TaskSpec(stage, 0, lambda attempt: (task, None), refs)])[0]
    finally:
        os.remove(path)


class Storage:
    """Where the partitions of a persisted dataset are kept: executor memory and/or files."""

    def __init__(self, ds, level):
        self.ds = ds
        self.level = level
        self.locations = {}

    def source(self, p):
        loc = self.locations.get(p)
        if loc is None:
            return None
        executor, generation, key, path = loc
        if key and executor.alive() and executor.generation == generation:
            return Source(kind=SourceKind.CACHED, cache_key=key), executor
        if path:
            return Source(kind=SourceKind.FILES, paths=[path]), None
        del self.locations[p]
        return None

    def complete(self):
        return all(self.source(p) is not None for p in range(self.ds.nparts))

    def store(self, ds):
        memory = "MEMORY" in self.level
        disk = "DISK" in self.level
        directory = ds.worker.storage_dir(disk)

        def sink_for(p, attempt):
            return Sink(kind=SinkKind.STORE,
                        cache_key=f"ds{ds.id}-p{p}" if memory else None,
                        path=os.path.join(directory, f"ds{ds.id}-p{p}-a{attempt}.bin")
                        if disk else None)

        missing = [p for p in range(ds.nparts) if self.source(p) is None]
        specs = partition_specs(ds, f"persist of dataset {ds.id}", sink_for, missing,
                                skip_storage=ds)
        for p, result in zip(missing, run_stage(ds.worker, specs)):
            path = result.files[0] if result.files else None
            key = f"ds{ds.id}-p{p}" if memory else None
            self.locations[p] = (result.executor, result.executor.generation, key, path)

    def drop(self):
        """Forget the stored partitions (executor memory and files)."""
        keys = {}
        for executor, _, key, path in self.locations.values():
            if key:
                keys.setdefault(executor, []).append(key)
            if path and os.path.exists(path):
                os.remove(path)
        self.ds.worker.uncache(keys)
        self.locations.clear()


class Shuffle:
    """A wide dependency: map-side sinks per parent, reduce-side merge per output partition."""

    def __init__(self, worker, map_sinks, merge, merge_fn=None, sort=None):
        self.worker = worker
        self.id = worker.next_id()
        self.map_sinks = map_sinks  # one Sink template per parent
        self.merge = merge
        self.merge_fn = merge_fn
        self.sort = sort  # (key_mode, fn, ascending) for range partitioning
        self.files = None  # per parent: list of file lists, one per output partition

    def ensure(self, ds):
        if self.files is not None:
            return
        directory = os.path.join(self.worker.shm_dir, f"shuffle{self.id}")
        os.makedirs(directory, exist_ok=True)
        files = []
        for i, parent in enumerate(ds.parents):
            prepare(parent)
            template = copy.copy(self.map_sinks[i])
            template.buckets = ds.nparts
            if self.sort is not None:
                template.bounds = encode(self._bounds(parent, ds.nparts))

            def sink_for(q, attempt, template=template, i=i):
                sink = copy.copy(template)
                sink.path_prefix = os.path.join(directory, f"p{i}-m{q}-a{attempt}")
                return sink

            results = run_partitions(parent, f"stage {self.id}.{i} (shuffle map)", sink_for)
            per_bucket = [[] for _ in range(ds.nparts)]
            for result in results:
                for b, paths in (result.buckets or {}).items():
                    per_bucket[b].extend(paths)
            files.append(per_bucket)
        self.files = files

    def _bounds(self, parent, nout):
        """Sample keys of the parent and pick nout-1 ascending range bounds."""
        key_mode, fn, _ = self.sort
        per_partition = max(20, math.ceil(60 * nout / max(1, parent.nparts)))

        def sink_for(q, attempt):
            return Sink(kind=SinkKind.SAMPLE_KEYS, key_mode=key_mode, fn=fn, n=per_partition,
                        seed=self.id)

        results = run_partitions(parent, f"stage {self.id} (sort sample)", sink_for)
        keys = sorted(k for r in results for k in decode(r.value))
        if not keys:
            return []
        return [keys[len(keys) * i // nout] for i in range(1, nout)]

    def reduce_source(self, p):
        source = Source(kind=SourceKind.SHUFFLE, paths=self.files[0][p], merge=self.merge,
                        fn=self.merge_fn)
        if self.merge == MergeKind.JOIN:
            source.right_paths = self.files[1][p]
        if self.sort is not None:
            source.ascending = self.sort[2]
        return source
