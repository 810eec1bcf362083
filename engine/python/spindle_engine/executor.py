"""Python executor: a single-core Thrift server running tasks on partitions it holds in memory.

Run as `python -m spindle_engine.executor --port N --id K --cores 1 --memory BYTES --scratch DIRS`
(engine/rpc/EXECUTOR_CLI.md).
"""

import argparse
import copy
import itertools
import os
import sys
import threading
import traceback

from thrift.transport import TSocket, TTransport

from .auth import AuthFailed, secret_from_env, server_handshake
from .errors import FetchFailed, FunctionFailed, TaskFailure
from .functions import Context, FunctionLoader, culprit
from .hdfs import is_hdfs
from .hostfiles import HostFiles
from .pipeline import run_ops
from .rpc import Executor, protocol_factory, ttypes
from .sinks import run_sink
from .sources import open_source


class TaskEnv:
    """Per-task view of the executor: functions, context, cache, memory, spill counters."""

    def __init__(self, executor):
        self.loader = executor.loader
        self.ctx = executor.ctx
        self.cache = executor.cache
        self.memory = executor.memory
        self._executor = executor
        self.used = []
        self.spill_files = 0
        self.spill_bytes = 0

    def function(self, fn):
        uf = self.loader.load(fn)
        self.used.append(uf)
        return uf

    def spill_path(self):
        return self._executor.spill_path()


class ExecutorHandler:
    """Implements the Executor Thrift service."""

    def __init__(self, executor_id, memory, scratch_dirs, files=None):
        self.id = executor_id
        self.memory = memory
        self.scratch_dirs = scratch_dirs
        self.files = files or HostFiles(None, scratch_dirs, scratch_dirs[0])
        self.loader = FunctionLoader(self.files.function_file)
        self.ctx = Context({}, executor_id)
        self.cache = {}
        self._spills = itertools.count()
        self.stopping = False

    def spill_path(self):
        n = next(self._spills)
        directory = self.scratch_dirs[n % len(self.scratch_dirs)]
        return os.path.join(directory, f"spill-py{self.id}-{os.getpid()}-{n}.bin")

    def hello(self, properties):
        self.ctx.properties = dict(properties or {})
        return ttypes.ExecutorInfo(language="python", id=self.id, pid=os.getpid(), cores=1)

    def run(self, task):
        env = TaskEnv(self)
        self.ctx.partition = task.partition
        self.ctx.stage = task.stage
        fetched = []
        try:
            source = self._local_source(task.source, fetched)
            it = open_source(source, self.loader, self.ctx, self.cache, env.used)
            it = run_ops(it, task.ops, self.loader, self.ctx, env.used)
            if task.sink.fn is not None:
                env.function(task.sink.fn)
            for uf in _distinct(env.used):
                _hook(uf, "before", self.ctx)
            result = run_sink(self._local_sink(task.sink), it, task.partition, env)
            for uf in _distinct(env.used):
                _hook(uf, "after", self.ctx)
        except TaskFailure as e:
            raise ttypes.TaskError(kind=e.kind, message=str(e), function=e.function or "",
                                   partition=task.partition,
                                   host=e.host if isinstance(e, FetchFailed) else None) from None
        except Exception as e:
            ref = culprit(e, env.used)
            if ref is None:  # an engine bug: report it with its traceback
                raise ttypes.TaskError(kind="INTERNAL", message=traceback.format_exc(limit=5),
                                       function="", partition=task.partition) from e
            raise ttypes.TaskError(kind="FUNCTION_FAILED", message=f"{type(e).__name__}: {e}",
                                   function=ref, partition=task.partition) from e
        finally:
            for path in fetched:
                os.remove(path)
        result.spill_files = env.spill_files
        result.spill_bytes = env.spill_bytes
        return result

    def _local_source(self, src, fetched):
        """`src` with every input readable here (remote files fetched, FETCH.md)."""
        if not any(p.startswith("tcp://") for p in
                   [*(src.paths or ()), *(src.right_paths or ()), src.text_path or ""]):
            return src
        src = copy.copy(src)
        if src.paths:
            src.paths = [self.files.input(p, fetched) for p in src.paths]
        if src.right_paths:
            src.right_paths = [self.files.input(p, fetched) for p in src.right_paths]
        if src.text_path:
            src.text_path, src.offset, src.length = self.files.text_input(
                src.text_path, src.offset or 0, src.length or 0, fetched)
        return src

    def _local_sink(self, sink):
        """`sink` with its output paths resolved (`@work/` striped, parent dirs made)."""
        if not sink.path and not sink.path_prefix:
            return sink
        sink = copy.copy(sink)
        if sink.path and not is_hdfs(sink.path):  # an HDFS file is written where it is named
            sink.path = self.files.output(sink.path)
        if sink.path_prefix:
            sink.path_prefix = self.files.output(sink.path_prefix)
        return sink

    def uncache(self, cache_keys):
        for key in cache_keys:
            self.cache.pop(key, None)

    def shutdown(self):
        self.stopping = True


def _distinct(ufs):
    return list({id(u): u for u in ufs}.values())


def _hook(uf, name, ctx):
    try:
        getattr(uf, name)(ctx)
    except Exception as e:
        raise FunctionFailed(f"{name}(): {type(e).__name__}: {e}", uf.ref) from e


def _exit_on_stdin_eof():
    """The backend holds our stdin; EOF means it is gone, so we go too."""
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        os._exit(0)


def serve(port, handler, bind="127.0.0.1"):
    """Serve one connection at a time (one task at a time: one process per core)."""
    server = TSocket.TServerSocket(host=bind, port=port)
    server.listen()
    print(f"READY {port}", flush=True)
    os.dup2(2, 1)  # user code printing must not fill the pipe the backend stops reading
    processor = Executor.Processor(handler)
    pfactory = protocol_factory()
    secret = secret_from_env()  # the cluster's (rpc/AUTH.md); None: no authentication
    while not handler.stopping:
        client = server.accept()
        try:  # no task is read (nor its functions unpickled) before the caller is authenticated
            server_handshake(client.handle, secret)
        except (AuthFailed, OSError) as e:
            print(f"executor {handler.id}: refused a connection: {e}", file=sys.stderr, flush=True)
            client.close()
            continue
        trans = TTransport.TBufferedTransport(client, 1 << 16)
        proto = pfactory.getProtocol(trans)
        try:
            while not handler.stopping:
                processor.process(proto, proto)
        except TTransport.TTransportException:
            pass
        finally:
            trans.close()
    os._exit(0)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--cores", type=int, default=1)
    p.add_argument("--memory", type=int, default=1 << 30)
    p.add_argument("--scratch", default="/tmp")
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--advertise", default=None)
    p.add_argument("--work", default=None)
    p.add_argument("--fetch-dir", default=None)
    p.add_argument("--affinity", default=None)
    args, _unknown = p.parse_known_args(argv)
    return args


def _dirs(value):
    return [d for d in (value or "").split(",") if d]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    threading.Thread(target=_exit_on_stdin_eof, daemon=True).start()
    if args.affinity:
        os.sched_setaffinity(0, {int(c) for c in _dirs(args.affinity)})
    scratch = _dirs(args.scratch)
    work = _dirs(args.work) or scratch
    files = HostFiles(args.advertise, work, args.fetch_dir or work[0])
    serve(args.port, ExecutorHandler(args.id, args.memory, scratch, files), args.bind)


if __name__ == "__main__":
    main()
