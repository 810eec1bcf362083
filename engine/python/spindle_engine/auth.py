"""Data-plane authentication of cluster mode (engine/rpc/AUTH.md).

Every connection to an engine agent, an executor or a file server starts with a mutual
challenge-response over the cluster's secret (env ``SPINDLE_CLUSTER_SECRET``, given by Spindle
to the cluster's members and its jobs' drivers only) before a single byte of the service's own
protocol is read, so nothing is unpickled, spawned or served for a caller without the secret:

  client -> server   MAGIC (8 bytes) + client nonce (32 random bytes)
  server -> client   server nonce (32) + HMAC-SHA256(secret, b"server" + nc + ns)
  client -> server   HMAC-SHA256(secret, b"client" + nc + ns)

Each side checks the other's proof in constant time and closes the connection when it is wrong.
Without a secret (local mode, tests) there is no handshake and the protocols are unchanged.
"""

import hashlib
import hmac
import os

MAGIC = b"SPDLAUT1"
NONCE = 32
MAC = 32
ENV = "SPINDLE_CLUSTER_SECRET"
HANDSHAKE_TIMEOUT_S = 10


class AuthFailed(ConnectionError):
    """The peer did not prove it holds the cluster secret (or broke off the handshake)."""


def secret_from_env():
    """The cluster secret as bytes, or None (local mode: no authentication)."""
    value = os.environ.get(ENV, "")
    return value.encode() if value else None


def _mac(secret, label, nc, ns):
    return hmac.new(secret, label + nc + ns, hashlib.sha256).digest()


def _recv_exact(sock, n):
    data = b""
    while len(data) < n:
        block = sock.recv(n - len(data))
        if not block:
            raise AuthFailed("connection closed during the authentication handshake")
        data += block
    return data


def _with_timeout(sock, f):
    before = sock.gettimeout()
    sock.settimeout(HANDSHAKE_TIMEOUT_S if before is None else min(before, HANDSHAKE_TIMEOUT_S))
    try:
        return f()
    except TimeoutError as e:
        raise AuthFailed("authentication handshake timed out") from e
    finally:
        sock.settimeout(before)


def client_handshake(sock, secret):
    """Prove to the server on `sock` that we hold `secret`, and check that it does too."""
    if not secret:
        return

    def run():
        nc = os.urandom(NONCE)
        sock.sendall(MAGIC + nc)
        answer = _recv_exact(sock, NONCE + MAC)
        ns, proof = answer[:NONCE], answer[NONCE:]
        if not hmac.compare_digest(proof, _mac(secret, b"server", nc, ns)):
            raise AuthFailed("the server does not hold the cluster secret")
        sock.sendall(_mac(secret, b"client", nc, ns))

    _with_timeout(sock, run)


def server_handshake(sock, secret):
    """Check that the client on `sock` holds `secret` (raises AuthFailed otherwise)."""
    if not secret:
        return

    def run():
        hello = _recv_exact(sock, len(MAGIC) + NONCE)
        if not hmac.compare_digest(hello[:len(MAGIC)], MAGIC):
            raise AuthFailed("the client did not start the authentication handshake")
        nc, ns = hello[len(MAGIC):], os.urandom(NONCE)
        sock.sendall(ns + _mac(secret, b"server", nc, ns))
        proof = _recv_exact(sock, MAC)
        if not hmac.compare_digest(proof, _mac(secret, b"client", nc, ns)):
            raise AuthFailed("the client does not hold the cluster secret")

    _with_timeout(sock, run)
