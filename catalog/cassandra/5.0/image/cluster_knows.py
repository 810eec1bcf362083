#!/usr/bin/env python3
"""A Cassandra node's questions to its cluster over CQL (the native protocol v4, with the standard
library only: the image has no cqlsh). Every node asks for a login (PasswordAuthenticator): the
cluster's own user ``spindle``, its password the cluster's secret ($SPINDLE_CLUSTER_SECRET).

cluster-knows IP NODES      exit 0 if another node of the cluster (NODES, comma-separated IPs)
                            answers and lists IP in its system.peers: a node at IP was part of the
                            cluster (a replacement is starting in its place); 1 if nodes answer and
                            none lists it; 3 if no other node answers (a new cluster's first start, or
                            every other node down or too slow to say: the caller decides).
cluster-knows --up NODES    exit 0 if one of NODES answers CQL (is up), else 1.
cluster-knows --login IP    exit 0 if ``spindle`` logs in at IP (the member's health check).
cluster-knows --setup-auth IP NODES
                            run beside this node's start until ``spindle`` logs in at IP: as the
                            default superuser (cassandra/cassandra, made by Cassandra on a new
                            cluster) it gives system_auth min(3, nodes) replicas and makes
                            ``spindle`` a superuser with the cluster's secret; as ``spindle`` it drops
                            the default superuser. Idempotent: every node runs it at every start."""
import ipaddress
import os
import socket
import struct
import sys
import time

PORT = 9042
TIMEOUT_S = 3.0
USER = "spindle"
DEFAULT_LOGIN = ("cassandra", "cassandra")
SETUP_TIMEOUT_S = 1800.0
SETUP_EVERY_S = 3.0
NOBODY_ANSWERED = 3

# Opcodes and consistency levels of the native protocol v4.
ERROR, STARTUP, READY, AUTHENTICATE, QUERY, RESULT = 0x00, 0x01, 0x02, 0x03, 0x07, 0x08
AUTH_RESPONSE, AUTH_SUCCESS = 0x0F, 0x10
QUORUM = 0x0004


class Refused(ValueError):
    """The node refused the login (or a statement): its message."""


def frame(opcode: int, body: bytes) -> bytes:
    return struct.pack(">BBhBi", 0x04, 0, 0, opcode, len(body)) + body


def string(value: str) -> bytes:
    data = value.encode()
    return struct.pack(">H", len(data)) + data


def receive(sock: socket.socket) -> tuple[int, bytes]:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data
    _version, _flags, _stream, opcode, length = struct.unpack(">BBhBi", exactly(9))
    return opcode, exactly(length)


def error_message(body: bytes) -> str:
    """An ERROR's message (its body: [int code][string message])."""
    try:
        [length] = struct.unpack_from(">H", body, 4)
        return body[6:6 + length].decode(errors="replace")
    except struct.error:
        return "an error without a message"


def secret_login() -> tuple[str, str] | None:
    secret = os.environ.get("SPINDLE_CLUSTER_SECRET", "")
    return (USER, secret) if secret else None


