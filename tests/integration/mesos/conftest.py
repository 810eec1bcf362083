"""The conformance suite's Mesos master: the embedded one (started here on a free loopback port),
or a real Mesos/clusterd master when SPINDLE_MESOS_MASTER_URL=host:port is set."""
import json
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from pymesos import MesosSchedulerDriver, Scheduler

from tests.support.embedded_master import embedded_master

EXECUTOR = f"{sys.executable} {Path(__file__).parent / 'sleepy_executor.py'}"


@pytest.fixture
def master(tmp_path):
    external = os.environ.get("SPINDLE_MESOS_MASTER_URL")
    if external:
        yield external, None
        return
    disk = tmp_path / "disk1"
    disk.mkdir()
    resources = tmp_path / "resources.json"
    resources.write_text(json.dumps([{"name": "disk", "type": "SCALAR", "scalar": {"value": 4096},
                                      "reservations": [{"type": "STATIC", "role": "spindle"}],
                                      "disk": {"source": {"type": "MOUNT", "mount": {"root": str(disk)}}}}]))
    with embedded_master(tmp_path, SPINDLE_MESOS_RESOURCES=str(resources), SPINDLE_AGENT_CPUS="4",
                         SPINDLE_AGENT_MEM_MB="4096") as url:
        yield url, str(disk)


class Recorder(Scheduler):
    """A test framework that records what the master tells it."""

    def __init__(self):
        self.offers, self.updates, self.rescinded, self.lock = [], [], [], threading.Condition()
        self.framework_id = None
        self.decline_with = None  # refuse_seconds to decline offers with; None = keep them

    def registered(self, driver, framework_id, master_info):
        with self.lock:
            self.framework_id = framework_id["value"]
            self.lock.notify_all()

    def reregistered(self, driver, master_info):  # a failover subscribe with a known framework id
        with self.lock:
            self.framework_id = driver.framework_id
            self.lock.notify_all()

    def resourceOffers(self, driver, offers):  # noqa: N802
        with self.lock:
            self.offers += offers
            self.lock.notify_all()
        if self.decline_with is not None:
            for offer in offers:
                driver.declineOffer([offer["id"]], {"refuse_seconds": self.decline_with})

    def offerRescinded(self, driver, offer_id):  # noqa: N802
        with self.lock:
            self.rescinded.append(offer_id["value"])
            self.lock.notify_all()

    def statusUpdate(self, driver, update):  # noqa: N802
        with self.lock:
            self.updates.append(update)
            self.lock.notify_all()

    def wait(self, predicate, timeout=30):
        with self.lock:
            assert self.lock.wait_for(lambda: predicate(self), timeout), "timed out waiting"


@contextmanager
def framework(master_url: str, recorder: Recorder, **options):
    """A started framework driver, stopped (torn down) afterwards."""
    driver = start_framework(master_url, recorder, **options)
    try:
        yield driver
    finally:
        driver.stop()
        driver.join()


def start_framework(master_url: str, recorder: Recorder, framework_id: str | None = None,
                    implicit_acknowledgements: bool = True) -> MesosSchedulerDriver:
    info = {"user": "root", "name": "spindle-conformance", "roles": ["spindle"], "failover_timeout": 3600,
            "capabilities": [{"type": "MULTI_ROLE"}]}
    if framework_id:
        info["id"] = {"value": framework_id}
    driver = MesosSchedulerDriver(recorder, info, master_url, use_addict=True,
                                  implicit_acknowledgements=implicit_acknowledgements)
    driver.start()
    return driver


def operator(master_url: str, call: str) -> dict:
    return httpx.post(f"http://{master_url}/api/v1", json={"type": call}).raise_for_status().json()
