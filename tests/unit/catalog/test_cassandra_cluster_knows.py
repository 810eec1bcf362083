"""The Cassandra image's cluster-knows (catalog/cassandra/5.0/image/cluster_knows.py) against a small
server speaking the CQL native protocol v4 as a node does for it (READY or a login, then the rows of
system.peers or the roles' statements): known (0), answered but not known (1), and nobody answering
(3), which a relaunched member must not take for a new cluster; a login refused; the setup of the
cluster's user ``spindle`` (the default superuser makes it, then it drops the default superuser)."""
import importlib.util
import re
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


def error(message: str) -> bytes:
    return struct.pack(">i", 0x0100) + cql_string(message)  # ERROR: code, message


class Roles:
    """A node's roles (name → password) when it asks for a login, and the statements run on it."""

    def __init__(self, **roles: str):
        self.roles, self.statements = dict(roles), []

    def answer(self, statement: str) -> tuple[int, bytes]:
        self.statements.append(statement)
        if made := re.fullmatch(r"CREATE ROLE IF NOT EXISTS (\w+) WITH PASSWORD = '(\w+)' .*", statement):
            self.roles.setdefault(made[1], made[2])
        elif dropped := re.fullmatch(r"DROP ROLE IF EXISTS (\w+)", statement):
            self.roles.pop(dropped[1], None)
        return 0x08, struct.pack(">i", 1)  # RESULT of kind Void


@contextmanager
def node(address: str, port: int, peers: list[str], roles: Roles | None = None) -> Iterator[None]:
    """A node at ``address`` answering STARTUP with READY (or, with ``roles``, asking for a login
    checked against them) and a QUERY of system.peers with ``peers`` (others as ``roles`` says)."""
    server = socket.create_server((address, port))
    server.settimeout(0.2)
    stopping = threading.Event()

    def reply(opcode: int, body: bytes) -> tuple[int, bytes]:
        if opcode == 0x01:  # STARTUP
            return (0x03, cql_string("org.apache.cassandra.auth.PasswordAuthenticator")) if roles else (0x02, b"")
        if opcode == 0x0F:  # AUTH_RESPONSE: [bytes] "\0user\0password"
            _, user, password = body[4:].decode().split("\0")
            if roles is not None and roles.roles.get(user) == password:
                return 0x10, struct.pack(">i", -1)
            return 0x00, error(f"Provided username {user} and/or password are incorrect")
        statement = body[4:4 + struct.unpack_from(">i", body)[0]].decode()
        if statement.startswith("SELECT peer"):
            return 0x08, peers_rows(peers)
        assert roles is not None, statement
        return roles.answer(statement)

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
                    body = conn.recv(length, socket.MSG_WAITALL) if length else b""
                    answer, data = reply(opcode, body)
                    conn.sendall(struct.pack(">BBhBi", 0x84, 0, stream, answer, len(data)) + data)

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


def test_a_node_that_asks_for_a_login_answers_the_clusters_user_only(knows, monkeypatch):
    roles = Roles(spindle="s3cret")
    with node("127.0.0.2", knows.PORT, ["10.0.0.3"], roles):
        assert knows.is_up("127.0.0.2"), "asking for a login is being up"
        monkeypatch.setenv("SPINDLE_CLUSTER_SECRET", "s3cret")
        assert knows.main("10.0.0.3", "127.0.0.2") == 0
        assert knows.command(["--login", "127.0.0.2"]) == 0
        monkeypatch.setenv("SPINDLE_CLUSTER_SECRET", "wrong")
        assert knows.command(["--login", "127.0.0.2"]) == 1
        assert knows.main("10.0.0.3", "127.0.0.2") == 3, "refused: it said nothing"
        with pytest.raises(knows.Refused, match="incorrect"):
            knows.peers_of("127.0.0.2", ("spindle", "wrong"))


def test_the_default_superuser_makes_the_clusters_user_which_then_drops_it(knows):
    roles = Roles(cassandra="cassandra")
    with node("127.0.0.2", knows.PORT, [], roles):
        assert knows.setup_auth("127.0.0.2", "127.0.0.2,127.0.0.3", "s3cret", timeout_s=30, every_s=0.1) == 0
    assert roles.roles == {"spindle": "s3cret"}
    assert roles.statements == [
        "ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 2}",
        "CREATE ROLE IF NOT EXISTS spindle WITH PASSWORD = 's3cret' AND SUPERUSER = true AND LOGIN = true",
        "DROP ROLE IF EXISTS cassandra"]
    # Run again (every node at every start): the user logs in and nothing else changes.
    with node("127.0.0.2", knows.PORT, [], roles):
        assert knows.setup_auth("127.0.0.2", "127.0.0.2", "s3cret", timeout_s=30, every_s=0.1) == 0
    assert roles.statements[3:] == ["DROP ROLE IF EXISTS cassandra"]


def test_setup_gives_up_when_no_login_works(knows):
    with node("127.0.0.2", knows.PORT, [], Roles()):
        assert knows.setup_auth("127.0.0.2", "127.0.0.2", "s3cret", timeout_s=0.5, every_s=0.1) == 1


@pytest.mark.parametrize("secret", [None, "", "not hex; DROP"])
def test_setup_needs_a_plain_secret(knows, monkeypatch, secret):
    if secret is None:
        monkeypatch.delenv("SPINDLE_CLUSTER_SECRET", raising=False)
    else:
        monkeypatch.setenv("SPINDLE_CLUSTER_SECRET", secret)
    assert knows.command(["--setup-auth", "127.0.0.2", "127.0.0.2"]) == 2
