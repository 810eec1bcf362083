"""Generated Thrift code (engine/build.sh) and connection helpers for the executor service."""

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

try:
    from ._gen.spindle_rpc import Executor, ttypes
except ImportError as e:  # pragma: no cover - only before engine/build.sh ran
    raise ImportError("spindle_engine: generated Thrift code missing; run engine/build.sh") from e


def protocol_factory():
    """Binary protocol, accelerated when thrift's C extension is present."""
    try:
        return TBinaryProtocol.TBinaryProtocolAcceleratedFactory()
    except AttributeError:  # pragma: no cover
        return TBinaryProtocol.TBinaryProtocolFactory()


def connect(host, port, timeout_ms=None):
    """Return (transport, Executor.Client) connected to an executor."""
    sock = TSocket.TSocket(host, port)
    if timeout_ms:
        sock.setTimeout(timeout_ms)
    transport = TTransport.TBufferedTransport(sock, 1 << 16)
    transport.open()
    return transport, Executor.Client(protocol_factory().getProtocol(transport))
