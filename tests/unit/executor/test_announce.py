"""The gratuitous ARP that announces a container's floating IP (spindle_executor.announce)."""
import struct

import pytest

from spindle_executor.announce import gratuitous_arp


@pytest.mark.parametrize(("mac", "ip"), [("02:42:ac:1f:c8:05", "172.31.200.5"), ("02:42:0a:14:00:01", "10.20.0.1")])
def test_the_frame_announces_the_address_from_itself_to_everyone(mac, ip):
    frame = gratuitous_arp(mac, ip)
    hardware, address = bytes.fromhex(mac.replace(":", "")), bytes(int(part) for part in ip.split("."))
    assert len(frame) == 60 and frame[42:] == b"\x00" * 18  # padded to Ethernet's minimum
    assert (frame[0:6], frame[6:12], frame[12:14]) == (b"\xff" * 6, hardware, b"\x08\x06")  # broadcast ARP
    htype, ptype, hlen, plen, op = struct.unpack("!HHBBH", frame[14:22])
    assert (htype, ptype, hlen, plen, op) == (1, 0x0800, 6, 4, 1)  # an Ethernet/IPv4 request
    # RFC 5227's announcement: sender and target address both the announced one, target MAC unknown
    assert (frame[22:28], frame[28:32], frame[32:38], frame[38:42]) == (hardware, address, b"\x00" * 6, address)


@pytest.mark.parametrize(("mac", "ip"), [("02:42:ac", "172.31.200.5"), ("zz:42:ac:1f:c8:05", "172.31.200.5"),
                                         ("02:42:ac:1f:c8:05", "172.31.200")])
def test_a_malformed_address_is_refused(mac, ip):
    with pytest.raises((ValueError, OSError)):
        gratuitous_arp(mac, ip)
