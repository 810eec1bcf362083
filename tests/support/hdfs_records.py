"""HDFS with high availability from a test: which NameNode is active (JMX), whether the active one
writes its edits to a journal member, the racks it knows, a NameNode's namespace ids."""
import time

import httpx


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
