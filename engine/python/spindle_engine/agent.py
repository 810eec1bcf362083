"""Engine agent: starts a driver's executors on this host and serves its files (cluster mode).

Run on every engine member (engine/rpc/agent.thrift):
  python -m spindle_engine.agent --bind IP --port 7077 --work /data/1,/data/2
Prints `READY <port>`. Executors started over a connection die with it, and the files they
wrote under the work dirs (`<work dir>/<session>/`) are removed.
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading

from thrift.transport import TSocket, TTransport

from .auth import AuthFailed, secret_from_env, server_handshake
from .backend.executors import ExecutorProcess
from .errors import EngineError
from .fileserver import FileServer
from .rpc import Agent, agent_types, protocol_factory


def host_memory():
    """Bytes this host may use: the cgroup (v1 or v2) memory limit, else physical memory."""
    limits = []
    for path in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
        try:
            with open(path) as f:
                value = f.read().strip()
            if value.isdigit():
                limits.append(int(value))
        except OSError:
            pass
    limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return min(limits)


class AgentHost:
    """What the host offers: address, cpus, memory, work dirs, file server."""

    def __init__(self, bind, work_dirs, cores=None, memory=None, cpu_offset=0):
        self.bind = bind
        self.work_dirs = work_dirs
        cpus = sorted(os.sched_getaffinity(0))
        shift = cpu_offset % len(cpus)  # members sharing a node pin to different CPUs first
        self.cpus = cpus[shift:] + cpus[:shift]
        self.cores = cores or len(self.cpus)
        self.memory = memory or host_memory()
        self.secret = secret_from_env()  # the cluster's (rpc/AUTH.md); None: no authentication
        self.files = FileServer(work_dirs, bind, secret=self.secret).start()

    def info(self):
        return agent_types.AgentInfo(host=self.bind, file_server=self.files.address,
                                     cores=self.cores, memory=self.memory,
                                     work_dirs=self.work_dirs, cpus=self.cpus,
                                     node=os.environ.get("SPINDLE_NODE"))


class AgentHandler:
    """One driver connection: the executors it started, stopped when it closes."""

    def __init__(self, host):
        self.host = host
        self.executors = {}
        self.sessions = set()

    def hello(self):
        return self.host.info()

    def spawn(self, spec):
        if spec.language not in ("python", "cpp") or not spec.session.isalnum():
            raise agent_types.AgentError(f"bad executor spec {spec}")
        self.sessions.add(spec.session)
        work = [os.path.join(d, "spindle-engine", spec.session) for d in self.host.work_dirs]
        scratch = [os.path.join(d, "spill") for d in work]
        for d in scratch:
            os.makedirs(d, exist_ok=True)
        extra = ["--advertise", self.host.files.address, "--work", ",".join(work),
                 "--fetch-dir", os.path.join(work[0], "fetch")]
        if spec.affinity:
            extra += ["--affinity", ",".join(map(str, spec.affinity))]
        ex = ExecutorProcess(spec.language, spec.id, spec.cores, spec.memory, scratch, work[0],
                             bind=self.host.bind, extra_args=extra)
        try:
            ex.start()
            ex.wait_ready()
        except EngineError as e:
            raise agent_types.AgentError(str(e)) from None
        self.executors[ex.port] = ex
        return ex.port

    def alive(self, port):
        ex = self.executors.get(port)
        return ex is not None and ex.alive()

    def kill(self, port):
        ex = self.executors.pop(port, None)
        if ex is not None:
            ex.kill()

    def stats(self):
        return dict(self.host.files.stats)

    def close(self):
        for ex in self.executors.values():
            ex.stop()
        self.executors.clear()
        for session in self.sessions:
            for d in self.host.work_dirs:
                shutil.rmtree(os.path.join(d, "spindle-engine", session), ignore_errors=True)


def _serve_connection(client, host):
    try:  # nothing of the Agent protocol is read before the caller proved it holds the secret
        server_handshake(client.handle, host.secret)
    except (AuthFailed, OSError) as e:
        print(f"agent: refused a connection: {e}", file=sys.stderr, flush=True)
        client.close()
        return
    handler = AgentHandler(host)
    processor = Agent.Processor(handler)
    trans = TTransport.TBufferedTransport(client, 1 << 16)
    proto = protocol_factory().getProtocol(trans)
    try:
        while True:
            processor.process(proto, proto)
    except (TTransport.TTransportException, EOFError, OSError):
        pass
    finally:
        handler.close()
        trans.close()


def serve(host, port):
    server = TSocket.TServerSocket(host=host.bind, port=port)
    server.listen()
    print(f"READY {server.handle.getsockname()[1]}", flush=True)
    while True:
        client = server.accept()
        threading.Thread(target=_serve_connection, args=(client, host), daemon=True).start()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bind", default="127.0.0.1", help="this host's address (the member's IP)")
    p.add_argument("--port", type=int, default=7077)
    p.add_argument("--work", default=tempfile.gettempdir(),
                   help="comma-separated dedicated disks (spill, shuffle, DISK storage)")
    p.add_argument("--cores", type=int, default=None)
    p.add_argument("--memory", type=int, default=None)
    p.add_argument("--cpu-offset", type=int, default=0,
                   help="rotate the CPU list executors are pinned to (the member's index)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    work = [os.path.abspath(d) for d in args.work.split(",") if d]
    serve(AgentHost(args.bind, work, args.cores, args.memory, args.cpu_offset), args.port)


if __name__ == "__main__":
    main()
