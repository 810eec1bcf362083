"""File server and client of cluster mode (engine/rpc/FETCH.md): partition files cross hosts.

Run alone for tests: `python -m spindle_engine.fileserver --port N --root DIR[,DIR...]`
(prints `READY <port>`).
"""

import argparse
import os
import socket
import socketserver
import struct
import threading

from .auth import AuthFailed, client_handshake, secret_from_env, server_handshake
from .errors import FetchFailed
from .rpc import tune_socket

_LEN = struct.Struct(">q")
_CHUNK = 1 << 22
# A live server's kernel answers a SYN at once; a vanished host (its member killed) answers
# nothing until its replacement holds the IP: fail such a fetch fast (engine/cpp/src/fetch.cpp).
CONNECT_TIMEOUT_S = 5


def parse_url(url):
    """'tcp://HOST:PORT/abs/path' -> ('HOST:PORT', '/abs/path')."""
    rest = url[len("tcp://"):]
    slash = rest.find("/")
    if not url.startswith("tcp://") or slash <= 0:
        raise ValueError(f"not a file URL: {url!r}")
    return rest[:slash], rest[slash:]


def url(address, path):
    return f"tcp://{address}{path}"


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        tune_socket(self.connection)  # the answer's length, then its bytes: two writes
        try:  # no request is read before the caller proved it holds the secret (AUTH.md)
            server_handshake(self.connection, self.server.secret)
        except (AuthFailed, OSError):
            return
        while True:
            line = self.rfile.readline(8192)
            if not line:
                return
            try:
                verb, offset, length, path = line.decode().rstrip("\n").split(" ", 3)
                offset, length = int(offset), int(length)
                if verb != "GET" or offset < 0 or length < -1:
                    raise ValueError
            except ValueError:
                self._error(f"bad request: {line[:200]!r}")
                return
            self._send(path, offset, length)

    def _error(self, message):
        data = message.encode()
        self.wfile.write(_LEN.pack(-len(data)) + data)
        self.wfile.flush()

    def _send(self, path, offset, length):
        real = os.path.realpath(path)
        if not any(real == r or real.startswith(r + os.sep) for r in self.server.roots):
            self._error(f"outside the served directories: {path}")
            return
        try:
            f = open(real, "rb")
        except OSError as e:
            self._error(f"cannot open {path}: {e.strerror}")
            return
        with f:
            size = os.fstat(f.fileno()).st_size
            start = min(offset, size)
            n = size - start if length < 0 else max(0, min(length, size - start))
            self.wfile.write(_LEN.pack(n))
            self.wfile.flush()
            self.server.count(n)
            sent = 0
            while sent < n:
                k = os.sendfile(self.connection.fileno(), f.fileno(), start + sent, n - sent)
                if k == 0:
                    raise ConnectionError(f"{path} shrank while being sent")
                sent += k


class FileServer(socketserver.ThreadingTCPServer):
    """Serves files under `roots` to other hosts; `address` is 'HOST:PORT' for URLs."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 overflows when a stage's tasks fetch at once: the
    # kernel drops the SYNs past it and the callers wait a second for their retransmission
    request_queue_size = socket.SOMAXCONN

    def __init__(self, roots, bind="127.0.0.1", port=0, advertise_host=None, secret=None):
        self.roots = [os.path.realpath(r) for r in roots]
        self.secret = secret if secret is not None else secret_from_env()
        super().__init__((bind, port), _Handler)
        host = advertise_host or (bind if bind not in ("0.0.0.0", "") else "127.0.0.1")
        self.address = f"{host}:{self.server_address[1]}"
        self.stats = {"files_served": 0, "bytes_served": 0}
        self._stats_lock = threading.Lock()

    def count(self, nbytes):
        with self._stats_lock:
            self.stats["files_served"] += 1
            self.stats["bytes_served"] += nbytes

    def add_root(self, root):
        real = os.path.realpath(root)
        if real not in self.roots:
            self.roots.append(real)

    def start(self):
        threading.Thread(target=self.serve_forever, name="fileserver", daemon=True).start()
        return self


def fetch(file_url, dest, offset=0, length=-1, timeout=30):
    """Copy `file_url` (bytes [offset, offset+length)) to the local file `dest`.

    Raises FetchFailed naming the host when the server cannot be reached or answers an error."""
    address, path = parse_url(file_url)
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=min(timeout, CONNECT_TIMEOUT_S)) as s:
            s.settimeout(timeout)
            tune_socket(s)
            client_handshake(s, secret_from_env())
            s.sendall(f"GET {offset} {length} {path}\n".encode())
            f = s.makefile("rb")
            n = _LEN.unpack(_read_exact(f, 8))[0]
            if n < 0:
                raise FetchFailed(f"{file_url}: {_read_exact(f, -n).decode(errors='replace')}",
                                  address)
            with open(dest, "wb") as out:
                left = n
                while left:
                    block = f.read(min(_CHUNK, left))
                    if not block:
                        raise ConnectionError("connection closed mid-file")
                    out.write(block)
                    left -= len(block)
    except (OSError, ValueError) as e:
        raise FetchFailed(f"{file_url}: {e}", address) from e


def _read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise ConnectionError("connection closed")
    return data


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--root", required=True)
    args = p.parse_args()
    server = FileServer(args.root.split(","), args.bind, args.port)
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
