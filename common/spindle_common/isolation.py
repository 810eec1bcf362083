"""Network isolation per cluster: the packet filter of one member's (or job driver's) network
namespace, from what its cluster may reach (``docs/ARCHITECTURE.md``, "Network isolation").

Every tenant's members sit in one floating-IP pool (a Docker bridge on one machine, a macvlan on the
nodes' fabric), so isolation cannot come from the segment: it is enforced at both ends of every
connection, inside each container's own network namespace, where the container (without
``NET_ADMIN``) cannot change it:

- in: a peer (an address its cluster holds: members and job drivers) and the pool's gateway (the
  platform's own address on the members' segment) are let in; any other address of the pool's tenant
  ranges (another tenant's member) is dropped; anything else (the platform: a node's own address,
  the owner through the platform) is let in;
- out: peers, DNS, the platform's Kerberos KDC (TCP port 88 of its address, for clusters whose
  product authenticates with Kerberos), and the public internet; another tenant's address is dropped
  (a peer the filter does not know yet is retried by TCP until it does) and every other private
  address (the platform's services on the fabric or the gateway, other hosts of the site) is rejected.

This module only renders the rules (``iptables-restore`` input for the ``filter`` table, replaced
whole and atomically); the executor applies and keeps them in step with the cluster.
"""
import hashlib
import ipaddress
from collections.abc import Iterable

from spindle_common.contracts import Model

# What a container may never open a connection to, peers apart: private, shared, link-local and
# multicast space (the platform, the site, the cloud's metadata service).
PRIVATE_RANGES: tuple[str, ...] = ("10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
                                   "192.168.0.0/16", "224.0.0.0/4")
IN_CHAIN, OUT_CHAIN = "SPINDLE-IN", "SPINDLE-OUT"


class PeerSet(Model):
    """What the orchestrator answers for a cluster: every address its members and running job
    drivers hold, the pool's ranges where other tenants' addresses are, and the platform's own
    addresses inside those ranges (the pool's gateway)."""

    cluster_id: str
    peers: list[str]
    tenant_ranges: list[str]
    platform: list[str] = []
    kdc: str = ""  # the KDC's address, when the cluster's product uses Kerberos
    version: str = ""

    def versioned(self) -> "PeerSet":
        """The same set with ``version``: a digest of its content (equal sets, equal versions)."""
        digest = hashlib.sha256("|".join(",".join(sorted(part)) for part in (
            self.peers, self.tenant_ranges, self.platform, [self.kdc])).encode()).hexdigest()[:16]
        return self.model_copy(update={"version": digest})


def _networks(values: Iterable[str]) -> list[str]:
    """Canonical, sorted, de-duplicated IPv4 networks (a bare address is a /32); anything else is
    refused, so nothing but addresses reaches a rule."""
    networks = {ipaddress.IPv4Network(v.strip(), strict=False) for v in values}
    return [str(n) for n in sorted(networks)]


def rules(peers: Iterable[str], tenant_ranges: Iterable[str], platform: Iterable[str] = (), kdc: str = "") -> str:
    """The ``iptables-restore`` input of a container's ``filter`` table (it replaces the table)."""
    allowed, tenants, private = _networks(peers), _networks(tenant_ranges), _networks(PRIVATE_RANGES)
    kdcs = [str(ipaddress.IPv4Address(kdc.strip()))] if kdc else []  # one address, or a ValueError
    platform_in = [net for net in _networks(platform) if net not in allowed]
    lines = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]",
             f":{IN_CHAIN} - [0:0]", f":{OUT_CHAIN} - [0:0]",
             f"-A INPUT -j {IN_CHAIN}", f"-A OUTPUT -j {OUT_CHAIN}",
             f"-A {IN_CHAIN} -i lo -j ACCEPT",
             f"-A {IN_CHAIN} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"]
    lines += [f"-A {IN_CHAIN} -s {peer} -j ACCEPT" for peer in allowed + platform_in]
    lines += [f"-A {IN_CHAIN} -s {tenant} -j DROP" for tenant in tenants]
    lines += [f"-A {OUT_CHAIN} -o lo -j ACCEPT",
              f"-A {OUT_CHAIN} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"]
    lines += [f"-A {OUT_CHAIN} -d {peer} -j ACCEPT" for peer in allowed]
    lines += [f"-A {OUT_CHAIN} -d {tenant} -j DROP" for tenant in tenants]
    lines += [f"-A {OUT_CHAIN} -p {proto} --dport 53 -j ACCEPT" for proto in ("udp", "tcp")]
    lines += [f"-A {OUT_CHAIN} -d {address}/32 -p tcp --dport 88 -j ACCEPT" for address in kdcs]
    lines += [f"-A {OUT_CHAIN} -d {net} -j REJECT --reject-with icmp-admin-prohibited" for net in private]
    lines += ["COMMIT", ""]
    return "\n".join(lines)
