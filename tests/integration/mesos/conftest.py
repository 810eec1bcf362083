"""The conformance suite's Mesos master: the embedded one (started here on free loopback ports:
single-node, or a master with separate agent processes), or a real Mesos/clusterd master when
SPINDLE_MESOS_MASTER_URL=host:port is set."""
import json
import os
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pymesos import MesosSchedulerDriver, Scheduler

from tests.support.embedded_master import MesosProcess, embedded_agent, embedded_master, master_process

EXECUTOR = f"{sys.executable} {Path(__file__).parent / 'sleepy_executor.py'}"

# The credential the suite's frameworks and operator calls use against a master that authenticates
# them (a real one with --authenticate_http_frameworks, say); unset: none.
CREDENTIAL = (os.environ.get("SPINDLE_MESOS_PRINCIPAL", ""), os.environ.get("SPINDLE_MESOS_SECRET", ""))


def write_resources(path: Path, disk: Path) -> Path:
    """An agent ``--resources`` file offering ``disk`` as a whole MOUNT disk reserved to role spindle."""
    disk.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{"name": "disk", "type": "SCALAR", "scalar": {"value": 4096},
                                 "reservations": [{"type": "STATIC", "role": "spindle"}],
                                 "disk": {"source": {"type": "MOUNT", "mount": {"root": str(disk)}}}}]))
    return path


@pytest.fixture
def master(tmp_path):
    external = os.environ.get("SPINDLE_MESOS_MASTER_URL")
    if external:
        yield external, None
        return
    disk = tmp_path / "disk1"
    resources = write_resources(tmp_path / "resources.json", disk)
    with embedded_master(tmp_path, SPINDLE_MESOS_RESOURCES=str(resources), SPINDLE_AGENT_CPUS="4",
                         SPINDLE_AGENT_MEM_MB="4096") as url:
        yield url, str(disk)


@dataclass
class Cluster:
    """A master and its agents: ours (processes a test may SIGKILL and restart), or a real master's."""

    url: str
    master: MesosProcess | None = None  # None: a real master (SPINDLE_MESOS_MASTER_URL)
    agents: dict[str, MesosProcess] = field(default_factory=dict)  # node name → agent process
    disks: dict[str, str] = field(default_factory=dict)  # node name → its MOUNT disk root
    credential: tuple[str, str] = ("", "")  # for operator calls, when the master authenticates them

    def require_own_processes(self, why: str) -> None:
        if self.master is None:
            pytest.skip(f"against a real master ({self.url}) this test cannot {why}: it SIGKILLs and restarts "
                        "the embedded master's or agents' processes")

    def wait_agents(self, count: int, timeout: float = 30) -> list[dict]:
        """Wait until ``count`` agents are active; returns GET_AGENTS' agents."""
        deadline = time.monotonic() + timeout
        while True:
            agents = operator(self.url, "GET_AGENTS", self.credential)["get_agents"]["agents"]
            if sum(a["active"] for a in agents) >= count:
                return agents
            assert time.monotonic() < deadline, f"fewer than {count} active agents: {agents}"
            time.sleep(0.2)


@pytest.fixture
def make_cluster(tmp_path):
    """``make_cluster(agents, credential, **settings)``: the embedded master with ``agents`` agent
    processes named node-0…, each with its own port, work dir and MOUNT disk, all given the SPINDLE_…
    ``settings`` (e.g. SPINDLE_MESOS_AGENT_TIMEOUT_S; ``credential`` for operator calls to a master
    given credentials); all stopped afterwards (agents with SIGUSR1: their executors too). Against a
    real master: that master, as it is."""
    with ExitStack() as stack:
        def make(agents: int, credential: tuple[str, str] = CREDENTIAL, **settings: str) -> Cluster:
            external = os.environ.get("SPINDLE_MESOS_MASTER_URL")
            if external:
                return Cluster(external, credential=CREDENTIAL)
            master = stack.enter_context(master_process(tmp_path / "master", **settings))
            cluster = Cluster(master.address, master, credential=credential)
            for i in range(agents):
                node = f"node-{i}"
                resources = write_resources(tmp_path / node / "resources.json", tmp_path / node / "disk1")
                cluster.agents[node] = stack.enter_context(embedded_agent(
                    master.address, tmp_path / node, node, SPINDLE_MESOS_RESOURCES=str(resources),
                    SPINDLE_AGENT_CPUS="4", SPINDLE_AGENT_MEM_MB="4096", **settings))
                cluster.disks[node] = str(tmp_path / node / "disk1")
            cluster.wait_agents(agents)
            return cluster

        yield make


