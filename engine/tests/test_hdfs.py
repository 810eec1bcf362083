"""HDFS input and output, the parts that need no HDFS: URL parsing, block splits, the line rule
over any byte range, locality assignment (table of blocks, executors and nodes), and the
scheduler launching tasks node-local on real executors. The WebHDFS calls themselves run against
a real HDFS in tests/integration/platform/test_engine_hdfs.py."""

import http.server
import io
import json
import os
import random
import socket
import threading

import pytest

from spindle_engine import Cluster, Properties, Worker, hdfs
from spindle_engine.backend.locality import ANY, NODE_LOCAL, choose, summary
from spindle_engine.dataset import Dataset
from spindle_engine.hdfs import Block, HdfsPath, Split
from spindle_engine.sources import _split_lines

from .conftest import Agent

NN = {"SPINDLE_HDFS_WEBHDFS": "http://10.0.0.5:9870"}
HA = {"SPINDLE_HDFS_WEBHDFS": "http://10.0.0.5:9870,http://10.0.0.6:9870"}


@pytest.mark.parametrize(("url", "env", "expected"), [
    # the RPC port of an hdfs:// URL is mapped to the configured WebHDFS address
    ("hdfs://10.0.0.5:8020/data/in.txt", NN, HdfsPath("10.0.0.5", 9870, "hdfs", "/data/in.txt")),
    ("hdfs:///data/in.txt", NN, HdfsPath("10.0.0.5", 9870, "hdfs", "/data/in.txt")),
    ("hdfs:///a//b/", NN, HdfsPath("10.0.0.5", 9870, "hdfs", "/a/b")),
    ("hdfs:///", NN, HdfsPath("10.0.0.5", 9870, "hdfs", "/")),
    ("hdfs:///x", {"SPINDLE_HDFS_WEBHDFS": "10.0.0.5:50070"},
     HdfsPath("10.0.0.5", 50070, "hdfs", "/x")),
    # another NameNode than the configured one: its default WebHDFS port
    ("hdfs://10.0.0.9:8020/x", NN, HdfsPath("10.0.0.9", 9870, "hdfs", "/x")),
    ("hdfs://10.0.0.9/x", {}, HdfsPath("10.0.0.9", 9870, "hdfs", "/x")),
    # webhdfs:// names the WebHDFS address itself, and may carry the user
    ("webhdfs://10.0.0.7:9871/x", NN, HdfsPath("10.0.0.7", 9871, "hdfs", "/x")),
    ("webhdfs://alice@10.0.0.7:9871/x", NN, HdfsPath("10.0.0.7", 9871, "alice", "/x")),
    ("hdfs:///x", {**NN, "SPINDLE_HDFS_USER": "bob"}, HdfsPath("10.0.0.5", 9870, "bob", "/x")),
    ("hdfs:///with%20space/%C3%A9", NN, HdfsPath("10.0.0.5", 9870, "hdfs", "/with space/é")),
    # an HA pair: the nameservice and either NameNode name the configured HDFS
    ("hdfs://spindle/x", HA, HdfsPath("10.0.0.5", 9870, "hdfs", "/x")),
    ("hdfs://10.0.0.6:8020/x", HA, HdfsPath("10.0.0.5", 9870, "hdfs", "/x")),
])
def test_parse(url, env, expected):
    assert hdfs.parse(url, env) == expected


@pytest.mark.parametrize(("url", "env"), [
    ("hdfs:///x", {}),                       # no authority and nothing configured
    ("webhdfs:///x", {}),
    ("hdfs://nn:8020/a/../b", NN),           # no '..'
    ("hdfs://nn:8020/a?op=DELETE", NN),      # no query smuggled into WebHDFS calls
    ("hdfs://nn:8020/a#frag", NN),
    ("hdfs://nn:port/a", NN),
    ("s3://bucket/a", NN),
    ("/local/path", NN),
    ("hdfs:///x", {"SPINDLE_HDFS_WEBHDFS": "ftp://10.0.0.5"}),
    ("hdfs:///x", {"SPINDLE_HDFS_WEBHDFS": "http://10.0.0.5:9870,ftp://10.0.0.6"}),
])
def test_parse_refuses(url, env):
    with pytest.raises(ValueError):
        hdfs.parse(url, env)


def test_url_round_trip_carries_user_and_address():
    where = HdfsPath("10.0.0.5", 9870, "alice", "/dir with space/é.txt")
    assert where.url == "webhdfs://alice@10.0.0.5:9870/dir%20with%20space/%C3%A9.txt"
    assert hdfs.parse(where.url, {}) == where
    assert hdfs.is_hdfs(where.url) and hdfs.is_hdfs("hdfs:///x") and not hdfs.is_hdfs("/x")


MB = 1 << 20