def start(sock: socket.socket, login: tuple[str, str] | None) -> None:
    """STARTUP, and the login when the node asks for one (raises Refused when it refuses it)."""
    sock.sendall(frame(STARTUP, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
    opcode, body = receive(sock)
    if opcode == READY:
        return
    if opcode != AUTHENTICATE:
        raise ValueError(f"STARTUP answered with opcode {opcode}")
    if login is None:
        raise Refused("the node asks for a login and there is no SPINDLE_CLUSTER_SECRET")
    token = b"\0" + login[0].encode() + b"\0" + login[1].encode()  # SASL PLAIN
    sock.sendall(frame(AUTH_RESPONSE, struct.pack(">i", len(token)) + token))
    opcode, body = receive(sock)
    if opcode == ERROR:
        raise Refused(error_message(body))
    if opcode != AUTH_SUCCESS:
        raise ValueError(f"AUTH_RESPONSE answered with opcode {opcode}")


def connect(node: str, login: tuple[str, str] | None) -> socket.socket:
    sock = socket.create_connection((node, PORT), timeout=TIMEOUT_S)
    try:
        start(sock, login)
    except BaseException:
        sock.close()
        raise
    return sock


def query(sock: socket.socket, statement: str, consistency: int = QUORUM) -> bytes:
    """A statement's RESULT body (raises Refused with the node's message on an ERROR)."""
    data = statement.encode()
    sock.sendall(frame(QUERY, struct.pack(">i", len(data)) + data + struct.pack(">HB", consistency, 0)))
    opcode, body = receive(sock)
    if opcode == ERROR:
        raise Refused(error_message(body))
    if opcode != RESULT:
        raise ValueError(f"QUERY answered with opcode {opcode}")
    return body


def is_up(node: str) -> bool:
    """The node answers STARTUP (READY, or asking for a login)."""
    try:
        with socket.create_connection((node, PORT), timeout=TIMEOUT_S) as sock:
            sock.sendall(frame(STARTUP, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
            opcode, _ = receive(sock)
        return opcode in (READY, AUTHENTICATE)
    except (OSError, ValueError, struct.error):
        return False


def peers_of(node: str, login: tuple[str, str] | None = None) -> set[str]:
    """The addresses in ``node``'s system.peers (raises OSError/ValueError if it does not answer)."""
    with connect(node, login) as sock:
        body = query(sock, "SELECT peer FROM system.peers", consistency=0x0001)
    if struct.unpack_from(">i", body)[0] != 2:  # RESULT of kind Rows
        raise ValueError("QUERY answered with no rows")
    flags, columns = struct.unpack_from(">ii", body, 4)
    at = 12
    if flags & 0x0002:  # has_more_pages: a paging state follows
        at += 4 + struct.unpack_from(">i", body, at)[0]
    if flags & 0x0001:  # global table spec: keyspace, table
        for _ in range(2):
            at += 2 + struct.unpack_from(">H", body, at)[0]
    for _ in range(columns):  # name and type ([keyspace, table,] name, type id)
        for _ in range(1 if flags & 0x0001 else 3):
            at += 2 + struct.unpack_from(">H", body, at)[0]
        at += 2
    [rows] = struct.unpack_from(">i", body, at)
    at += 4
    found = set()
    for _ in range(rows):
        [length] = struct.unpack_from(">i", body, at)
        at += 4
        if length > 0:
            found.add(str(ipaddress.ip_address(body[at:at + length])))
            at += length
    return found


def logs_in(node: str, login: tuple[str, str] | None) -> bool:
    try:
        connect(node, login).close()
        return True
    except (OSError, ValueError, struct.error):
        return False


def setup_auth(ip: str, nodes: str, secret: str, timeout_s: float = SETUP_TIMEOUT_S,
               every_s: float = SETUP_EVERY_S) -> int:
    """See the module's doc: 0 once ``spindle`` logs in at ``ip`` and the default superuser is gone,
    1 if that did not happen within ``timeout_s``."""
    replicas = min(3, len([n for n in nodes.split(",") if n]) or 1)
    mine = (USER, secret)
    deadline = time.monotonic() + timeout_s
    said = ""
    while time.monotonic() < deadline:
        try:
            with connect(ip, mine) as sock:
                query(sock, "DROP ROLE IF EXISTS cassandra")
            print("cassandra: user spindle logs in; the default superuser is gone", file=sys.stderr)
            return 0
        except (OSError, ValueError, struct.error) as exc:
            said = f"as spindle: {exc}"
        try:
            with connect(ip, DEFAULT_LOGIN) as sock:
                query(sock, "ALTER KEYSPACE system_auth WITH replication = "
                            f"{{'class': 'NetworkTopologyStrategy', 'datacenter1': {replicas}}}")
                query(sock, f"CREATE ROLE IF NOT EXISTS {USER} WITH PASSWORD = '{secret}' "
                            "AND SUPERUSER = true AND LOGIN = true")
            said = "user spindle made"
        except (OSError, ValueError, struct.error) as exc:
            said += f"; as the default superuser: {exc}"
        time.sleep(every_s)
    print(f"cassandra: user spindle could not be set up: {said}", file=sys.stderr)
    return 1


def main(ip: str, nodes: str) -> int:
    answered = False
    for node in (n for n in nodes.split(",") if n and n != ip):
        try:
            if ip in peers_of(node, secret_login()):
                return 0
            answered = True
        except (OSError, ValueError, struct.error) as exc:
            print(f"cluster-knows: {node}: {exc}", file=sys.stderr)
    return 1 if answered else NOBODY_ANSWERED


def command(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--up":
        return 0 if any(is_up(n) for n in argv[1].split(",") if n) else 1
    if len(argv) == 2 and argv[0] == "--login":
        return 0 if logs_in(argv[1], secret_login()) else 1
    if len(argv) == 3 and argv[0] == "--setup-auth":
        login = secret_login()
        if login is None or not login[1].isalnum():
            print("cluster-knows --setup-auth: SPINDLE_CLUSTER_SECRET (letters and digits) is not set",
                  file=sys.stderr)
            return 2
        return setup_auth(argv[1], argv[2], login[1])
    if len(argv) == 2 and not argv[0].startswith("--"):
        return main(argv[0], argv[1])
    print("usage: cluster-knows IP NODES | --up NODES | --login IP | --setup-auth IP NODES", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(command(sys.argv[1:]))
