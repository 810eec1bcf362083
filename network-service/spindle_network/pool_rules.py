"""Pure checks for a new IP pool: addresses inside the subnet, floating and Docker-automatic
ranges apart, and no overlap with a network the host already uses."""
import ipaddress
from dataclasses import dataclass

from spindle_common.errors import ApiError

Net = ipaddress.IPv4Network


@dataclass(frozen=True)
class PoolPlan:
    cidr: Net
    gateway: ipaddress.IPv4Address
    floating: Net
    auto: Net

    def floating_addresses(self) -> list[str]:
        """Every usable floating address (never the gateway, network or broadcast address)."""
        skip = {self.gateway, self.cidr.network_address, self.cidr.broadcast_address}
        return [str(a) for a in self.floating if a not in skip]


def _net(value: str, field: str) -> Net:
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ApiError(422, "INVALID_CIDR", f"{field} {value!r} is not a valid network: {exc}",
                       {"field": field}) from None
    if net.version != 4:
        raise ApiError(422, "INVALID_CIDR", f"{field} must be IPv4", {"field": field})
    return net


def plan_pool(cidr: str, gateway: str | None, floating: str | None, auto: str | None,
              host_networks: list[Net]) -> PoolPlan:
    """Validate a pool. Defaults: gateway = first address, Docker's range = lower half, floating = upper half."""
    net = _net(cidr, "cidr")
    if net.is_loopback or net.is_link_local or net.is_multicast or net.is_reserved or net.is_unspecified:
        raise ApiError(422, "INVALID_CIDR", f"{net} is a special-purpose range, not usable for a pool",
                       {"field": "cidr"})
    if net.prefixlen > 29:
        raise ApiError(422, "INVALID_CIDR", "cidr must be /29 or larger", {"field": "cidr"})
    lower, upper = net.subnets(prefixlen_diff=1)
    floating_net = _net(floating, "floating_cidr") if floating else upper
    auto_net = _net(auto, "auto_cidr") if auto else lower
    try:
        gw = ipaddress.IPv4Address(gateway) if gateway else next(net.hosts())
    except ValueError:
        raise ApiError(422, "INVALID_GATEWAY", f"gateway {gateway!r} is not an IPv4 address",
                       {"field": "gateway"}) from None
    if gw not in net or gw in (net.network_address, net.broadcast_address):
        raise ApiError(422, "INVALID_GATEWAY", f"gateway {gw} is not a host address of {net}", {"field": "gateway"})
    for name, sub in (("floating_cidr", floating_net), ("auto_cidr", auto_net)):
        if not sub.subnet_of(net):
            raise ApiError(422, "RANGE_OUTSIDE_CIDR", f"{name} {sub} is not inside {net}", {"field": name})
    if floating_net.overlaps(auto_net):
        raise ApiError(422, "RANGES_OVERLAP", f"floating_cidr {floating_net} overlaps Docker's range {auto_net}",
                       {"field": "floating_cidr"})
    clash = [str(h) for h in host_networks if h.overlaps(net)]
    if clash:
        raise ApiError(409, "OVERLAPS_HOST_NETWORK", f"{net} overlaps networks this host uses: {', '.join(clash)}",
                       {"host_networks": clash})
    plan = PoolPlan(net, gw, floating_net, auto_net)
    if not plan.floating_addresses():
        raise ApiError(422, "EMPTY_FLOATING_RANGE", f"{floating_net} holds no usable address",
                       {"field": "floating_cidr"})
    return plan
