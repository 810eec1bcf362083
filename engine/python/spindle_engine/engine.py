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

from . import hdfs
from .backend.executors import ExecutorLost, ExecutorProcess, Slot
from .backend.plan import run_partitions
from .backend.remote import AgentConnection, RemoteExecutor
from .codec import read_file, write_partition
from .dataset import Dataset
from .errors import EngineError
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
    "locality.wait_s": "3",
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
    """The engine of this driver process: the root of its clusters, workers and datasets.

    There is one engine per driver process. ``Engine.start()`` creates it (or returns the running
    one) and ``Engine.stop()`` stops every cluster started since, with their executors; it also
    stops when the process exits. The engine is a context manager: ``with Engine.start():``
    stops it at the end of the block. The backend (planner and scheduler) runs inside the driver,
    as a library.

    Examples
    --------
    >>> from spindle_engine import Cluster, Engine, Worker
    >>> with Engine.start():
    ...     worker = Worker(Cluster(), "python")
    ...     worker.parallelize(range(10)).map(lambda x: x * x).reduce(lambda a, b: a + b)
    285
    """

    _current = None

    def __init__(self):
        self.id = uuid.uuid4().hex[:10]
        self.clusters = []
        self._ids = itertools.count()
        self._lock = threading.Lock()

    @classmethod
    def start(cls):
        """Start the engine of this process, or return the one already started.

        Returns
        -------
        Engine
            The engine (a context manager that stops it on exit).

        Examples
        --------
        >>> engine = Engine.start()
        >>> Engine.start() is engine
        True
        """
        if cls._current is None:
            cls._current = Engine()
            atexit.register(cls.stop)  # executors and shared memory go with the driver
        return cls._current

    @classmethod
    def stop(cls):
        """Stop the engine: every cluster it started, their workers and executors.

        Does nothing when no engine runs. Datasets of the stopped workers cannot run jobs any
        more; ``Engine.start()`` starts a new engine.

        Examples
        --------
        >>> engine = Engine.start()
        >>> Engine.stop()
        >>> Engine.start() is engine
        False
        """
        engine, cls._current = cls._current, None
        if engine is not None:
            for cluster in engine.clusters:
                cluster.stop()

    @classmethod
    def current(cls):
        """Return the running engine.

        Returns
        -------
        Engine

        Raises
        ------
        EngineError
            When no engine is started.

        Examples
        --------
        >>> Engine.start() is Engine.current()
        True
        """
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
    """The resources workers run on: executor instances, cores, memory, scratch and shared-memory dirs.

    In local mode (the default) executors are processes on this machine. In cluster mode
    (``engine.mode=cluster``) they are started by the engine agents named in ``engine.agents``, one
    per host, and partitions cross hosts through the agents' file servers. A driver started as a
    Spindle job (``spindle submit`` to an ``engine`` cluster) gets the cluster-mode properties
    from its environment, so ``Cluster()`` needs no arguments there. The engine must be started
    first; ``Engine.stop()`` stops the cluster.

    Parameters
    ----------
    properties : Properties or dict, optional
        Engine properties (see :class:`Properties` and engine/README.md), e.g.
        ``{"executor.instances": 2, "executor.cores": 1, "executor.memory": "1GB"}``. Properties
        the engine does not know are passed to user functions (``context.props()``).

    Raises
    ------
    EngineError
        When the engine is not started, ``engine.mode`` is neither ``local`` nor ``cluster``, or
        cluster mode has no agents or cannot reach one.

    Examples
    --------
    >>> from spindle_engine import Cluster, Engine, Properties
    >>> engine = Engine.start()
    >>> cluster = Cluster(Properties({"executor.instances": 2, "executor.memory": "512MB"}))
    >>> cluster.properties.int("executor.instances")
    2

    Cluster mode, with an engine agent on each host:

    >>> Cluster({"engine.mode": "cluster", "engine.agents": "10.0.0.5:7077,10.0.0.6:7077",
    ...          "engine.driver_host": "10.0.0.9"})  # doctest: +SKIP
    """

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
        """Stop the cluster's workers and executors and remove its scratch and shared-memory dirs.

        ``Engine.stop()`` calls it for every cluster.
        """
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
    """Executors of one language on a cluster; it creates the datasets they compute.

    A ``"python"`` worker runs one single-threaded Python process per core and takes functions as
    Python callables or ``"file.py:Class"`` references; a ``"cpp"`` worker runs one C++ process
    per instance (per host in cluster mode) serving ``executor.cores`` tasks at a time and takes
    functions as ``"lib.so:Symbol"`` references. Datasets of different workers of a cluster are
    combined after ``importData``. ``worker.metrics`` counts tasks, spills, lost executors,
    failed fetches and the datasets the planner's walks over lineage visited
    (``lineage_visits``). The examples of its methods run on ``worker``, a Python worker.

    Parameters
    ----------
    cluster : Cluster
        The cluster whose resources the executors use.
    language : str
        ``"python"`` or ``"cpp"``.

    Raises
    ------
    ValueError
        When ``language`` is neither ``"python"`` nor ``"cpp"``.
    EngineError
        When the executors cannot be started.

    Examples
    --------
    >>> from spindle_engine import Cluster, Engine, Worker
    >>> engine = Engine.start()
    >>> cluster = Cluster()
    >>> worker = Worker(cluster, "python")
    >>> pairs = worker.parallelize(["b", "a", "b"]).map(lambda w: (w, 1))
    >>> pairs.reduceByKey(lambda x, y: x + y).sortByKey().collect()
    [('a', 1), ('b', 2)]

    A C++ worker calls functions of a shared library built against engine/cpp/include
    (``engine/cpp/build.sh`` builds the examples):

    >>> cpp = Worker(cluster, "cpp")  # doctest: +SKIP
    >>> cpp.importData(pairs).reduceByKey("engine/cpp/build/examples/libwordcount.so:Join").collect()  # doctest: +SKIP
    [('a', 1), ('b', 2)]
    """

    def __init__(self, cluster, language):
        if language not in ("python", "cpp"):
            raise ValueError(f"unknown worker language {language!r} (python or cpp)")
        self.cluster = cluster
        self.language = language
        props = cluster.properties
        self.properties = dict(props)
        self.max_failures = props.int("task.max_failures")
        self.metrics = {"tasks": 0, "spill_files": 0, "spill_bytes": 0, "executors_lost": 0,
                        "fetch_failures": 0, "hosts_lost": 0, "lineage_visits": 0}
        self.locality = []  # per stage reading located input: tasks node_local / any
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
        host in cluster mode); the file is removed when it was local.

        Raises FetchFailed (naming the host's file server) when the host cannot serve it."""
        if not self.cluster.agents:
            records = read_file(path)
            os.remove(path)
            return records
        local = self.scratch_file("fetched")
        try:
            fetch(executor.qualify(path), local)
            return read_file(local)
        finally:
            if os.path.exists(local):
                os.remove(local)

    def fetch_output(self, executor, path, dest):
        """Copy the file `path` that `executor` wrote on its host to the driver's file `dest`,
        streamed from the host's file server in blocks (never whole in memory).

        Raises FetchFailed (naming the host's file server) when the host cannot serve it."""
        fetch(executor.qualify(path), dest)

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
        """Stop this worker's executors (``Cluster.stop()`` and ``Engine.stop()`` call it)."""
        for slot in self.slots if hasattr(self, "slots") else []:
            slot.close()
        for ex in self.executors:
            ex.stop()

    # -- dataset sources --

    def parallelize(self, data, numSlices=None):
        """Distribute a local collection as a dataset.

        The records are written as partition files by the driver (shared memory in local mode,
        served to the executors in cluster mode).

        Parameters
        ----------
        data : iterable
            The records (any values of the engine's format: None, bool, int, float, str, bytes,
            tuples, lists, dicts).
        numSlices : int, optional
            Number of partitions (default: the worker's total number of cores); records are
            split into contiguous, nearly equal slices.

        Returns
        -------
        Dataset

        Examples
        --------
        >>> ds = worker.parallelize(range(10), 3)
        >>> ds.getNumPartitions(), ds.collect()
        (3, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        """
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
        """Read a UTF-8 text file as a dataset of its lines (without line ends).

        The file is cut into byte ranges at line starts, one partition each; in cluster mode each
        executor fetches its range from the driver. An HDFS file or directory (``hdfs://``,
        ``webhdfs://``; engine/README.md "HDFS") gives one partition per block, each run on an
        executor of a node holding a replica when there is one (python workers only).

        Parameters
        ----------
        path : str
            The file, on the driver's machine; or ``hdfs://namenode:8020/path`` /
            ``hdfs:///path`` (a directory: all its files but ``_*`` and ``.*``).
        minPartitions : int, optional
            Number of ranges to cut (default: the worker's total number of cores; for HDFS one
            per block); a small file may give fewer partitions.

        Returns
        -------
        Dataset
            One string per line.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        ...     _ = f.write("to be\\nor not\\n")
        >>> worker.textFile(f.name).flatMap(lambda line: line.split()).collect()
        ['to', 'be', 'or', 'not']
        """
        if hdfs.is_hdfs(path):
            return self._hdfs_text_file(path, minPartitions)
        path = os.path.abspath(path)
        size = os.path.getsize(path)
        n = max(1, minPartitions or len(self.slots))
        splits = _line_splits(path, size, n)
        return Dataset(self, "source", len(splits),
                       source=TextSource(self.cluster.qualify(path, share_dir=True), splits))

    def _hdfs_text_file(self, url, min_partitions):
        """One partition per HDFS block (smaller when `min_partitions` asks for more), each
        preferring the executors on the nodes of the block's DataNodes."""
        if self.language != "python":
            raise ValueError(f"a {self.language} worker cannot read {url}: read it with a python "
                             "worker and hand it over with importData")
        where = hdfs.parse(url)
        files = hdfs.input_files(where)
        split_size = None
        if min_partitions:
            total = sum(length for _, length, _ in files)
            split_size = max(1, -(-total // min_partitions))
        splits = hdfs.block_splits([(f.url, length, blocks) for f, length, blocks in files],
                                   split_size)
        return Dataset(self, "source", len(splits),
                       source=HdfsTextSource(splits, hdfs.datanode_nodes()))

    def importData(self, dataset):
        """Return the records of a dataset of any worker as a dataset of this worker.

        This is how workers of different languages share data (e.g. a Python tokenizer feeding a
        C++ reducer): this worker's executors read the other worker's partition files directly,
        in the same binary format, never through the driver.

        Parameters
        ----------
        dataset : Dataset
            A dataset of any worker of the same cluster.

        Returns
        -------
        Dataset
            ``dataset`` itself when it is already this worker's; else a dataset with the same
            records and partitions.

        Examples
        --------
        >>> other = Worker(worker.cluster, "python")
        >>> other.importData(worker.parallelize([1, 2, 3])).map(lambda x: -x).collect()
        [-1, -2, -3]
        """
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
    return [(a, b - a) for a, b in zip(starts, ends, strict=False)] if size else [(0, 0)]


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


class HdfsTextSource:
    """Block splits of HDFS files, read by the executors from the DataNodes (hdfs.py)."""

    def __init__(self, splits, datanode_nodes):
        self.splits = splits
        self._nodes = [hdfs.preferred_nodes(s.hosts, datanode_nodes) if s.hosts else None
                       for s in splits]

    def prepare(self):
        pass

    def nodes(self, p):
        """The nodes holding a replica of partition p's block (None: no preference)."""
        return self._nodes[p]

    def source(self, p):
        split = self.splits[p]
        return ttypes.Source(kind=ttypes.SourceKind.TEXT, text_path=split.path,
                             offset=split.offset, length=split.length)


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
        for p, r in zip(missing, results, strict=False):
            ex = r.executor
            self.paths[p] = (getattr(ex, "file_server", None), ex.qualify(r.files[0]))

    def source(self, p):
        return ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[self.paths[p][1]])
