"""Networks this host already uses (interfaces and routes), except Spindle's own pool bridges."""
import ipaddress
import json
import subprocess


def host_networks(own: set[str], segment: str | None = None) -> list[ipaddress.IPv4Network]:
    """IPv4 networks of `ip -j route` and `ip -j addr`, minus those in ``own`` (pools' CIDRs) and
    those of the interface ``segment`` (a macvlan pool's parent: its subnet is the L2 segment the
    pool lives on, e.g. the node fabric, not a network the pool would shadow)."""
    found: set[ipaddress.IPv4Network] = set()
    routes = json.loads(subprocess.run(["ip", "-j", "-4", "route"], capture_output=True, text=True, check=True).stdout)
    for route in routes:
        if segment is not None and route.get("dev") == segment:
            continue
        if route.get("dst") not in (None, "default"):
            found.add(ipaddress.IPv4Network(route["dst"], strict=False))  # `ip -4`: IPv4 only
    links = json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=True).stdout)
    for link in links:
        if segment is not None and link.get("ifname") == segment:
            continue
        for addr in link.get("addr_info", []):
            found.add(ipaddress.IPv4Network(f'{addr["local"]}/{addr["prefixlen"]}', strict=False))
    return sorted(n for n in found if str(n) not in own)
