"""Cluster mode: executors started by engine agents on other hosts (engine/rpc/agent.thrift).

A RemoteExecutor has the interface of ExecutorProcess (executors.py), so slots and the
scheduler treat both alike. When its host is gone (the agent cannot be reached) it is marked
`down`: the scheduler runs its tasks on the other executors, and a background thread starts
it again once an agent answers at the same address (Spindle's replacement member keeps the
floating IP).
"""

import threading
import time

from thrift.Thrift import TException
from thrift.transport.TTransport import TTransportException

from ..errors import EngineError
from ..fileserver import url
from ..rpc import Agent, agent_types, close_quietly, connect

AGENT_TIMEOUT_MS = 60_000
CONNECT_TIMEOUT_S = 2
REVIVE_EVERY_S = 1.0


class AgentUnreachable(EngineError):
    pass


class AgentConnection:
    """The driver's connection to one agent; the agent's executors live as long as it does."""

    def __init__(self, address):
        self.address = address
        host, _, port = address.rpartition(":")
        self._host, self._port = host, int(port)
        self._lock = threading.Lock()
        self._transport = self._client = None
        self._closed = False
        self.epoch = 0  # grows with every new connection; executors of older ones are gone
        self.info = None
        self._call(lambda c: None)  # connect; _open() says hello

    def _open(self):
        try:
            transport, client = connect(self._host, self._port, CONNECT_TIMEOUT_S * 1000,
                                        service=Agent)
        except (TTransportException, OSError) as e:
            raise AgentUnreachable(f"engine agent {self.address} unreachable: {e}") from None
        transport._TBufferedTransport__trans.setTimeout(AGENT_TIMEOUT_MS)
        self._transport, self._client = transport, client
        self.epoch += 1
        self.info = client.hello()

    def _call(self, f):
        with self._lock:
            if self._closed:
                raise AgentUnreachable(f"engine agent {self.address}: closed")
            if self._client is None:
                self._open()
            try:
                return f(self._client)
            except agent_types.AgentError as e:
                raise EngineError(f"engine agent {self.address}: {e.message}") from None
            except (TException, OSError, EOFError) as e:
                self._close()
                raise AgentUnreachable(f"engine agent {self.address} lost: {e}") from None

    def spawn(self, spec):
        return self._call(lambda c: c.spawn(spec))

    def kill(self, port):
        self._call(lambda c: c.kill(port))

    def stats(self):
        return self._call(lambda c: c.stats())

    def _close(self):
        close_quietly(self._transport)
        self._transport = self._client = None

    def close(self):
        with self._lock:
            self._closed = True
            self._close()

    def closed(self):
        return self._closed


class RemoteExecutor:
    """One executor process on an agent's host."""

    def __init__(self, agent, language, eid, cores, memory, affinity, session):
        self.agent = agent
        self.language = language
        self.id = eid
        self.cores = cores
        self.memory = memory
        self.affinity = affinity
        self.session = session
        self.generation = 0
        self.port = None
        self.epoch = None
        self.down = False
        self.pid = None
        self._lock = threading.Lock()
        self._reviving = False

    @property
    def host(self):
        return self.agent.info.host

    @property
    def file_server(self):
        return self.agent.info.file_server

    @property
    def node(self):
        """The node its host runs on (the agent's SPINDLE_NODE), else the host's address."""
        return getattr(self.agent.info, "node", None) or self.agent.info.host

    @property
    def name(self):
        return f"{self.language} executor {self.id} on {self.agent.address}"

    def qualify(self, path):
        """The URL other hosts read this executor's output `path` by."""
        return url(self.file_server, path)

    def alive(self):
        return not self.down and self.epoch == self.agent.epoch

    def start(self):
        spec = agent_types.ExecutorSpec(language=self.language, id=self.id, cores=self.cores,
                                        memory=self.memory, affinity=self.affinity,
                                        session=self.session)
        self.port = self.agent.spawn(spec)
        self.epoch = self.agent.epoch
        self.generation += 1

    def wait_ready(self):
        """start() returns once the agent saw the executor READY."""

    def restart_if(self, generation):
        """Start it again unless that happened since `generation`; mark it down (and try
        again in the background) when its agent cannot be reached."""
        with self._lock:
            if self.generation != generation or self.down:
                if self.down:
                    raise AgentUnreachable(f"{self.name} is down")
                return
            try:
                if self.alive():
                    self.agent.kill(self.port)
                self.start()  # on a new connection if the old one broke
            except AgentUnreachable:
                self.down = True
                self._revive_later()
                raise

    def _revive_later(self):
        if self._reviving:
            return
        self._reviving = True
        threading.Thread(target=self._revive, name=f"revive-{self.name}", daemon=True).start()

    def _revive(self):
        while self.down and not self.agent.closed():
            time.sleep(REVIVE_EVERY_S)
            try:
                with self._lock:
                    self.start()
                    self.down = False
            except EngineError:
                continue
        self._reviving = False

    def kill(self):
        if self.alive():
            try:
                self.agent.kill(self.port)
            except EngineError:
                pass

    stop = kill
