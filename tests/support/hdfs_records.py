"""HDFS with high availability from a test: which NameNode is active (JMX), whether the active one
writes its edits to a journal member, the racks it knows, a NameNode's namespace ids; a writer of
small files through WebHDFS that records which ones HDFS acknowledged, and which of those are gone."""
import threading
import time
from collections import deque

import httpx

from tests.support import acks

HDFS_USER = "hdfs"
FILE = b"spindle\n" * 512  # 4 KiB


# The web port of each HDFS daemon, by its JMX service name.
JMX_PORTS = {"NameNode": 9870, "JournalNode": 8480, "DataNode": 9864}


def bean(member: dict, query: str) -> dict:
    """One JMX bean of the daemon at the member's IP (``Hadoop:service=NameNode,name=…`` on 9870,
    ``Hadoop:service=JournalNode,name=…`` on 8480, ``Hadoop:service=DataNode,name=…`` on 9864)."""
    port = JMX_PORTS[query.split("service=", 1)[1].split(",", 1)[0]]
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


def webhdfs(namenode: dict, path: str) -> str:
    return f"http://{namenode['ip']}:9870/webhdfs/v1{path}"


class FileWriter(threading.Thread):
    """Files ``<directory>/f-<n>`` (4 KiB each) created one after another through WebHDFS until stopped,
    asking the NameNode that last answered first and the other one when it fails, as an HA client does.
    A file is acknowledged when its DataNode answered 201 (the block written through the pipeline and
    the file closed). ``sent_at``/``acked_at``: path → ``time.monotonic()``; ``errors``: the last
    failed attempts (when, which NameNode, what failed)."""

    def __init__(self, namenodes: list[dict], directory: str, first: int = 0):
        super().__init__(daemon=True)
        self.namenodes, self.directory, self.next = list(namenodes), directory, first
        self.sent_at: dict[str, float] = {}
        self.acked_at: dict[str, float] = {}
        self.errors: deque[tuple[float, str, str]] = deque(maxlen=20)
        self.stopping = threading.Event()

    def write(self, http: httpx.Client, namenode: dict, path: str) -> bool:
        step = "CREATE at the NameNode"
        try:
            created = http.put(webhdfs(namenode, path), params={"op": "CREATE", "user.name": HDFS_USER,
                                                                 "overwrite": "false"}, timeout=10)
            if created.status_code == 307:
                step = f"the write to {httpx.URL(created.headers['location']).host}"
                written = http.put(created.headers["location"], content=FILE, timeout=30)
                if written.status_code == 201:
                    return True
                failure = f"{step}: {written.status_code} {written.text[:200]}"
            else:
                failure = f"{step}: {created.status_code} {created.text[:200]}"
        except httpx.HTTPError as exc:
            failure = f"{step}: {exc!r}"
        self.errors.append((time.monotonic(), namenode["ip"], failure))
        return False

    def run(self) -> None:
        with httpx.Client() as http:
            while not self.stopping.is_set():
                path = f"{self.directory}/f-{self.next}"
                self.next += 1
                self.sent_at[path] = time.monotonic()
                for namenode in list(self.namenodes):
                    if self.write(http, namenode, path):
                        self.acked_at[path] = time.monotonic()
                        if namenode is not self.namenodes[0]:  # the one that answered first from now on
                            self.namenodes.reverse()
                        break
                time.sleep(0.1)

    @property
    def acked(self) -> list[str]:
        return sorted(dict(self.acked_at))

    def serving_again_after(self, since: float) -> float | None:
        """Seconds from ``since`` to the first acknowledgement of a file sent after it (None: none yet)."""
        return acks.serving_again_after(self.sent_at, dict(self.acked_at), since)

    def longest_pause(self, since: float) -> float:
        """The longest time without any acknowledged file from ``since`` to the last one."""
        return acks.longest_pause(list(self.acked_at.values()), since)

    def stop(self) -> list[str]:
        """Stops writing; the acknowledged files."""
        self.stopping.set()
        self.join(timeout=60)
        assert not self.is_alive()
        return self.acked


def missing(namenode: dict, paths: list[str]) -> list[str]:
    """The files of ``paths`` that do not read back whole (asked of ``namenode``, the active one; each
    read from a DataNode holding its block, up to three of them, as an HDFS client tries the next
    replica when one fails)."""

    def whole(http: httpx.Client, path: str) -> bool:
        try:
            read = http.get(webhdfs(namenode, path), params={"op": "OPEN", "user.name": HDFS_USER}, timeout=30)
            return read.status_code == 200 and read.content == FILE
        except httpx.HTTPError:
            return False
    with httpx.Client(follow_redirects=True) as http:
        return [path for path in paths if not any(whole(http, path) for _ in range(3))]
