"""A product whose images deploy/up still builds in the background (deploy/build-images): the catalog
shows it ``preparing`` with the build's step, a launch of it is accepted and waits (its timeline
says for what), and goes on once the image is in the registry; a failed build fails the launch.

The running platform's orchestrator and api-server read the builder's state files
(``<state dir>/images/``, spindle_common.images); this test writes one for the base image, which
static-web runs on and the builder never builds (so it cannot interfere), and removes it after."""
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spindle_common.images import file_name
from tests.integration.platform.cluster_checks import wait_settled
from tests.support.live_users import live_user

BASE = "spindle/base:bookworm"
SMALL = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0}}}}


@pytest.fixture
def base_image_state(platform_env) -> Iterator[Path]:
    """The state file of the base image, as the builder would write it; removed (ready) after."""
    folder = Path(platform_env["SPINDLE_STATE_DIR"]) / "images"
    folder.mkdir(exist_ok=True)
    path = folder / file_name(BASE)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def write(path: Path, **state) -> None:
    path.with_suffix(".tmp").write_text(json.dumps({"image": BASE, **state}))
    path.with_suffix(".tmp").rename(path)  # whole, as the builder replaces it


def image_events(client, cluster) -> list[tuple[str, str]]:
    return [(e.state, e.message) for e in client.events(cluster) if e.step == "image"]


def test_a_launch_waits_for_its_products_image_then_runs(database_url, base_image_state):
    with live_user(database_url, "preparing") as user:
        write(base_image_state, state="building", step=2, steps=7)
        static = {p.name: p for p in user.products()}["static-web"]
        assert (static.images.state, static.images.image, static.images.step, static.images.steps) == \
            ("preparing", BASE, 2, 7), static.images
        cluster = user.launch("static-web", "1.0", SMALL)
        try:
            waiting = f"waiting for the product's image {BASE} building (step 2 of 7)"
            deadline = time.monotonic() + 60
            while ("WAITING", waiting) not in image_events(user, cluster):
                assert time.monotonic() < deadline, image_events(user, cluster)
                time.sleep(0.5)
            write(base_image_state, state="pushing")
            deadline = time.monotonic() + 60
            while len(image_events(user, cluster)) < 2:  # its progress shows, once per change
                assert time.monotonic() < deadline, image_events(user, cluster)
                time.sleep(0.5)
            assert user.cluster(cluster)["state"] == "PENDING"
            assert image_events(user, cluster) == [
                ("WAITING", waiting), ("WAITING", f"waiting for the product's image {BASE} pushing")]
            write(base_image_state, state="ready")
            running = wait_settled(user, cluster, ("RUNNING", "FAILED"), timeout=300)
            assert running["state"] == "RUNNING", running
            assert {p.name: p for p in user.products()}["static-web"].images.state == "ready"
        finally:
            user.delete(cluster)
            wait_settled(user, cluster, ("DESTROYED",), timeout=300)


def test_a_failed_image_build_fails_the_launch(database_url, base_image_state):
    with live_user(database_url, "imagefail") as user:
        write(base_image_state, state="failed", message="docker build failed: see build-x.log")
        assert {p.name: p for p in user.products()}["static-web"].images.state == "failed"
        cluster = user.launch("static-web", "1.0", SMALL)
        failed = wait_settled(user, cluster, ("FAILED", "RUNNING"), timeout=120)
        assert (failed["state"], failed["reason_code"]) == ("FAILED", "IMAGE_FAILED"), failed
        assert f"image {BASE} failed: docker build failed: see build-x.log" in failed["reason"]
        assert failed["members"] == [] or all(not m["ip"] for m in failed["members"])
        user.delete(cluster)
        wait_settled(user, cluster, ("DESTROYED",), timeout=120)