def _blocks(length, size, hosts_of):
    return [Block(o, min(size, length - o), hosts_of(i))
            for i, o in enumerate(range(0, length, size))]


@pytest.mark.parametrize(("files", "split_size", "expected"), [
    # one split per block, each preferring its block's replicas
    ([("f", 3 * MB + 5, _blocks(3 * MB + 5, MB, lambda i: (f"dn{i}",)))], None,
     [("f", 0, MB, ("dn0",)), ("f", MB, MB, ("dn1",)), ("f", 2 * MB, MB, ("dn2",)),
      ("f", 3 * MB, 5, ("dn3",))]),
    # a smaller split size cuts blocks further; a split never spans two blocks
    ([("f", 2 * MB, _blocks(2 * MB, MB, lambda i: (f"dn{i}",)))], 700_000,
     [("f", 0, 700_000, ("dn0",)), ("f", 700_000, MB - 700_000, ("dn0",)),
      ("f", MB, 700_000, ("dn1",)), ("f", MB + 700_000, MB - 700_000, ("dn1",))]),
    # several files, an empty one gives no split
    ([("a", 10, [Block(0, 10, ("x", "y"))]), ("b", 0, []), ("c", 4, [Block(0, 4, ("z",))])],
     None, [("a", 0, 10, ("x", "y")), ("c", 0, 4, ("z",))]),
    # nothing to read: still one (empty) partition
    ([("b", 0, [])], None, [("b", 0, 0, ())]),
    ([], None, [("", 0, 0, ())]),
])
def test_block_splits(files, split_size, expected):
    assert hdfs.block_splits(files, split_size) == [Split(*e) for e in expected]


def test_preferred_nodes_map_datanodes_to_nodes():
    nodes = {"10.0.0.11": "node-a", "10.0.0.12": "node-b"}
    assert hdfs.preferred_nodes(("10.0.0.11", "10.0.0.12:9866"), nodes) == {"node-a", "node-b"}
    assert hdfs.preferred_nodes(("10.0.0.99",), nodes) == {"10.0.0.99"}  # unknown: itself


def test_datanode_nodes_and_local_datanodes():
    env = {"SPINDLE_HDFS_DATANODE_NODES": '{"10.0.0.11": "a", "10.0.0.12": "b", "10.0.0.13": "a"}',
           "SPINDLE_NODE": "a"}
    assert hdfs.datanode_nodes(env) == {"10.0.0.11": "a", "10.0.0.12": "b", "10.0.0.13": "a"}
    assert hdfs.local_datanodes(env) == ["10.0.0.11", "10.0.0.13"]
    assert hdfs.local_datanodes({**env, "SPINDLE_NODE": ""}) == []
    assert hdfs.datanode_nodes({"SPINDLE_HDFS_DATANODE_NODES": "not json"}) == {}
    assert hdfs.datanode_nodes({"SPINDLE_HDFS_DATANODE_NODES": "[1]"}) == {}
    assert hdfs.local_node({"SPINDLE_NODE": "n7"}) == "n7"


