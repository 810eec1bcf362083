"""From lineage to tasks: fuse narrow ops up to a boundary, materialize shuffles and storage."""

import copy
import math
import os

from ..codec import decode, encode, write_partition
from ..errors import EngineError
from ..rpc import ttypes
from .scheduler import OutputsLost, TaskSpec, run_stage

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
        ds.worker.metrics["lineage_visits"] += 1
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


def source_nodes(ds, p):
    """The nodes partition p of ds would rather read on: those of its source's input (HDFS
    block replicas) when the chain reaches such a source; None when anywhere will do."""
    node = ds
    while True:
        ds.worker.metrics["lineage_visits"] += 1
        if node.storage and node.storage.source(p) is not None:
            return None
        if node.kind == "narrow":
            node = node.parents[0]
        elif node.kind == "union":
            first = node.parents[0]
            if p < first.nparts:
                node = first
            else:
                p -= first.nparts
                node = node.parents[1]
        elif node.kind == "source":
            nodes = getattr(node.source, "nodes", None)
            return nodes(p) if nodes else None
        else:
            return None


def prepare(ds, seen=None):
    """Materialize every boundary (shuffle outputs, imports, persisted data) ds's tasks read.

    Each dataset is visited once (`seen`: the ids visited so far), however many paths of the
    lineage lead to it, and a stored one whose partitions are all kept is a leaf."""
    seen = set() if seen is None else seen
    if ds.id in seen:
        return
    seen.add(ds.id)
    ds.worker.metrics["lineage_visits"] += 1
    if ds.storage and ds.storage.complete() and not ds.storage.rebalance():
        return
    if ds.kind in ("narrow", "union"):
        for parent in ds.parents:
            prepare(parent, seen)
    elif ds.kind == "shuffle":
        ds.shuffle.ensure(ds)
    else:
        ds.source.prepare()
    if ds.storage:
        ds.storage.store(ds)


def partition_specs(ds, stage, sink_for, partitions=None, skip_storage=None, placement=None):
    """TaskSpecs computing `partitions` of ds into the sinks `sink_for(p, attempt)`;
    `placement` (partition -> executor) is where a task should run if it can."""
    specs = []
    for p in range(ds.nparts) if partitions is None else partitions:
        def plan(attempt, p=p):
            source, ops, preferred, _ = chain(ds, p, skip_storage)
            task = ttypes.Task(stage=stage, partition=p, source=source, ops=ops,
                               sink=sink_for(p, attempt), attempt=attempt)
            wanted = (placement or {}).get(p)
            if preferred is None and wanted is not None and wanted.alive():
                preferred = wanted
            return task, preferred
        refs = chain(ds, p, skip_storage)[3]
        sink_fn = sink_for(p, 0).fn
        if sink_fn is not None:
            refs.append(sink_fn.ref)
        specs.append(TaskSpec(stage, p, plan, tuple(dict.fromkeys(refs)),
                              source_nodes(ds, p)))
    return specs


def _forget_lost_host(worker, lost):
    """A stage ended with `lost` (OutputsLost): what was kept on that host is forgotten, to be
    computed again where needed."""
    worker.metrics["hosts_lost"] += 1
    worker.cluster.forget_host(lost.host)


def run_partitions(ds, stage, sink_for, partitions=None, skip_storage=None):
    """Prepare ds, then run one task per partition; return the TaskResults.

    When a task cannot fetch an input from a host (its outputs are lost), everything known on
    that host is forgotten, only the missing partitions are recomputed, and the tasks that did
    not complete run again (FETCH.md)."""
    partitions = list(range(ds.nparts)) if partitions is None else list(partitions)
    done = {}
    for _ in range(2 * ds.worker.max_failures + 1):
        todo = [p for p in partitions if p not in done]
        try:
            prepare(ds)  # persisting an input can lose a host too
            done.update(zip(todo, run_stage(ds.worker, partition_specs(
                ds, stage, sink_for, todo, skip_storage)), strict=False))
            return [done[p] for p in partitions]
        except OutputsLost as lost:
            done.update(lost.done)
            _forget_lost_host(ds.worker, lost)
    raise EngineError(f"{stage}: inputs kept getting lost; giving up", kind="FETCH_FAILED",
                      stage=stage)


def run_on_records(worker, records, sink, stage):
    """Run one task over `records` (written to shared memory) into `sink`; return its result."""
    path = worker.scratch_file("final")
    write_partition(path, records)
    source = Source(kind=SourceKind.FILES, paths=[worker.cluster.qualify(path)])
    task = ttypes.Task(stage=stage, partition=0, source=source, ops=[], sink=sink, attempt=0)
    refs = (sink.fn.ref,) if sink.fn is not None else ()
    try:
        for _ in range(2 * worker.max_failures + 1):
            try:
                return run_stage(worker, [TaskSpec(stage, 0, lambda attempt: (task, None),
                                                   refs)])[0]
            except OutputsLost as lost:
                # its executor's host vanished before it ran (nothing was seen wrong with it in
                # the stage before): its input is the driver's file, so run it again elsewhere
                _forget_lost_host(worker, lost)
        raise EngineError(f"{stage}: hosts kept getting lost; giving up", kind="EXECUTOR_LOST",
                          stage=stage)
    finally:
        os.remove(path)


