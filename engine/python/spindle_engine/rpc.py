"""Generated Thrift code (engine/build.sh) and connection helpers for the executor service."""

import socket

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from .auth import client_handshake, secret_from_env

try:
    from ._gen.spindle_agent import Agent
    from ._gen.spindle_agent import ttypes as agent_types
    from ._gen.spindle_rpc import Executor, ttypes
except ImportError as e:  # pragma: no cover - only before engine/build.sh ran
    raise ImportError("spindle_engine: generated Thrift code missing; run engine/build.sh") from e


def protocol_factory():
    """Binary protocol, accelerated when thrift's C extension is present."""
    try:
        return TBinaryProtocol.TBinaryProtocolAcceleratedFactory()
    except AttributeError:  # pragma: no cover
        return TBinaryProtocol.TBinaryProtocolFactory()


def connect(host, port, timeout_ms=None, service=Executor):
    """Return (transport, client of `service`) connected to host:port (an executor by default)."""
    sock = TSocket.TSocket(host, port)
    if timeout_ms:
        sock.setTimeout(timeout_ms)
    transport = TTransport.TBufferedTransport(sock, 1 << 16)
    transport.open()
    tune_socket(sock.handle)
    try:
        client_handshake(sock.handle, secret_from_env())  # cluster mode: AUTH.md
    except OSError:
        transport.close()
        raise
    return transport, service.Client(protocol_factory().getProtocol(transport))


def close_quietly(transport):
    """Close a transport that may already be broken."""
    if transport is not None:
        try:
            transport.close()
        except OSError:
            pass


def tune_socket(s):
    """Set up a control or fetch connection. Keepalive: notice a peer whose host vanished (a
    killed container sends no FIN) within ~3 s even while waiting for a long task's answer
    (probes are answered by the peer's kernel, so a busy executor is never taken for a dead one).
    No delay: the handshake's proof and the request after it are two small writes, and Nagle
    would hold the second until the peer's delayed ACK, 40 ms per connection."""
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (("TCP_KEEPIDLE", 1), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 2)):
        if hasattr(socket, option):
            s.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)



__all__ = ["Agent", "Executor", "agent_types", "close_quietly", "connect", "tune_socket",
           "protocol_factory", "ttypes"]
