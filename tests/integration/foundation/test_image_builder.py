"""deploy/up's background image builder (deploy/build-images, deploy/lib/products.sh) on a catalog of
two throwaway products, with the real Docker Engine and the platform's registry: each image's state
file goes queued → … → ready (built with a low CPU share, pushed) or failed naming its log, one
image at a time; a later `up` leaves ready images alone, tries a failed one again, and starts no
builder when nothing is left to do (so a second `up` restarts nothing)."""
import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = "ARG BASE_IMAGE\nFROM $BASE_IMAGE\nRUN echo one > /one\nRUN echo two > /two\n"


def product(root: Path, name: str, image: str, dockerfile: str) -> None:
    folder = root / "catalog" / name / "1"
    folder.mkdir(parents=True)
    (folder / "Dockerfile").write_text(dockerfile)
    (folder / "manifest.json").write_text(json.dumps({"name": name, "version": "1", "image": image}))


def run_builder(root: Path, env: dict[str, str]) -> None:
    """start_product_image_builds as deploy/up calls it, then wait for the builder to end."""
    script = ("source deploy/lib/common.sh; for lib in images products registry; do source deploy/lib/$lib.sh; done; "
              "start_product_image_builds")
    subprocess.run(["bash", "-c", script], cwd=root, env=env, check=True, capture_output=True, timeout=120)
    pid = int((Path(env["SPINDLE_STATE_DIR"]) / "run" / "image-builder.pid").read_text())
    deadline = time.monotonic() + 600
    while Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]:
        assert time.monotonic() < deadline, "the builder did not end"
        time.sleep(0.5)


def state(env: dict[str, str], image: str) -> dict:
    name = image.replace("/", "_").replace(":", "_") + ".json"
    return json.loads((Path(env["SPINDLE_STATE_DIR"]) / "images" / name).read_text())


def in_registry(image: str) -> bool:
    name, tag = image.split(":")
    answer = httpx.get(f"http://127.0.0.1:5000/v2/{name}/manifests/{tag}", timeout=10,
                       headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"})
    return answer.status_code == 200


def test_the_builder_builds_pushes_and_reports_each_image(tmp_path, platform_env):
    root = tmp_path / "spindle"
    root.mkdir()
    (root / "deploy").symlink_to(REPO / "deploy")
    tag = uuid.uuid4().hex[:8]
    good, bad = f"spindle-test/builder-{tag}:1", f"spindle-test/broken-{tag}:1"
    product(root, "good", good, DOCKERFILE)
    product(root, "bad", bad, DOCKERFILE + "RUN false\n")
    state_dir = tmp_path / "state"
    env = {**os.environ, "SPINDLE_STATE_DIR": str(state_dir), "SPINDLE_LOG_DIR": str(state_dir / "log"),
           "SPINDLE_BASE_IMAGE": "spindle/base:bookworm"}
    try:
        run_builder(root, env)
        assert state(env, good)["state"] == "ready" and in_registry(good)
        labels = json.loads(subprocess.run(["docker", "image", "inspect", "-f", "{{json .Config.Labels}}", good],
                                           check=True, capture_output=True, text=True).stdout)
        assert labels["io.spindle.owned"] == "true" and labels["io.spindle.dockerfile-sha256"]
        failed = state(env, bad)
        log = tmp_path / "state" / "log" / "build-bad-1.log"
        assert failed["state"] == "failed" and failed["message"] == f"docker build failed: see {log}", failed
        step = re.search(r"^Step 5/\d+ : RUN false\n ---> Running in ([0-9a-f]+)$", log.read_text(), re.M)
        assert step, log.read_text()[-2000:]
        # the failed step's container goes with the build (52 of them, exited, had piled up before --force-rm)
        assert subprocess.run(["docker", "ps", "-aq", "--filter", f"id={step[1]}"], check=True,
                              capture_output=True, text=True).stdout.strip() == ""
        assert not in_registry(bad)
        builder_log = (tmp_path / "state" / "log" / "image-builder.log").read_text()
        assert f"product image {good} is ready" in builder_log and "1 failed" in builder_log

        ready_at = state(env, good)["updated"]
        run_builder(root, env)  # again: the ready image is left alone, the failed one tried again
        assert state(env, good) == {**state(env, good), "state": "ready", "updated": ready_at}
        assert state(env, bad)["state"] == "failed"
        builder_log = (tmp_path / "state" / "log" / "image-builder.log").read_text()
        assert builder_log.count(f"building product image {bad}") == 2
        assert builder_log.count(f"building product image {good}") == 1

        subprocess.run(["docker", "rmi", "-f", bad], capture_output=True)
        (root / "catalog" / "bad").rename(tmp_path / "bad")  # nothing left to build: no builder starts
        pid_file = state_dir / "run" / "image-builder.pid"
        before = pid_file.read_text()
        run_builder(root, env)
        assert pid_file.read_text() == before
        assert state(env, good)["updated"] == ready_at
    finally:
        for image in (good, bad):
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def test_builds_run_with_a_low_cpu_share():
    """The cgroup the builds' containers go in (Docker's --cgroup-parent): cgroup v1's cpu.shares or
    v2's cpu.weight, below the default that members and tests have."""
    script = "source deploy/lib/common.sh; source deploy/lib/products.sh; build_cgroup"
    out = subprocess.run(["bash", "-c", script], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
    assert out == "/spindle-build"
    v1 = Path("/sys/fs/cgroup/cpu/spindle-build/cpu.shares")
    share, default = (v1, 1024) if v1.exists() else (Path("/sys/fs/cgroup/spindle-build/cpu.weight"), 100)
    assert int(share.read_text()) < default