class Recorder(Scheduler):
    """A test framework that records what the master tells it."""

    def __init__(self):
        self.offers, self.updates, self.rescinded, self.lock = [], [], [], threading.Condition()
        self.lost_agents: list[str] = []  # FAILURE events without an executor (slaveLost)
        self.framework_id = None
        self.subscriptions = 0  # SUBSCRIBED events (first registration and every re-registration)
        self.decline_with = None  # refuse_seconds to decline offers with; None = keep them

    def registered(self, driver, framework_id, master_info):
        with self.lock:
            self.framework_id = framework_id["value"]
            self.subscriptions += 1
            self.lock.notify_all()

    def reregistered(self, driver, master_info):  # a failover subscribe with a known framework id
        with self.lock:
            self.framework_id = driver.framework_id
            self.subscriptions += 1
            self.lock.notify_all()

    def slaveLost(self, driver, agent_id):  # noqa: N802
        with self.lock:
            self.lost_agents.append(agent_id["value"])
            self.lock.notify_all()

    def resourceOffers(self, driver, offers):  # noqa: N802
        with self.lock:
            self.offers += offers
            self.lock.notify_all()
        if self.decline_with is not None:
            for offer in offers:
                driver.declineOffer([offer["id"]], {"refuse_seconds": self.decline_with})

    def offerRescinded(self, driver, offer_id):  # noqa: N802
        with self.lock:
            self.rescinded.append(offer_id["value"])
            self.lock.notify_all()

    def statusUpdate(self, driver, update):  # noqa: N802
        with self.lock:
            self.updates.append(update)
            self.lock.notify_all()

    def wait(self, predicate, timeout=30):
        with self.lock:
            assert self.lock.wait_for(lambda: predicate(self), timeout), "timed out waiting"


@contextmanager
def framework(master_url: str, recorder: Recorder, **options: Any):
    """A started framework driver, stopped (torn down) afterwards."""
    driver = start_framework(master_url, recorder, **options)
    try:
        yield driver
    finally:
        driver.stop()
        driver.join()


def start_framework(master_url: str, recorder: Recorder, framework_id: str | None = None,
                    implicit_acknowledgements: bool = True, partition_aware: bool = False,
                    credential: tuple[str, str] = CREDENTIAL) -> MesosSchedulerDriver:
    capabilities = [{"type": "MULTI_ROLE"}] + ([{"type": "PARTITION_AWARE"}] if partition_aware else [])
    info = {"user": "root", "name": "spindle-conformance", "roles": ["spindle"], "failover_timeout": 3600,
            "capabilities": capabilities}
    if framework_id:
        info["id"] = {"value": framework_id}
    principal, secret = credential
    if principal:
        info["principal"] = principal
    driver = MesosSchedulerDriver(recorder, info, master_url, use_addict=True,
                                  implicit_acknowledgements=implicit_acknowledgements,
                                  **({"principal": principal, "secret": secret} if principal else {}))
    driver.start()
    return driver


def operator(master_url: str, call: str, credential: tuple[str, str] = CREDENTIAL) -> dict:
    auth = credential if credential[0] else None
    return httpx.post(f"http://{master_url}/api/v1", json={"type": call}, auth=auth).raise_for_status().json()