TEXTS = {
    "plain": b"one\ntwo\nthree\n",
    "no_final_newline": b"alpha\nbeta\ngamma",
    "crlf": b"a\r\n\r\nb\r\n\nc\n",
    "blank_lines": b"\n\n\nx\n\n",
    "unicode": "".join(f"ligne {i} é漢😀\n" for i in range(50)).encode(),
    "long_line": b"y" * 5000 + b"\nz\n",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_every_line_once_whatever_the_cuts(name):
    """A line belongs to the split where it starts: for random cuts of the bytes (as HDFS
    blocks cut them, mid-line, mid-character), the splits' lines are the file's lines."""
    data = TEXTS[name]
    expected = data.decode().splitlines()
    rng = random.Random(name)
    for _ in range(30):
        cuts = sorted({0, len(data), *(rng.randrange(len(data) + 1) for _ in range(4))})
        lines = []
        for start, end in zip(cuts, cuts[1:], strict=False):
            stream = io.BytesIO(data)
            stream.seek(max(0, start - 1))
            lines += _split_lines(stream, start, end)
        assert lines == expected, cuts


def _assign(blocks, slots, waited_out=False):
    """Free slots (their nodes, in turn) take tasks until none can: [(task, node, level)]."""
    pending = list(range(len(blocks)))
    live = set(slots)
    taken = []
    progress = True
    while pending and progress:
        progress = False
        for node in slots:
            pick = choose([blocks[t] for t in pending], node, live, waited_out)
            if pick is not None:
                task = pending.pop(pick[0])
                taken.append((task, node, pick[1]))
                progress = True
    return taken


A, B, C = frozenset({"a"}), frozenset({"b"}), frozenset({"c"})


@pytest.mark.parametrize(("blocks", "slots", "waited_out", "expected"), [
    # one node: everything is node-local
    ([A, A, A], ["a", "a"], False,
     [(0, "a", NODE_LOCAL), (1, "a", NODE_LOCAL), (2, "a", NODE_LOCAL)]),
    # two nodes: each block goes to the node holding it, whatever the queue order
    ([B, A, B, A], ["a", "b"], False,
     [(1, "a", NODE_LOCAL), (0, "b", NODE_LOCAL), (3, "a", NODE_LOCAL), (2, "b", NODE_LOCAL)]),
    # replicas on both nodes: whoever is free first
    ([A | B, A | B], ["a", "b"], False, [(0, "a", NODE_LOCAL), (1, "b", NODE_LOCAL)]),
    # all blocks on a: b's slot waits for the locality wait, a runs them all
    ([A, A, A], ["a", "b"], False,
     [(0, "a", NODE_LOCAL), (1, "a", NODE_LOCAL), (2, "a", NODE_LOCAL)]),
    # ... and once the wait is over, b takes one (ANY)
    ([A, A], ["a", "b"], True, [(0, "a", NODE_LOCAL), (1, "b", ANY)]),
    # a block on a node without executors: any slot at once
    ([C, A], ["a", "b"], False, [(1, "a", NODE_LOCAL), (0, "b", ANY)]),
    # tasks without preference run anywhere, after local ones
    ([None, A], ["a"], False, [(1, "a", NODE_LOCAL), (0, "a", None)]),
])
def test_locality_assignment(blocks, slots, waited_out, expected):
    assert _assign(blocks, slots, waited_out) == expected


def test_summary_line():
    assert summary({NODE_LOCAL: 12}) == "locality: node_local=12 any=0"
    assert summary({NODE_LOCAL: 1, ANY: 3}) == "locality: node_local=1 any=3"


class _LocatedSource:
    """Partitions of parallelize-like files, each preferring the given nodes."""

    def __init__(self, inner, nodes):
        self.inner = inner
        self._nodes = nodes

    def prepare(self):
        pass

    def nodes(self, p):
        return self._nodes[p]

    def source(self, p):
        return self.inner.source(p)


def test_scheduler_counts_locality_on_real_executors(python_worker, capsys):
    """Executors of local mode are on this node: tasks preferring it run NODE_LOCAL, tasks
    preferring a node without executors run ANY at once; the driver prints and keeps counts."""
    here = python_worker.executors[0].node
    base = python_worker.parallelize(range(40), 4)
    nodes = [frozenset({here}), frozenset({"elsewhere"}), frozenset({here, "x"}), None]
    ds = Dataset(python_worker, "source", 4, source=_LocatedSource(base.source, nodes))
    before = len(python_worker.locality)
    assert sorted(ds.map(lambda x: x * 2).collect()) == [x * 2 for x in range(40)]
    stage = python_worker.locality[before]
    assert (stage["node_local"], stage["any"]) == (2, 1)
    assert f"{stage['stage']}: locality: node_local=2 any=1" in capsys.readouterr().err
    assert python_worker.metrics["tasks_node_local"] >= 2


def test_cpp_worker_refuses_hdfs(cluster):
    """The C++ executor speaks no WebHDFS: a clear error, nothing run."""
    cpp = Worker(cluster, "cpp")
    try:
        with pytest.raises(ValueError, match="importData"):
            cpp.textFile("hdfs://10.0.0.5:8020/x")
        with pytest.raises(ValueError, match="importData"):
            cpp.parallelize([1], 1).saveAsTextFile("hdfs://10.0.0.5:8020/out")
    finally:
        cpp.stop()
        cluster.workers.remove(cpp)


def test_cluster_mode_runs_tasks_on_the_executors_of_their_nodes(engine, tmp_path):
    """Two agents on two 'nodes' (their SPINDLE_NODE): the executors know their node from the
    agent, and each task preferring a node runs on that node's executor (NODE_LOCAL), also when
    the other node's executor is free first; a task preferring a node without executors runs
    on either (ANY)."""
    agents = [Agent(str(tmp_path), "a", env={"SPINDLE_NODE": "node-a"}),
              Agent(str(tmp_path), "b", env={"SPINDLE_NODE": "node-b"})]
    cluster = Cluster(Properties({"engine.mode": "cluster", "locality.wait_s": 600,
                                  "engine.agents": ",".join(a.address for a in agents)}))
    try:
        worker = Worker(cluster, "python")
        assert sorted(ex.node for ex in worker.executors) == ["node-a", "node-b"]
        wanted = ["node-a"] * 5 + ["node-b"] * 2 + ["node-c"]
        base = worker.parallelize(range(len(wanted)), len(wanted))
        ds = Dataset(worker, "source", len(wanted), source=_LocatedSource(
            base.source, [frozenset({n}) for n in wanted]))
        ran = dict(ds.map(lambda x: (x, os.environ["SPINDLE_NODE"])).collect())
        assert [ran[p] for p in range(7)] == wanted[:7]
        assert ran[7] in ("node-a", "node-b")
        [stage] = worker.locality
        assert (stage["node_local"], stage["any"]) == (7, 1)
    finally:
        cluster.stop()
        for a in agents:
            a.kill()


class _NameNode(http.server.BaseHTTPRequestHandler):
    """A WebHDFS NameNode answering GETFILESTATUS as its server's `state` says: active, standby
    (403 StandbyException, as Hadoop's) or gone (the connection closed unanswered)."""

    def do_GET(self):  # noqa: N802 — http.server's name
        self.server.asked += 1
        if self.server.state == "gone":
            self.close_connection = True
            return
        if self.server.state == "standby":
            body = json.dumps({"RemoteException": {"exception": "StandbyException", "message":
                               "Operation category READ is not supported in state standby"}}).encode()
            self.send_response(403)
        else:
            body = json.dumps({"FileStatus": {"type": "FILE", "length": 7}}).encode()
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def namenode_pair():
    servers = []
    for state in ("standby", "active"):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NameNode)
        server.state, server.asked = state, 0
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def test_requests_go_to_the_active_namenode_of_an_ha_pair_and_follow_a_failover(namenode_pair, monkeypatch):
    standby, active = namenode_pair
    env = {"SPINDLE_HDFS_WEBHDFS": ",".join(f"http://127.0.0.1:{s.server_address[1]}" for s in namenode_pair)}
    where = hdfs.parse("hdfs:///x", env)
    client = hdfs.WebHdfs(where, env=env)
    assert client.status("/x") == {"type": "FILE", "length": 7}
    assert (standby.asked, active.asked) == (1, 1)
    assert client.status("/x") and (standby.asked, active.asked) == (1, 2), "the active one is asked first"
    # A failover: the active one is gone, the standby becomes active after a while.
    active.state = "gone"
    standby.state = "standby"
    monkeypatch.setattr(hdfs, "sleep", lambda s: setattr(standby, "state", "active"))
    assert hdfs.WebHdfs(where, env=env).status("/x") == {"type": "FILE", "length": 7}
    assert standby.asked == 3 and active.asked == 4


