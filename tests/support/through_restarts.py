"""Calls of the live public API that go on through another engineer's restart of a service (its
API is unreachable, status 0, or 502/503 for a moment) instead of failing the test."""
import time
from collections.abc import Callable
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
