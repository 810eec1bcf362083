"""The packet filter a member's network namespace gets (``spindle_common.isolation``)."""
import pytest

from spindle_common.isolation import IN_CHAIN, OUT_CHAIN, PRIVATE_RANGES, PeerSet, rules


def chain(table: str, name: str) -> list[str]:
    return [line.removeprefix(f"-A {name} ") for line in table.splitlines() if line.startswith(f"-A {name} ")]


def test_peers_are_let_in_and_out_before_tenants_are_dropped():
    table = rules(["172.31.200.11", "172.31.200.10"], ["172.31.200.128/25", "172.31.200.64/26"])
    inbound = chain(table, IN_CHAIN)
    assert inbound == ["-i lo -j ACCEPT", "-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
                       "-s 172.31.200.10/32 -j ACCEPT", "-s 172.31.200.11/32 -j ACCEPT",
                       "-s 172.31.200.64/26 -j DROP", "-s 172.31.200.128/25 -j DROP"]
    outbound = chain(table, OUT_CHAIN)
    assert outbound[:6] == ["-o lo -j ACCEPT", "-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
                            "-d 172.31.200.10/32 -j ACCEPT", "-d 172.31.200.11/32 -j ACCEPT",
                            "-d 172.31.200.64/26 -j DROP", "-d 172.31.200.128/25 -j DROP"]
    # DNS anywhere but to tenants; then every private range refused (the platform, the site)
    assert outbound[6:8] == ["-p udp --dport 53 -j ACCEPT", "-p tcp --dport 53 -j ACCEPT"]
    assert [r.split()[1] for r in outbound[8:]] == sorted(PRIVATE_RANGES, key=lambda n: (
        tuple(int(p) for p in n.split("/")[0].split(".")), n))
    assert all(r.endswith("REJECT --reject-with icmp-admin-prohibited") for r in outbound[8:])


def test_the_table_is_replaced_whole_and_hooked_once():
    table = rules([], [])
    lines = table.splitlines()
    assert lines[0] == "*filter" and lines[-1] == "COMMIT"
    assert lines.count(f"-A INPUT -j {IN_CHAIN}") == 1 and lines.count(f"-A OUTPUT -j {OUT_CHAIN}") == 1
    assert ":FORWARD DROP [0:0]" in lines
    assert not [line for line in lines if "-s " in line or "-d 172.31" in line]


@pytest.mark.parametrize("bad", ["172.31.200.1; iptables -F", "-j ACCEPT", "::1", "300.1.1.1", "10.0.0.0/33", ""])
def test_anything_but_an_ipv4_address_or_network_is_refused(bad):
    with pytest.raises(ValueError):
        rules([bad], [])
    with pytest.raises(ValueError):
        rules([], [bad])


def test_duplicates_collapse_and_host_bits_are_dropped():
    table = rules(["10.1.1.1", "10.1.1.1/32", " 10.1.1.1 "], ["172.31.200.130/25"])
    assert chain(table, IN_CHAIN).count("-s 10.1.1.1/32 -j ACCEPT") == 1
    assert "-s 172.31.200.128/25 -j DROP" in chain(table, IN_CHAIN)


@pytest.mark.parametrize("a,b,same", [
    (PeerSet(cluster_id="c", peers=["10.0.0.1", "10.0.0.2"], tenant_ranges=["10.0.0.0/24"]),
     PeerSet(cluster_id="c", peers=["10.0.0.2", "10.0.0.1"], tenant_ranges=["10.0.0.0/24"]), True),
    (PeerSet(cluster_id="c", peers=["10.0.0.1"], tenant_ranges=["10.0.0.0/24"]),
     PeerSet(cluster_id="c", peers=["10.0.0.1", "10.0.0.3"], tenant_ranges=["10.0.0.0/24"]), False),
    (PeerSet(cluster_id="c", peers=["10.0.0.1"], tenant_ranges=["10.0.0.0/24"]),
     PeerSet(cluster_id="c", peers=["10.0.0.1"], tenant_ranges=["10.0.1.0/24"]), False),
])
def test_a_version_changes_exactly_when_the_set_does(a, b, same):
    assert (a.versioned().version == b.versioned().version) is same
    assert a.versioned().version


def test_the_platform_inside_a_tenant_range_is_let_in_before_tenants_are_dropped_but_never_reached():
    table = rules(["172.31.200.130"], ["172.31.200.0/25", "172.31.200.128/25"], ["172.31.200.1", "172.31.200.130"])
    inbound = chain(table, IN_CHAIN)
    assert inbound[2:] == ["-s 172.31.200.130/32 -j ACCEPT", "-s 172.31.200.1/32 -j ACCEPT",
                           "-s 172.31.200.0/25 -j DROP", "-s 172.31.200.128/25 -j DROP"]
    outbound = chain(table, OUT_CHAIN)
    assert "-d 172.31.200.1/32 -j ACCEPT" not in outbound


def test_a_kerberos_cluster_reaches_the_kdc_s_port_and_nothing_else_of_that_address():
    table = rules(["172.31.200.11"], ["172.31.200.0/24"], ["172.31.200.1"], kdc="172.31.250.1")
    outbound = chain(table, OUT_CHAIN)
    kdc = outbound.index("-d 172.31.250.1/32 -p tcp --dport 88 -j ACCEPT")
    assert kdc < outbound.index("-d 172.16.0.0/12 -j REJECT --reject-with icmp-admin-prohibited")
    assert [r for r in outbound if "172.31.250.1" in r] == [outbound[kdc]]
    assert "--dport 88" not in rules(["172.31.200.11"], ["172.31.200.0/24"])


@pytest.mark.parametrize("bad", ["172.31.250.0/24", "kdc.example", "1.2.3.4 -j ACCEPT"])
def test_a_kdc_is_one_address(bad):
    with pytest.raises(ValueError):
        rules([], [], kdc=bad)
