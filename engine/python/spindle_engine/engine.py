"""Driver entry points: Engine, Properties, Cluster and Worker.

The backend (planner and scheduler) runs inside the driver process. Local mode: executors are
processes on this machine, talking Thrift over loopback and exchanging partitions through
/dev/shm files. Cluster mode: engine agents on other hosts start the executors, and partitions
cross hosts through the agents' file servers (rpc/agent.thrift, rpc/FETCH.md).
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
from .backend.remote import AgentConnection, RemoteExecutor
from .codec import read_file, write_partition
from .dataset import Dataset
from .errors import EngineError, FetchFailed
from .fileserver import FileServer, fetch, url
from .rpc import ttypes

DEFAULTS = {
    # a driver started by Spindle (engine product jobs) gets these from its environment
    "engine.mode": os.environ.get("SPINDLE_ENGINE_MODE", "local"),
    "engine.agents": os.environ.get("SPINDLE_ENGINE_AGENTS", ""),
    "engine.driver_host": os.environ.get("SPINDLE_ENGINE_DRIVER_HOST", "127.0.0.1"),
    "engine.shm_dir": os.environ.get("SPINDLE_ENGINE_SHM_DIR", "/dev/shm"),
    "executor.affinity": "false",
    "storage.compression": "6",
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
        given = {k: str(v) for k, v in dict(values or {}, **kwargs).items()}
        self.given = set(given)  # set by the user, not defaults
        self.update(given)

    def __setitem__(self, key, value):
        self.given.add(key)
        super().__setitem__(key, str(value))

    def flag(self, key):
        return self[key].strip().lower() in ("1", "true", "yes", "on")

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
        mode = self.properties["engine.mode"]
        if mode not in ("local", "cluster"):
            raise EngineError(f"engine.mode={mode!r}: expected local or cluster")
        name = f"spindle-engine-{self.engine.id}-c{self.engine.next_id()}"
        self.shm_dir = os.path.join(self.properties["engine.shm_dir"], name)
        self.scratch_dirs = [os.path.join(d, name)
                             for d in self.properties.list("engine.scratch_dirs")]
        for d in [self.shm_dir, *self.scratch_dirs]:
            os.makedirs(d, exist_ok=True)
        self.workers = []
        self.outputs = []  # shuffles, storages, exports: forget what a lost host held
        self.agents = []
        self.file_server = None
        self.engine.clusters.append(self)
        if mode == "cluster":
            self._connect_agents()

    def _connect_agents(self):
        addresses = self.properties.list("engine.agents")
        if not addresses:
            self.stop()
            raise EngineError("engine.mode=cluster needs engine.agents=HOST:PORT[,HOST:PORT...]")
        self.file_server = FileServer([self.shm_dir], self.properties["engine.driver_host"])
        self.file_server.start()
        try:
            self.agents = [AgentConnection(a) for a in addresses]
        except EngineError:
            self.stop()
            raise

    def qualify(self, path, share_dir=False):
        """How executors name the driver's file `path`: as is in local mode, else a URL of the
        driver's file server (`share_dir`: also serve the rest of its directory)."""
        if self.file_server is None:
            return path
        if share_dir:
            self.file_server.add_root(os.path.dirname(path))
        return url(self.file_server.address, path)

    def forget_host(self, file_server):
        """Outputs kept on that host are lost (FETCH_FAILED): recompute them when needed."""
        for output in self.outputs:
            output.forget_host(file_server)

    def remote_executors(self, language, props, session):
        """Executors of `language` on every agent's host: Python one per core, C++ one."""
        executors = []
        affinity = props.flag("executor.affinity")
        for agent in self.agents:
            info = agent.info
            cores = props.int("executor.cores") if "executor.cores" in props.given \
                else info.cores
            memory = props.bytes("executor.memory") if "executor.memory" in props.given \
                else info.memory // 2
            if language == "python":
                for i in range(cores):
                    cpus = [info.cpus[i % len(info.cpus)]] if affinity else None
                    executors.append(RemoteExecutor(agent, language, len(executors), 1,
                                                    memory // cores, cpus, session))
            else:
                executors.append(RemoteExecutor(agent, language, len(executors), cores,
                                                memory, info.cpus if affinity else None,
                                                session))
        return executors

    def stop(self):
        for worker in self.workers:
            worker.stop()
        self.workers = []
        for agent in self.agents:
            agent.close()
        self.agents = []
        if self.file_server is not None:
            self.file_server.shutdown()
            self.file_server.server_close()
            self.file_server = None
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
        self.metrics = {"tasks": 0, "spill_files": 0, "spill_bytes": 0, "executors_lost": 0,
                        "fetch_failures": 0, "hosts_lost": 0}
        self.name = f"w{cluster.engine.next_id()}-{language}"
        self.shm_dir = os.path.join(cluster.shm_dir, self.name)
        os.makedirs(self.shm_dir, exist_ok=True)
        self.slots = []
        if cluster.agents:
            self.executors = cluster.remote_executors(language, props, cluster.engine.id)
        else:
            self.executors = self._local_executors(props)
        try:
            for ex in self.executors:
                ex.start()
            for ex in self.executors:
                ex.wait_ready()
        except EngineError:
            self.stop()
            raise
        self.slots = [Slot(ex) for ex in self.executors for _ in range(ex.cores)]
        cluster.workers.append(self)

    def _local_executors(self, props):
        instances, cores = props.int("executor.instances"), props.int("executor.cores")
        memory = props.bytes("executor.memory")
        cpus = sorted(os.sched_getaffinity(0))
        if self.language == "python":  # one single-core process per core
            specs = [(i, 1, memory // cores, [cpus[i % len(cpus)]])
                     for i in range(instances * cores)]
        else:
            specs = [(i, cores, memory, cpus) for i in range(instances)]
        pin = props.flag("executor.affinity")
        return [ExecutorProcess(self.language, i, c, m, self.cluster.scratch_dirs, self.shm_dir,
                                extra_args=["--affinity", ",".join(map(str, a))] if pin else ())
                for i, c, m, a in specs]

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

    def output_dir(self, name):
        """Where executors write outputs named `name`: this worker's shared memory dir in local
        mode; in cluster mode the executors' work dirs (`@work/`, striped over their disks)."""
        if self.cluster.agents:
            return f"@work/{self.name}/{name}"
        return self.scratch_dir(name)

    def storage_dir(self, disk):
        if self.cluster.agents:
            return self.output_dir(f"storage-{'disk' if disk else 'memory'}")
        base = self.cluster.scratch_dirs[0] if disk else self.shm_dir
        d = os.path.join(base, f"storage-{self.language}")
        os.makedirs(d, exist_ok=True)
        return d

    def read_output(self, executor, path):
        """The records of the partition file `path` written by `executor` (fetched from its
        host in cluster mode); the file is removed when it was local."""
        if not self.cluster.agents:
            records = read_file(path)
            os.remove(path)
            return records
        local = self.scratch_file("fetched")
        try:
            fetch(executor.qualify(path), local)
            return read_file(local)
        except FetchFailed as e:
            raise EngineError(f"a result on {executor.name} is lost: {e}",
                              kind="FETCH_FAILED") from None
        finally:
            if os.path.exists(local):
                os.remove(local)

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
            path = self.cluster.qualify(os.path.abspath(path), share_dir=True)
            return ttypes.Function(ref=f"{path}:{symbol}")
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
            paths.append(self.cluster.qualify(path))
        return Dataset(self, "source", n, source=FileSource(paths))

    def textFile(self, path, minPartitions=None):
        path = os.path.abspath(path)
        size = os.path.getsize(path)
        n = max(1, minPartitions or len(self.slots))
        splits = _line_splits(path, size, n)
        return Dataset(self, "source", len(splits),
                       source=TextSource(self.cluster.qualify(path, share_dir=True), splits))

    def importData(self, dataset):
        """The same records as `dataset` (of any worker), as a dataset of this worker."""
        if dataset.worker is self:
            return dataset
        return Dataset(self, "source", dataset.nparts, source=ImportSource(dataset))


def _line_splits(path, size, n):
    """Up to n (offset, length) byte ranges of the file, each starting at a line start (so an
    executor on another host can fetch exactly its range, FETCH.md)."""
    step = max(1, -(-size // n))
    starts = [0]
    with open(path, "rb") as f:
        for off in range(step, size, step):
            if off <= starts[-1]:
                continue
            f.seek(off - 1)
            start = off - 1 + len(f.readline())
            if start < size and start > starts[-1]:
                starts.append(start)
    ends = starts[1:] + [size]
    return [(a, b - a) for a, b in zip(starts, ends)] if size else [(0, 0)]


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
    """A dataset of another worker, written once as partition files (shared memory, or the
    exporting executors' work dirs in cluster mode)."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.paths = {}  # partition -> (file server or None, path)
        dataset.worker.cluster.outputs.append(self)

    def forget_host(self, file_server):
        for p, (where, _) in list(self.paths.items()):
            if where == file_server:
                del self.paths[p]

    def prepare(self):
        ds = self.dataset
        missing = [p for p in range(ds.nparts) if p not in self.paths]
        if not missing:
            return
        directory = ds.worker.output_dir(f"export{ds.id}")

        def sink_for(p, attempt):
            return ttypes.Sink(kind=ttypes.SinkKind.STORE,
                               path=os.path.join(directory, f"{p}-{attempt}.bin"))

        results = run_partitions(ds, f"export of dataset {ds.id}", sink_for, missing)
        for p, r in zip(missing, results):
            ex = r.executor
            self.paths[p] = (getattr(ex, "file_server", None), ex.qualify(r.files[0]))

    def source(self, p):
        return ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[self.paths[p][1]])
