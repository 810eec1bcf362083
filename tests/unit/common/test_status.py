"""How a service's overall health is derived from its Consul checks."""
from spindle_client.status import worst_status


def testworst_status_status_wins():
    assert worst_status(["passing", "passing"]) == "passing"
    assert worst_status(["passing", "warning"]) == "warning"
    assert worst_status(["warning", "critical", "passing"]) == "critical"
