"""A container's floating IP announcement leaves through the interface of the namespace it is sent
from: sent (as the executor does, through ``nsenter --net``) from this process's own namespace on
``lo``, where a packet socket sees it."""
import os
import socket

from spindle_executor.announce import ETH_P_ARP, announce, gratuitous_arp

MAC, IP = "02:42:c0:00:02:63", "192.0.2.99"  # TEST-NET-1: no pool's address


def test_the_announcement_goes_out_of_the_namespace_s_interface():
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP)) as tap:
        tap.bind(("lo", 0))
        tap.settimeout(5)
        assert announce(os.getpid(), MAC, IP, interface="lo")
        frames = []
        while gratuitous_arp(MAC, IP) not in frames:
            frames.append(tap.recv(2048))  # socket.timeout if it never comes
    assert frames[-1][6:12] == bytes.fromhex(MAC.replace(":", ""))


def test_an_ended_process_s_namespace_is_reported_not_raised():
    assert announce(2**22 + 1, MAC, IP) is False  # no such pid: nsenter fails, the launch goes on
