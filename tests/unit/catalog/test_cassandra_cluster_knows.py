"""The Cassandra image's cluster-knows (catalog/cassandra/5.0/image/cluster_knows.py) against a small
server speaking the CQL native protocol v4 as a node does for it (READY, then the rows of
system.peers): known (0), answered but not known (1), and nobody answering (3), which a relaunched
member must not take for a new cluster."""
import importlib.util
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "catalog/cassandra/5.0/image/cluster_knows.py"


@pytest.fixture
def knows(monkeypatch):
    spec = importlib.util.spec_from_file_location("cluster_knows", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with socket.socket() as s:  # a port nothing listens on, for every address of the test
        s.bind(("127.0.0.1", 0))
        monkeypatch.setattr(module, "PORT", s.getsockname()[1])
    monkeypatch.setattr(module, "TIMEOUT_S", 2.0)
    return module


def cql_string(value: str) -> bytes:
    return struct.pack(">H", len(value)) + value.encode()


def peers_rows(peers: list[str]) -> bytes:
    """A RESULT of kind Rows: one inet column ``peer`` of system.peers, a row per address."""
    body = struct.pack(">iii", 2, 0x0001, 1) + cql_string("system") + cql_string("peers")
    body += cql_string("peer") + struct.pack(">H", 0x0010) + struct.pack(">i", len(peers))
    for peer in peers:
        body += struct.pack(">i", 4) + socket.inet_aton(peer)
    return body


@contextmanager
def node(address: str, port: int, peers: list[str]) -> Iterator[None]:
    """A node at ``address`` answering STARTUP with READY and any QUERY with ``peers``."""
    server = socket.create_server((address, port))
    server.settimeout(0.2)
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                while True:
                    header = conn.recv(9, socket.MSG_WAITALL)
                    if len(header) < 9:
                        break
                    _, _, stream, opcode, length = struct.unpack(">BBhBi", header)
                    if length:
                        conn.recv(length, socket.MSG_WAITALL)
                    reply, body = (0x02, b"") if opcode == 0x01 else (0x08, peers_rows(peers))
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, reply, len(body)) + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopping.set()
        thread.join()
        server.close()


def test_a_node_that_lists_the_address_says_it_is_known(knows):
    with node("127.0.0.2", knows.PORT, ["10.0.0.1", "10.0.0.3"]):
        assert knows.main("10.0.0.3", "10.0.0.3,127.0.0.2") == 0
        assert knows.main("10.0.0.9", "127.0.0.2") == 1, "answered, and not among its peers"


def test_nobody_answering_is_not_taken_for_not_known(knows):
    assert knows.main("10.0.0.3", "127.0.0.2,127.0.0.3") == knows.NOBODY_ANSWERED == 3
    assert knows.main("10.0.0.3", "10.0.0.3") == 3, "itself only: nobody else to ask"
    # One node down, the other answering without it: not known.
    with node("127.0.0.3", knows.PORT, ["10.0.0.1"]):
        assert knows.main("10.0.0.3", "127.0.0.2,127.0.0.3") == 1
