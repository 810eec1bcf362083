"""A container's floating IP announced on its network the moment it starts: a gratuitous ARP.

Docker derives a container's MAC address from its IP, so a floating IP that moves to another node (a
member replaced after its node died, a later cluster given an IP freed on another node) keeps its MAC.
Until the container speaks, the fabric's switches (for simulated nodes the ``spdl-fabric`` bridge)
still send that MAC's frames to the old node's port, and hosts that cached the address do not ask
again: the member is unreachable until those entries age out or a host's neighbour probes fail over
to a broadcast (seconds to minutes). An announcement (RFC 5227: an ARP request for the address from
the address) moves both at once, as VRRP routers do when an address moves to them.

``python -m spindle_executor.announce INTERFACE MAC IP`` sends it; the executor runs that in the
container's network namespace (``announce``)."""
import logging
import socket
import struct
import subprocess
import sys

log = logging.getLogger("spindle.executor.announce")
ETH_P_ARP, ETH_P_IP = 0x0806, 0x0800
ETHERNET_MIN_FRAME = 60  # without the frame check sequence


def gratuitous_arp(mac: str, ip: str) -> bytes:
    """The Ethernet broadcast frame announcing that ``ip`` is at ``mac``."""
    hardware, address = bytes.fromhex(mac.replace(":", "")), socket.inet_pton(socket.AF_INET, ip)
    if len(hardware) != 6:
        raise ValueError(f"not an Ethernet address: {mac!r}")
    arp = struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 1) + hardware + address + b"\x00" * 6 + address
    frame = b"\xff" * 6 + hardware + struct.pack("!H", ETH_P_ARP) + arp
    return frame.ljust(ETHERNET_MIN_FRAME, b"\x00")


def send(interface: str, mac: str, ip: str) -> None:
    """Send the announcement out of ``interface`` (in this process's network namespace)."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as raw:
        raw.bind((interface, 0))
        raw.send(gratuitous_arp(mac, ip))


def announce(pid: int, mac: str, ip: str, interface: str = "eth0") -> bool:
    """Announce ``ip`` at ``mac`` from the network namespace of process ``pid`` (``nsenter --net``: the
    executor runs as root on its node). Best effort: whether it was sent; a failure is logged."""
    try:
        done = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", sys.executable, "-m", __name__,
                               interface, mac, ip], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("announcing %s at %s failed: %s", ip, mac, exc)
        return False
    if done.returncode != 0:
        log.warning("announcing %s at %s failed (%s): %s", ip, mac, done.returncode, done.stderr.strip()[-500:])
    return done.returncode == 0


if __name__ == "__main__":
    send(*sys.argv[1:4])
