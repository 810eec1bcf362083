"""deploy/lib/disks.sh for real: ensure_dev_disks makes loop disks, mounts and registers them (again
and again the same ones); remove_dev_disks takes away exactly those, in a state dir of its own."""
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from disk_helpers import ADMIN, TOKEN

REPO = Path(__file__).resolve().parents[3]


def loops_of(directory: Path) -> dict[str, str]:
    """{backing file: loop device} for files below ``directory``."""
    out = subprocess.run(["losetup", "-a", "-O", "NAME,BACK-FILE", "-n"], capture_output=True, text=True).stdout
    pairs = (line.split(None, 1) for line in out.splitlines() if line.strip())
    return {back.strip(): name for name, back in pairs if back.strip().startswith(str(directory))}


def mounts_below(directory: Path) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout
    return sorted(t for t in out.split() if t.startswith(str(directory)))


@pytest.fixture
def dev_disks(tmp_path, live_url):
    """Runs a function of deploy/lib/disks.sh against the live test service, in tmp_path's state dir."""
    state = tmp_path / "state"
    env = {**os.environ, "SPINDLE_STATE_DIR": str(state), "SPINDLE_DEV_DISKS": "1:hdd,1:ssd",
           "SPINDLE_DEV_DISK_SIZE": "512M", "SPINDLE_DISK_SERVICE_URL": live_url,
           "SPINDLE_INTERNAL_TOKEN": TOKEN, "SPINDLE_NODE_NAME": "devtest"}

    def run(function: str) -> subprocess.CompletedProcess:
        script = f'source deploy/lib/common.sh; source deploy/lib/disks.sh; {function}'
        return subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    yield run, state, live_url
    run("remove_dev_disks")


def test_ensure_is_idempotent_and_remove_takes_only_its_own(dev_disks):
    run, state, url = dev_disks
    others_before = [m for m in mounts_below(Path("/")) if not m.startswith(str(state))]

    first = run("ensure_dev_disks")
    assert first.returncode == 0, first.stderr
    loops = loops_of(state)
    assert sorted(Path(f).name for f in loops) == ["disk1.img", "disk2.img"]
    mounts = [str(state / "disks" / "disk1"), str(state / "disks" / "disk2")]
    assert mounts_below(state) == mounts
    # Registered through the API as this machine's node, with the configured classes.
    disks = httpx.get(f"{url}/disks", params={"node": "devtest"}, headers=ADMIN).json()["items"]
    ours = {d["mount_point"]: (d["disk_class"], d["device_path"], d["state"]) for d in disks}
    assert {m: ours[m] for m in mounts} == {mounts[0]: ("hdd", loops[f"{state}/dev-disks/disk1.img"], "free"),
                                            mounts[1]: ("ssd", loops[f"{state}/dev-disks/disk2.img"], "free")}

    again = run("ensure_dev_disks")
    assert again.returncode == 0, again.stderr
    assert "0 disks registered" in again.stderr
    assert loops_of(state) == loops  # the same loop devices, reused, not formatted again

    removed = run("remove_dev_disks")
    assert removed.returncode == 0, removed.stderr
    assert loops_of(state) == {} and mounts_below(state) == []
    assert not (state / "dev-disks").exists()
    assert [m for m in mounts_below(Path("/")) if not m.startswith(str(state))] == others_before


def test_a_bad_disk_spec_changes_nothing(dev_disks, tmp_path):
    run, state, _ = dev_disks
    bad = run("SPINDLE_DEV_DISKS=2:tape ensure_dev_disks")
    assert bad.returncode == 1 and "is not COUNT:hdd|ssd|nvme" in bad.stderr
    assert loops_of(state) == {}
