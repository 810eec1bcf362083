"""HDFS with high availability from a test: which NameNode is active (JMX), a writer that records every
file HDFS acknowledged (a CREATE answered 201: the file closed, its blocks at the minimum replication)
through the engine's WebHDFS client, which follows a failover to the other NameNode, and a reader that
finds each of them back — the node-loss tests' way of counting what was lost (Jepsen's way)."""
import itertools
import threading
import time

import httpx

from spindle_engine import hdfs

USER = "hdfs"  # the daemons' user, HDFS's superuser (simple authentication)


def bean(member: dict, query: str) -> dict:
    """One JMX bean of the daemon at the member's IP (``Hadoop:service=NameNode,name=…`` on 9870,
    ``Hadoop:service=JournalNode,name=…`` on 8480)."""
    port = 8480 if "JournalNode" in query else 9870
    return httpx.get(f"http://{member['ip']}:{port}/jmx", params={"qry": query}, timeout=10).json()["beans"][0]


def state(namenode: dict) -> str:
    """``active``, ``standby`` or ``unreachable`` (its web server does not answer)."""
    try:
        return bean(namenode, "Hadoop:service=NameNode,name=NameNodeStatus")["State"]
    except (httpx.HTTPError, KeyError, IndexError, ValueError):
        return "unreachable"


def active_and_standby(namenodes: list[dict], timeout: float = 300) -> tuple[dict, dict]:
    """(active, standby) once one NameNode of the pair is active and the other standby."""
    deadline = time.monotonic() + timeout
    while True:
        states = [state(n) for n in namenodes]
        if sorted(states) == ["active", "standby"]:
            return namenodes[states.index("active")], namenodes[states.index("standby")]
        named = dict(zip([n["member_id"] for n in namenodes], states, strict=True))
        assert time.monotonic() < deadline, f"no active + standby pair: {named}"
        time.sleep(1)


def racks_in(topology: str) -> dict[str, str]:
    """Each DataNode's IP → its rack, from the output of ``hdfs dfsadmin -printTopology``."""
    racks, rack = {}, None
    for line in topology.splitlines():
        if line.startswith("Rack: "):
            rack = line.removeprefix("Rack: ").strip()
        elif line.strip() and rack:
            racks[line.split()[0].rsplit(":", 1)[0]] = rack
    return racks


def namespace_of(version: str) -> tuple[str, str]:
    """(namespaceID, clusterID) of a NameNode's VERSION file."""
    fields = dict(line.split("=", 1) for line in version.splitlines() if "=" in line)
    return fields["namespaceID"], fields["clusterID"]


def written_to(namenode: dict, journal_ip: str) -> bool:
    """The active NameNode writes its edit log to the journal member at ``journal_ip``: its
    NameJournalStatus lists it with the transaction it has written. A journal member that came back
    gets the edits from the next segment on (the standby has the log rolled every 2 minutes;
    ``hdfs dfsadmin -rollEdits`` at once)."""
    try:
        status = bean(namenode, "Hadoop:service=NameNode,name=NameNodeInfo")["NameJournalStatus"]
    except (httpx.HTTPError, KeyError, IndexError, ValueError):
        return False
    return f"{journal_ip}:8485 (Written txid" in status


def env_of(namenodes: list[dict]) -> dict[str, str]:
    """What Spindle gives a bound engine: both NameNodes' WebHDFS addresses."""
    return {"SPINDLE_HDFS_WEBHDFS": ",".join(f"http://{n['ip']}:9870" for n in namenodes), "SPINDLE_HDFS_USER": USER}


def client(namenodes: list[dict], timeout: float = 20) -> hdfs.WebHdfs:
    env = env_of(namenodes)
    return hdfs.WebHdfs(hdfs.parse("hdfs:///", env), timeout=timeout, env=env)


class Writer(threading.Thread):
    """Creates numbered one-line files in ``folder`` until stopped, one after the other; remembers
    each HDFS acknowledged (and when), counts the ones it did not."""

    def __init__(self, namenodes: list[dict], folder: str):
        super().__init__(daemon=True)
        self.client, self.folder = client(namenodes), folder
        self.acked: dict[str, float] = {}
        self.failed, self.errors = 0, []
        self.stopping = threading.Event()

    def run(self) -> None:
        self.client.mkdirs(self.folder)
        number = 0
        while not self.stopping.is_set():
            name = f"w-{number:06d}"
            try:
                self.client.create(f"{self.folder}/{name}", [f"{name}\n".encode()], overwrite=False)
                self.acked[name] = time.monotonic()
            except OSError as exc:  # HdfsError: not acknowledged (it may or may not be there)
                self.failed += 1
                self.errors.append(str(exc)[:300])
                time.sleep(0.5)
            number += 1

    def stop(self) -> dict[str, float]:
        self.stopping.set()
        self.join(timeout=180)
        assert not self.is_alive(), "the writer did not stop"
        return dict(self.acked)

    def longest_pause(self, since: float) -> float:
        """The longest time without an acknowledged write after ``since``."""
        times = sorted(t for t in self.acked.values() if t >= since)
        return max((b - a for a, b in itertools.pairwise([since, *times])), default=0.0)


def not_read_back(namenodes: list[dict], folder: str, acked: dict[str, float]) -> list[str]:
    """The acknowledged files that are missing from ``folder`` or do not hold their line."""
    reader = client(namenodes, timeout=60)
    there = {entry["pathSuffix"] for entry in reader.list(folder)}
    missing = sorted(set(acked) - there)
    for name in sorted(set(acked) & there):
        with reader.open(f"{folder}/{name}") as stream:
            if stream.read() != f"{name}\n".encode():
                missing.append(name)
    return missing
