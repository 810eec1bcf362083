"""Calls of the live public API that go on through another engineer's restart of a service (its
API is unreachable, status 0, or 502/503 for a moment) instead of failing the test."""
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from spindle_client.client import SpindleClient, SpindleError
from tests.integration.platform.cluster_checks import wait_settled

T = TypeVar("T")
# What a restarting service looks like from the public API.
PASSING = (0, 502, 503)


def retrying(call: Callable[[], T], timeout: float = 180) -> T:
    """``call()``, again every 2 s while it fails as a restarting service does, up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except SpindleError as exc:
            if exc.status not in PASSING or time.monotonic() > deadline:
                raise
            time.sleep(2)


def settled(user: SpindleClient, cluster: dict, states: tuple[str, ...], timeout: float) -> dict:
    """``wait_settled``, going on through a restart of a service."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return wait_settled(user, cluster, states, timeout=max(deadline - time.monotonic(), 1))
        except SpindleError as exc:
            if exc.status not in PASSING or time.monotonic() > deadline:
                raise
            time.sleep(2)


@contextmanager
def running_cluster(owner: SpindleClient, product: str, version: str, options: dict,
                    timeout: float = 600) -> Iterator[dict]:
    """A cluster of ``owner``, launched and RUNNING (else the test fails with its reason), destroyed
    (and waited for) after."""
    launched = retrying(lambda: owner.launch(product, version, options))
    try:
        running = settled(owner, launched, ("RUNNING", "FAILED"), timeout=timeout)
        assert running["state"] == "RUNNING", (running["reason_code"], running["reason"])
        yield running
    finally:
        retrying(lambda: owner.delete(launched))
        settled(owner, launched, ("DESTROYED",), timeout=300)


def replaced(user: SpindleClient, cluster: dict, member_id: str, timeout: float,
             replacements: int = 1) -> tuple[dict, dict]:
    """(cluster, member) once the killed member ``member_id`` runs again as its ``replacements``-th
    replacement (the first by default) and the cluster is RUNNING; the cluster may only be DEGRADED
    meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        cluster = retrying(lambda c=cluster: user.cluster(c))
        member = next(m for m in cluster["members"] if m["member_id"] == member_id)
        if cluster["state"] == "RUNNING" and member["replacements"] == replacements and \
                member["state"] == "TASK_RUNNING":
            return cluster, member
        assert cluster["state"] in ("RUNNING", "DEGRADED"), (cluster["reason_code"], cluster["reason"])
        assert time.monotonic() < deadline, member
        time.sleep(1)


def resized_without(user: SpindleClient, cluster: dict, member_id: str, after_seq: int, timeout: float) -> dict:
    """The cluster once it is RUNNING without ``member_id`` (a resize drained and removed it); it may
    only be RESIZING meanwhile, and the timeline after ``after_seq`` may not say the resize was
    refused (the test fails at once with what the refusal says)."""
    deadline = time.monotonic() + timeout
    while True:
        cluster = retrying(lambda c=cluster: user.cluster(c))
        if cluster["state"] == "RUNNING" and member_id not in [m["member_id"] for m in cluster["members"]]:
            return cluster
        refused = refused_after(user, cluster, after_seq)
        assert not refused, [(e.member_id, e.message) for e in refused]
        assert cluster["state"] in ("RUNNING", "RESIZING"), (cluster["reason_code"], cluster["reason"])
        assert time.monotonic() < deadline, cluster
        time.sleep(2)


def refused_after(user: SpindleClient, cluster: dict, after_seq: int) -> list:
    """The timeline's REFUSED entries after ``after_seq`` (none yet: [])."""
    return [e for e in retrying(lambda: user.events(cluster, after_seq)) if e.state == "REFUSED"]


def refusals(user: SpindleClient, cluster: dict, after_seq: int, timeout: float) -> list:
    """The timeline's REFUSED entries after ``after_seq``, once there is one."""
    deadline = time.monotonic() + timeout
    while not (found := refused_after(user, cluster, after_seq)):
        assert time.monotonic() < deadline, user.events(cluster, after_seq)
        time.sleep(2)
    return found