class Storage:
    """Where the partitions of a persisted dataset are kept: executor memory and/or files."""

    def __init__(self, ds, level):
        self.ds = ds
        self.level = level
        self.locations = {}
        self.stored_bytes = {}
        ds.worker.cluster.outputs.append(self)

    def forget_host(self, file_server):
        for p, (executor, *_rest) in list(self.locations.items()):
            if getattr(executor, "file_server", None) == file_server:
                del self.locations[p]

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
        compression = ds.worker.properties.get("storage.compression", "6") \
            if self.level == "RAW_MEMORY" else None

        def sink_for(p, attempt):
            return Sink(kind=SinkKind.STORE,
                        cache_key=f"ds{ds.id}-p{p}" if memory else None,
                        path=os.path.join(directory, f"ds{ds.id}-p{p}-a{attempt}.bin")
                        if disk else None,
                        compression=None if compression is None else int(compression))

        missing = [p for p in range(ds.nparts) if self.source(p) is None]
        specs = partition_specs(ds, f"persist of dataset {ds.id}", sink_for, missing,
                                skip_storage=ds, placement=self._spread(missing) if memory else None)
        try:
            results = dict(zip(missing, run_stage(ds.worker, specs), strict=False))
        except OutputsLost as lost:
            # keep what was stored; the caller's stage (run_partitions) forgets the host and
            # prepares again, and its own results are not these
            self._keep(lost.done)
            raise OutputsLost(lost.host, {}) from None
        self._keep(results)

    def _keep(self, results):
        """Record where each stored partition of `results` (partition -> TaskResult) is."""
        for p, result in results.items():
            ex = result.executor
            path = ex.qualify(result.files[0]) if result.files else None
            key = f"ds{self.ds.id}-p{p}" if "MEMORY" in self.level else None
            self.locations[p] = (ex, ex.generation, key, path)
            self.stored_bytes[p] = result.stored_bytes

    def _held(self):
        """Live executors -> the partitions each holds in memory."""
        held = {ex: [] for ex in self.ds.worker.executors if ex.alive()}
        for p, (ex, generation, key, _) in self.locations.items():
            if key and ex in held and ex.generation == generation:
                held[ex].append(p)
        return held

    def _spread(self, missing):
        """Partition -> executor for `missing`, filling the executors that hold least first."""
        held = self._held()
        counts = {ex: len(ps) for ex, ps in held.items()}
        placement = {}
        for p in missing:
            if not counts:
                break
            ex = min(counts, key=counts.get)
            placement[p] = ex
            counts[ex] += 1
        return placement

    def rebalance(self):
        """After executors came back (a replaced host), one holding more than its share of the
        in-memory partitions gives the excess up; prepare() then computes those again on the
        executors holding least. True if anything was given up."""
        held = self._held()
        if len(held) < 2 or min(len(ps) for ps in held.values()) > 0:
            return False
        fair = -(-len(self.locations) // len(held))
        excess = {ex: [p for p in ps[fair:] if not self.locations[p][3]]  # not if on disk too
                  for ex, ps in held.items() if len(ps) > fair}
        excess = {ex: ps for ex, ps in excess.items() if ps}
        if not excess:
            return False
        for ps in excess.values():
            for p in ps:
                del self.locations[p]
        self.ds.worker.uncache({ex: [f"ds{self.ds.id}-p{p}" for p in ps]
                                for ex, ps in excess.items()})
        return True

    def drop(self):
        """Forget the stored partitions (executor memory and files)."""
        keys = {}
        for executor, _, key, path in self.locations.values():
            if key:
                keys.setdefault(executor, []).append(key)
            if path and os.path.exists(path):  # a remote one goes with its agent session
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
        self.outputs = None  # per parent: {map partition: (file server, {bucket: [paths]})}
        self.templates = None  # per parent: the map Sink with buckets (and sort bounds) set
        worker.cluster.outputs.append(self)

    def forget_host(self, file_server):
        for outputs in self.outputs or ():
            for q, (where, _) in list(outputs.items()):
                if where == file_server:
                    del outputs[q]

    def ensure(self, ds):
        """Run the map side for every map partition whose output is not (or no longer) kept."""
        if self.outputs is None:
            self.outputs = [{} for _ in ds.parents]
            self.templates = [None] * len(ds.parents)
        directory = self.worker.output_dir(f"shuffle{self.id}")
        for i, parent in enumerate(ds.parents):
            missing = [q for q in range(parent.nparts) if q not in self.outputs[i]]
            if not missing:
                continue  # run_partitions below (and _bounds) prepare the parent
            if self.templates[i] is None:
                template = copy.copy(self.map_sinks[i])
                template.buckets = ds.nparts
                if self.sort is not None:
                    template.bounds = encode(self._bounds(parent, ds.nparts))
                self.templates[i] = template

            def sink_for(q, attempt, template=self.templates[i], i=i):
                sink = copy.copy(template)
                sink.path_prefix = os.path.join(directory, f"p{i}-m{q}-a{attempt}")
                return sink

            results = run_partitions(parent, f"stage {self.id}.{i} (shuffle map)", sink_for,
                                     missing)
            for q, result in zip(missing, results, strict=False):
                ex = result.executor
                buckets = {b: [ex.qualify(path) for path in paths]
                           for b, paths in (result.buckets or {}).items()}
                self.outputs[i][q] = (getattr(ex, "file_server", None), buckets)

    def _files(self, i, p):
        """Input files of reduce partition p from parent i, in map partition order."""
        outputs = self.outputs[i]
        return [path for q in sorted(outputs) for path in outputs[q][1].get(p, ())]

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
        source = Source(kind=SourceKind.SHUFFLE, paths=self._files(0, p), merge=self.merge,
                        fn=self.merge_fn)
        if self.merge == MergeKind.JOIN:
            source.right_paths = self._files(1, p)
        if self.sort is not None:
            source.ascending = self.sort[2]
        return source
