#!/usr/bin/env python3
"""cluster-knows IP NODES: exit 0 if another node of the cluster (NODES, comma-separated IPs) answers
CQL and lists IP in its system.peers: a node at IP was part of the cluster (a replacement is starting
in its place); exit 1 if nodes answer and none lists it; exit 3 if no other node answers (a new
cluster's first start, or every other node down or too slow to say: the caller decides).
cluster-knows --up NODES: exit 0 if one of NODES answers CQL (is up), else 1.
Speaks the CQL native protocol v4 with the standard library only (the image has no cqlsh)."""
import ipaddress
import socket
import struct
import sys

PORT = 9042
TIMEOUT_S = 3.0


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


def start(sock: socket.socket) -> None:
    sock.sendall(frame(0x01, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
    opcode, _ = receive(sock)
    if opcode != 0x02:  # READY (an AUTHENTICATE or ERROR: not a node this script can ask)
        raise ValueError(f"STARTUP answered with opcode {opcode}")


def is_up(node: str) -> bool:
    try:
        with socket.create_connection((node, PORT), timeout=TIMEOUT_S) as sock:
            start(sock)
        return True
    except (OSError, ValueError, struct.error):
        return False


def peers_of(node: str) -> set[str]:
    """The addresses in ``node``'s system.peers (raises OSError/ValueError if it does not answer)."""
    with socket.create_connection((node, PORT), timeout=TIMEOUT_S) as sock:
        start(sock)
        query = b"SELECT peer FROM system.peers"
        sock.sendall(frame(0x07, struct.pack(">i", len(query)) + query + struct.pack(">HB", 0x0001, 0)))
        opcode, body = receive(sock)
    if opcode != 0x08 or struct.unpack_from(">i", body)[0] != 2:  # RESULT of kind Rows
        raise ValueError(f"QUERY answered with opcode {opcode}")
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


NOBODY_ANSWERED = 3


def main(ip: str, nodes: str) -> int:
    answered = False
    for node in (n for n in nodes.split(",") if n and n != ip):
        try:
            if ip in peers_of(node):
                return 0
            answered = True
        except (OSError, ValueError, struct.error) as exc:
            print(f"cluster-knows: {node}: {exc}", file=sys.stderr)
    return 1 if answered else NOBODY_ANSWERED


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: cluster-knows IP|--up NODE,NODE,...", file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "--up":
        sys.exit(0 if any(is_up(n) for n in sys.argv[2].split(",") if n) else 1)
    sys.exit(main(sys.argv[1], sys.argv[2]))
