"""Driver entry points: Engine, Properties, Cluster and Worker (local mode: executors as processes).

The backend (planner and scheduler) runs inside the driver process; executors are separate
processes talking Thrift over loopback TCP and exchanging partitions through /dev/shm files.
"""

import atexit
import inspect
import itertools
import os
import re
import shutil
import sys
import tempfile
import threading
import uuid

import cloudpickle

from .backend.executors import ExecutorLost, ExecutorProcess, Slot
from .backend.plan import run_partitions
from .codec import write_partition
from .dataset import Dataset
from .errors import EngineError
from .rpc import ttypes

DEFAULTS = {
    "engine.mode": "local",
    "engine.shm_dir": "/dev/shm",
    "engine.scratch_dirs": tempfile.gettempdir(),
    "executor.instances": "1",
    "executor.cores": "1",
    "executor.memory": "1GB",
    "task.max_failures": "3",
    "task.timeout_s": "0",
}
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}


class Properties(dict):
    """Engine properties (string values), with defaults and typed getters."""

    def __init__(self, values=None, **kwargs):
        super().__init__(DEFAULTS)
        self.update({k: str(v) for k, v in dict(values or {}, **kwargs).items()})

    def __setitem__(self, key, value):
        super().__setitem__(key, str(value))

    def int(self, key):
        return int(self[key])

    def bytes(self, key):
        m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", self[key])
        if not m or m.group(2).lower() not in _UNITS:
            raise ValueError(f"property {key}={self[key]!r} is not a size like 512MB")
        return int(m.group(1)) * _UNITS[m.group(2).lower()]

    def list(self, key):
        return [x for x in self[key].split(",") if x]


class Engine:
    """The engine of this driver process. `Engine.start()` ... `Engine.stop()`, or `with`."""

    _current = None

    def __init__(self):
        self.id = uuid.uuid4().hex[:10]
        self.clusters = []
        self._ids = itertools.count()
        self._lock = threading.Lock()

    @classmethod
    def start(cls):
        if cls._current is None:
            cls._current = Engine()
            atexit.register(cls.stop)  # executors and shared memory go with the driver
        return cls._current

    @classmethod
    def stop(cls):
        engine, cls._current = cls._current, None
        if engine is not None:
            for cluster in engine.clusters:
                cluster.stop()

    @classmethod
    def current(cls):
        if cls._current is None:
            raise EngineError("the engine is not started: call Engine.start() first")
        return cls._current

    def next_id(self):
        with self._lock:
            return next(self._ids)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        Engine.stop()


class Cluster:
    """Resources for workers: executor instances, cores and memory, scratch and shm dirs."""

    def __init__(self, properties=None):
        self.engine = Engine.current()
        self.properties = properties if isinstance(properties, Properties) \
            else Properties(properties)
        if self.properties["engine.mode"] != "local":
            raise EngineError("only engine.mode=local is implemented")
        name = f"spindle-engine-{self.engine.id}-c{self.engine.next_id()}"
        self.shm_dir = os.path.join(self.properties["engine.shm_dir"], name)
        self.scratch_dirs = [os.path.join(d, name)
                             for d in self.properties.list("engine.scratch_dirs")]
        for d in [self.shm_dir, *self.scratch_dirs]:
            os.makedirs(d, exist_ok=True)
        self.workers = []
        self.engine.clusters.append(self)

    def stop(self):
        for worker in self.workers:
            worker.stop()
        self.workers = []
        for d in [self.shm_dir, *self.scratch_dirs]:
            shutil.rmtree(d, ignore_errors=True)


