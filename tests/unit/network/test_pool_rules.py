"""Pool validation: defaults, addresses inside the subnet, ranges apart, host networks respected."""
import ipaddress

import pytest

from spindle_common.errors import ApiError
from spindle_network.pool_rules import plan_pool

HOST = [ipaddress.ip_network("192.0.2.0/24"), ipaddress.ip_network("172.17.0.0/16")]


def test_defaults_split_the_subnet_and_skip_gateway_and_broadcast():
    plan = plan_pool("172.31.201.0/24", None, None, None, HOST)
    assert str(plan.gateway) == "172.31.201.1"
    assert (str(plan.auto), str(plan.floating)) == ("172.31.201.0/25", "172.31.201.128/25")
    addresses = plan.floating_addresses()
    assert addresses[0] == "172.31.201.128" and addresses[-1] == "172.31.201.254" and len(addresses) == 127


@pytest.mark.parametrize("args,code", [
    (("10.0.0.0/33", None, None, None), "INVALID_CIDR"),
    (("10.0.0.1/24", None, None, None), "INVALID_CIDR"),  # host bits set
    (("fd00::/64", None, None, None), "INVALID_CIDR"),
    (("10.9.0.0/30", None, None, None), "INVALID_CIDR"),  # too small
    (("127.0.0.0/24", None, None, None), "INVALID_CIDR"),
    (("169.254.0.0/24", None, None, None), "INVALID_CIDR"),
    (("10.9.0.0/24", "10.9.1.1", None, None), "INVALID_GATEWAY"),
    (("10.9.0.0/24", "10.9.0.255", None, None), "INVALID_GATEWAY"),
    (("10.9.0.0/24", "not-an-ip", None, None), "INVALID_GATEWAY"),
    (("10.9.0.0/24", None, "10.9.1.0/25", None), "RANGE_OUTSIDE_CIDR"),
    (("10.9.0.0/24", None, "10.9.0.0/25", "10.9.0.64/26"), "RANGES_OVERLAP"),
    (("192.0.2.128/25", None, None, None), "OVERLAPS_HOST_NETWORK"),
    (("172.16.0.0/12", None, None, None), "OVERLAPS_HOST_NETWORK"),
])
def test_bad_pools_are_refused_with_a_code(args, code):
    with pytest.raises(ApiError) as error:
        plan_pool(*args, HOST)
    assert error.value.code == code
