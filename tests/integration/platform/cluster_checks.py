"""Checks shared by the end-to-end cluster tests on the running platform."""
import time
from pathlib import Path

import dns.resolver
import docker

from spindle_client.client import SpindleClient
from spindle_common.clients import DiskClient, NetworkClient
from spindle_common.errors import ApiError
from tests.support.nodes import STATE_DIR

RESOLVER = dns.resolver.Resolver(configure=False)
RESOLVER.nameservers, RESOLVER.port = ["127.0.0.1"], 8600


def container_of(member: dict):
    """The one running container of a cluster member (a member view with its ``member_id``)."""
    [container] = docker.from_env().containers.list(filters={"label": f"io.spindle.member={member['member_id']}"})
    return container


def process_uids(container) -> set[str]:
    """The uids of every process in the container, as ps on the host sees them (``docker top``): what
    the member runs as, not what a new ``docker exec`` would (and no exec, whose output Docker can lose
    for a short-lived command: an empty ``id -u`` failed the project CI once)."""
    top = container.top(ps_args="-o pid,uid")
    column = top["Titles"].index("UID")
    return {row[column] for row in top["Processes"]}


def platform_jvm_options() -> list[str]:
    """The JVM options the running orchestrator renders into the products' JVMs
    (``SPINDLE_PRODUCT_JVM_OPTIONS`` in its environment, as deploy/up started it)."""
    pid = (STATE_DIR / "run" / "orchestrator.pid").read_text().strip()
    environ = dict(entry.partition("=")[::2] for entry in
                   Path(f"/proc/{pid}/environ").read_text(errors="replace").split("\0") if entry)
    return environ.get("SPINDLE_PRODUCT_JVM_OPTIONS", "").split()


def jvm_arguments(container) -> list[str]:
    """The command line of the JVM a member's container runs (its main process, or under docker-init:
    the first java process down from it)."""
    pids = [int(container.attrs["State"]["Pid"])]
    while pids:
        pid = pids.pop(0)
        try:
            arguments = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
            children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                        for c in (task / "children").read_text().split()]
        except OSError:  # ended meanwhile
            continue
        if arguments and arguments[0].endswith("java"):
            return arguments
        pids += children
    raise AssertionError(f"no JVM runs in {container.name}")


def assert_jvm_has_platform_options(container) -> None:
    """The platform's JVM options (make test: C1 only) reached the JVM the member's container runs."""
    arguments = jvm_arguments(container)
    assert all(option in arguments for option in platform_jvm_options()), arguments


def wait_settled(client: SpindleClient, cluster: dict, states: tuple[str, ...], timeout: float = 300) -> dict:
    """Poll the cluster through the public API until it is in one of ``states``."""
    deadline = time.monotonic() + timeout
    while True:
        cluster = client.cluster(cluster)
        if cluster["state"] in states:
            return cluster
        if time.monotonic() > deadline:
            raise AssertionError(f"cluster stuck in {cluster['state']} after {timeout:.0f} s: {cluster}")
        time.sleep(0.5)


def racks_of(members: list[dict]) -> dict[str, str]:
    """The rack Spindle gave each member's container (SPINDLE_RACK: its node's failure domain when it
    was placed; other tests may move this machine's node into a rack and out again meanwhile)."""
    racks = {}
    for member in members:
        env = dict(v.split("=", 1) for v in container_of(member).attrs["Config"]["Env"])
        racks[member["member_id"]] = env["SPINDLE_RACK"]
    return racks


def running_executors(member_ids: list[str]) -> set[str]:
    """Ids of the Mesos executors with a live process (on this machine's embedded agent) for these members."""
    executors = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        executor = next((v[len(b"MESOS_EXECUTOR_ID="):].decode() for v in environ
                         if v.startswith(b"MESOS_EXECUTOR_ID=")), None)
        if executor and any(executor.startswith(f"{m}.") for m in member_ids):
            executors.add(executor)
    return executors


def assert_nothing_left(platform_env: dict, cluster: dict) -> None:
    """No container or executor process of the cluster, no IP or DNS name of its members, every
    disk wiped and free."""
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    containers = docker.from_env().containers.list(all=True, filters={"label": f"io.spindle.cluster={cluster['id']}"})
    assert containers == [], [c.name for c in containers]
    members = [m["member_id"] for m in cluster["members"]]
    with NetworkClient("http://127.0.0.1:8084", token, actor="test", role="admin") as network, \
            DiskClient("http://127.0.0.1:8083", token, actor="test", role="admin") as disks:
        for member in members:
            try:
                held = network.request("GET", "/allocations", params={"owner": member})
            except ApiError as exc:  # NOT_ALLOCATED
                assert exc.status == 404, exc
                held = []
            assert held == [], f"{member} still holds {held}"
        for member in cluster["members"]:
            if member["dns_name"]:
                try:
                    RESOLVER.resolve(member["dns_name"], "A")
                    raise AssertionError(f"{member['dns_name']} still resolves")
                except dns.resolver.NXDOMAIN:
                    pass
        deadline = time.monotonic() + 30
        while running_executors(members) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert running_executors(members) == set(), "executors exit once their tasks ended"
        deadline = time.monotonic() + 120
        while (held := [d for m in members for d in disks.disks(owner=m)]) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert held == [], f"disks not wiped and free: {held}"