def test_an_ha_pair_with_no_active_namenode_fails_after_the_failover_time(namenode_pair, monkeypatch):
    for server in namenode_pair:
        server.state = "standby"
    env = {"SPINDLE_HDFS_WEBHDFS": ",".join(f"http://127.0.0.1:{s.server_address[1]}" for s in namenode_pair)}
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(hdfs, "monotonic", lambda: next(clock))
    monkeypatch.setattr(hdfs, "sleep", lambda s: None)
    with pytest.raises(hdfs.HdfsError, match="StandbyException"):
        hdfs.WebHdfs(hdfs.parse("hdfs:///x", env), env=env).status("/x")
    assert [s.asked for s in namenode_pair] == [hdfs.FAILOVER_S // 10] * 2  # a round every 10 s of the clock


def test_a_create_sent_to_an_unreachable_datanode_asks_again_without_it():
    """The NameNode sends a CREATE to a DataNode that does not answer (a dead one it still counts
    live): the client asks again with it in `excludedatanodes` and writes to the one it gets then;
    the next CREATE leaves it out from the start."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{closed.getsockname()[1]}"  # bound, not listening: refused
        asked, written = [], []

        class DataNode(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):  # noqa: N802
                size = 0
                while (line := self.rfile.readline().strip()) and int(line, 16):
                    size += len(self.rfile.read(int(line, 16) + 2)) - 2
                self.rfile.readline()
                written.append(size)
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        live = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DataNode)

        class NameNode(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):  # noqa: N802
                query = dict(p.split("=", 1) for p in self.path.split("?", 1)[1].split("&"))
                excluded = query.get("excludedatanodes", "").replace("%3A", ":").replace("%2C", ",")
                asked.append(excluded)
                target = f"127.0.0.1:{live.server_address[1]}" if dead in excluded else dead
                self.send_response(307)
                self.send_header("Location", f"http://{target}/webhdfs/v1/x?op=CREATE")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        namenode = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NameNode)
        for server in (live, namenode):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            client = hdfs.WebHdfs(HdfsPath("127.0.0.1", namenode.server_address[1], "hdfs", "/x"), env={})
            client.create("/x", [b"abc", b"de"])
            assert (asked, written) == (["", dead], [5])
            client.create("/y", [b"f"])
            assert asked[2:] == [dead] and written == [5, 1], "left out from the start"
        finally:
            for server in (live, namenode):
                server.shutdown()
                server.server_close()
            hdfs._excluded.clear()