class Worker:
    """Executors of one language on a cluster; creates datasets."""

    def __init__(self, cluster, language):
        if language not in ("python", "cpp"):
            raise ValueError(f"unknown worker language {language!r} (python or cpp)")
        self.cluster = cluster
        self.language = language
        props = cluster.properties
        self.properties = dict(props)
        self.max_failures = props.int("task.max_failures")
        self.metrics = {"tasks": 0, "spill_files": 0, "spill_bytes": 0, "executors_lost": 0}
        instances, cores = props.int("executor.instances"), props.int("executor.cores")
        memory = props.bytes("executor.memory")
        self.shm_dir = os.path.join(cluster.shm_dir, f"w{cluster.engine.next_id()}-{language}")
        os.makedirs(self.shm_dir, exist_ok=True)
        if language == "python":  # one single-core process per core
            specs = [(i, 1, memory // cores) for i in range(instances * cores)]
        else:
            specs = [(i, cores, memory) for i in range(instances)]
        self.executors = [ExecutorProcess(language, i, c, m, cluster.scratch_dirs, self.shm_dir)
                          for i, c, m in specs]
        for ex in self.executors:
            ex.spawn()
        try:
            for ex in self.executors:
                ex.wait_ready()
        except EngineError:
            self.stop()
            raise
        self.slots = [Slot(ex) for ex in self.executors for _ in range(ex.cores)]
        cluster.workers.append(self)

    # -- helpers for datasets and the backend --

    def next_id(self):
        return self.cluster.engine.next_id()

    def executor_pids(self):
        return [ex.pid for ex in self.executors]

    def scratch_dir(self, name):
        d = os.path.join(self.shm_dir, name)
        os.makedirs(d, exist_ok=True)
        return d

    def scratch_file(self, name):
        return os.path.join(self.scratch_dir("tmp"), f"{name}-{self.next_id()}.bin")

    def storage_dir(self, disk):
        base = self.cluster.scratch_dirs[0] if disk else self.shm_dir
        d = os.path.join(base, f"storage-{self.language}")
        os.makedirs(d, exist_ok=True)
        return d

    def uncache(self, keys_by_executor):
        for slot in self.slots:
            keys = keys_by_executor.pop(slot.executor, None)
            if keys and slot.executor.alive():
                try:
                    slot.connect(self.properties)
                    slot.uncache(keys)
                except ExecutorLost:  # its memory is gone with it
                    pass

    def function(self, f):
        """A thrift Function from a reference string or (python only) a class/callable."""
        if isinstance(f, str):
            path, sep, symbol = f.rpartition(":")
            if not sep or not path:
                raise ValueError(f"function reference {f!r} must look like path:Name")
            return ttypes.Function(ref=f"{os.path.abspath(path)}:{symbol}")
        if self.language != "python":
            raise ValueError(f"a {self.language} worker needs functions by reference "
                             "('path/lib.so:symbol'), not Python objects")
        code = getattr(f, "__code__", None)
        where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code else ""
        name = getattr(f, "__qualname__", type(f).__name__)
        return ttypes.Function(ref=f"{name}@{where}" if where else name, pickled=_pickle(f))

    def stop(self):
        for slot in self.slots if hasattr(self, "slots") else []:
            slot.close()
        for ex in self.executors:
            ex.stop()

    # -- dataset sources --

    def parallelize(self, data, numSlices=None):
        data = list(data)
        n = max(1, numSlices or len(self.slots))
        directory = self.scratch_dir(f"parallelize{self.next_id()}")
        paths = []
        for i in range(n):
            path = os.path.join(directory, f"{i}.bin")
            write_partition(path, data[len(data) * i // n: len(data) * (i + 1) // n])
            paths.append(path)
        return Dataset(self, "source", n, source=FileSource(paths))

    def textFile(self, path, minPartitions=None):
        path = os.path.abspath(path)
        size = os.path.getsize(path)
        n = max(1, minPartitions or len(self.slots))
        step = max(1, -(-size // n))
        splits = [(off, min(step, size - off)) for off in range(0, size, step)] or [(0, 0)]
        return Dataset(self, "source", len(splits), source=TextSource(path, splits))

    def importData(self, dataset):
        """The same records as `dataset` (of any worker), as a dataset of this worker."""
        if dataset.worker is self:
            return dataset
        return Dataset(self, "source", dataset.nparts, source=ImportSource(dataset))


def _pickle(f):
    """cloudpickle `f`; the driver's own modules (not installed ones) go by value, since
    executors cannot import them."""
    module = inspect.getmodule(f)
    path = getattr(module, "__file__", None)
    installed = not path or path.startswith((sys.prefix, sys.base_prefix))
    if not installed and module.__name__ != "__main__":
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:  # not in sys.modules: cloudpickle pickles it by value anyway
            pass
    return cloudpickle.dumps(f)


class FileSource:
    """Partitions already written as files (parallelize)."""

    def __init__(self, paths):
        self.paths = paths

    def prepare(self):
        pass

    def source(self, p):
        return ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[self.paths[p]])


class TextSource:
    """Line-aligned byte-range splits of a text file."""

    def __init__(self, path, splits):
        self.path = path
        self.splits = splits

    def prepare(self):
        pass

    def source(self, p):
        offset, length = self.splits[p]
        return ttypes.Source(kind=ttypes.SourceKind.TEXT, text_path=self.path, offset=offset,
                             length=length)


class ImportSource:
    """A dataset of another worker, written once as partition files in shared memory."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.paths = None

    def prepare(self):
        if self.paths is not None:
            return
        ds = self.dataset
        directory = ds.worker.scratch_dir(f"export{ds.id}")

        def sink_for(p, attempt):
            return ttypes.Sink(kind=ttypes.SinkKind.STORE,
                               path=os.path.join(directory, f"{p}-{attempt}.bin"))

        results = run_partitions(ds, f"export of dataset {ds.id}", sink_for)
        self.paths = [r.files[0] for r in results]

    def source(self, p):
        return ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[self.paths[p]])
