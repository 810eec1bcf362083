"""Python executor: a single-core Thrift server running tasks on partitions it holds in memory.

Run as `python -m spindle_engine.executor --port N --id K --cores 1 --memory BYTES --scratch DIRS`
(engine/rpc/EXECUTOR_CLI.md).
"""

import argparse
import itertools
import os
import sys
import threading
import traceback

from thrift.transport import TSocket, TTransport

from .errors import FunctionFailed, TaskFailure
from .functions import Context, FunctionLoader, culprit
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

    def __init__(self, executor_id, memory, scratch_dirs):
        self.id = executor_id
        self.memory = memory
        self.scratch_dirs = scratch_dirs
        self.loader = FunctionLoader()
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
        try:
            it = open_source(task.source, self.loader, self.ctx, self.cache, env.used)
            it = run_ops(it, task.ops, self.loader, self.ctx, env.used)
            if task.sink.fn is not None:
                env.function(task.sink.fn)
            for uf in _distinct(env.used):
                _hook(uf, "before", self.ctx)
            result = run_sink(task.sink, it, task.partition, env)
            for uf in _distinct(env.used):
                _hook(uf, "after", self.ctx)
        except TaskFailure as e:
            raise ttypes.TaskError(kind=e.kind, message=str(e), function=e.function or "",
                                   partition=task.partition) from None
        except Exception as e:
            ref = culprit(e, env.used)
            if ref is None:  # an engine bug: report it with its traceback
                raise ttypes.TaskError(kind="INTERNAL", message=traceback.format_exc(limit=5),
                                       function="", partition=task.partition) from e
            raise ttypes.TaskError(kind="FUNCTION_FAILED", message=f"{type(e).__name__}: {e}",
                                   function=ref, partition=task.partition) from e
        result.spill_files = env.spill_files
        result.spill_bytes = env.spill_bytes
        return result

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


def serve(port, handler):
    """Serve one connection at a time (one task at a time: one process per core)."""
    server = TSocket.TServerSocket(host="127.0.0.1", port=port)
    server.listen()
    print(f"READY {port}", flush=True)
    os.dup2(2, 1)  # user code printing must not fill the pipe the backend stops reading
    processor = Executor.Processor(handler)
    pfactory = protocol_factory()
    while not handler.stopping:
        client = server.accept()
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
    args, _unknown = p.parse_known_args(argv)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    threading.Thread(target=_exit_on_stdin_eof, daemon=True).start()
    scratch = [d for d in args.scratch.split(",") if d]
    serve(args.port, ExecutorHandler(args.id, args.memory, scratch))


if __name__ == "__main__":
    main()
