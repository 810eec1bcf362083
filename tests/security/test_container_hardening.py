"""Hardened containers, on the running platform through the public API (issue 15, "Hardened
containers"): one cluster of each product is launched at once; every member's container

- drops every capability but those its role's manifest ``security`` keeps, with no-new-privileges,
  the role's pids limit and capped json-file logs; runs as the role's user (static-web: nobody, with
  a read-only root); and every host path bound into it is on a nosuid,nodev filesystem;
- cannot be made to exhaust the node's processes: a fork bomb inside stops at the pids limit and
  the platform's API still answers;
- cannot leave a working setuid binary or a device node on its dedicated disk for the host's local
  accounts: mknod is refused inside, and a setuid-root copy of ``id`` run from the host by an
  unprivileged account keeps that account's euid.

Each cluster is deleted at the end and must reach DESTROYED with nothing left."""
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest

from spindle_common.contracts import DEFAULT_PIDS_LIMIT
from tests.integration.platform.cluster_checks import assert_nothing_left, process_uids
from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import retrying, settled

CATALOG = Path(__file__).resolve().parents[2] / "catalog"
# The smallest cluster of each product that still has a member with a dedicated disk (the least
# cpus each role takes: the three share a node with whatever else runs; ssd for spark and engine,
# whose tests elsewhere hold the hdd disks).
SSD = {"hdd": 0, "ssd": 1}
LAUNCHES = {
    ("static-web", "1.0"): {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}},
    ("spark", "3.5"): {"roles": {"master": {"cpus": 0.25, "mem_mb": 512},
                                 "worker": {"count": 1, "cpus": 0.25, "mem_mb": 1024, "disks": SSD}}},
    ("engine", "1.0"): {"roles": {"backend": {"cpus": 0.1, "mem_mb": 128},
                                  "executor": {"count": 1, "cpus": 0.25, "mem_mb": 1024, "disks": SSD}}},
}
NOBODY = "65534:65534"


def role_security(product: str, version: str, role: str) -> dict:
    manifest = json.loads((CATALOG / product / version / "manifest.json").read_text())
    return manifest["roles"][role].get("security", {})


@pytest.fixture(scope="module")
def user(database_url):
    with live_user(database_url, "sec") as client:
        yield client


@pytest.fixture(scope="module")
def clusters(user, platform_env) -> Iterator[dict[str, dict]]:
    """One RUNNING cluster per product (launched together), by product name."""
    launched = {product: retrying(lambda p=product, v=version, o=options:
                                  user.launch(p, v, {**o, "wait_for_resources": True}))
                for (product, version), options in LAUNCHES.items()}
    try:
        running = {}
        for product, cluster in launched.items():
            cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=600)
            assert cluster["state"] == "RUNNING", (product, cluster["reason_code"], cluster["reason"])
            running[product] = cluster
        yield running
    finally:
        for cluster in launched.values():
            retrying(lambda c=cluster: user.delete(c))
        for cluster in launched.values():
            final = settled(user, cluster, ("DESTROYED",), timeout=300)
            assert final["state"] == "DESTROYED"
            assert_nothing_left(platform_env, final)


def container_of(member: dict):
    return docker.from_env().containers.get(f"spindle-{member['member_id']}")


def mount_options(path: str) -> set[str]:
    """The options of the filesystem mount ``path`` is on, as the host sees it."""
    out = subprocess.run(["findmnt", "-n", "-o", "OPTIONS", "-T", path], capture_output=True, text=True, check=True)
    return set(out.stdout.strip().splitlines()[-1].split(","))


def member_name(cluster: dict, member: dict) -> str:
    """role-index, as the product's templates see it."""
    return member["member_id"].removeprefix(f"{cluster['id']}-")


def disk_member(cluster: dict) -> dict:
    return next(m for m in cluster["members"] if m["disks"])


@pytest.mark.parametrize("product", [p for p, _ in LAUNCHES])
def test_every_member_container_is_hardened(clusters, product):
    cluster = clusters[product]
    version = next(v for p, v in LAUNCHES if p == product)
    for member in cluster["members"]:
        security = role_security(product, version, member["role"])
        attrs = container_of(member).attrs
        host = attrs["HostConfig"]
        where = f"{product} {member_name(cluster, member)}"
        assert host["CapDrop"] == ["ALL"], where
        assert sorted(host["CapAdd"] or []) == sorted(security.get("cap_add", [])), where
        assert "no-new-privileges" in host["SecurityOpt"], where
        assert host["PidsLimit"] == security.get("pids_limit", DEFAULT_PIDS_LIMIT), where
        assert host["LogConfig"] == {"Type": "json-file", "Config": {"max-size": "10m", "max-file": "3"}}, where
        assert host["ReadonlyRootfs"] is security.get("read_only_root", False), where
        assert attrs["Config"]["User"] == security.get("user", ""), where
        binds = [m for m in attrs["Mounts"] if m["Type"] == "bind"]
        assert len([b for b in binds if b["Destination"].startswith("/data/")]) == len(member["disks"]), where
        for bind in binds:
            options = mount_options(bind["Source"])
            assert {"nosuid", "nodev"} <= options, (where, bind["Source"], options)
        # What runs inside has no capability at all (root included: the bounding set is empty).
        status = container_of(member).exec_run(["sh", "-c", "grep -E '^Cap(Eff|Bnd):' /proc/1/status"]).output
        assert status.decode().split() == ["CapEff:", "0000000000000000", "CapBnd:", "0000000000000000"], where
        # A peer whose node died is found gone within seconds: the container's own neighbour settings.
        neigh = container_of(member).exec_run(["sh", "-c", "cat /proc/sys/net/ipv4/neigh/eth0/base_reachable_time_ms"
                                               " /proc/sys/net/ipv4/neigh/eth0/delay_first_probe_time"]).output
        assert neigh.decode().split() == ["5000", "1"], (where, neigh)
    if product == "static-web":  # the one product that needs nothing of root
        member = cluster["members"][0]
        attrs = container_of(member).attrs
        assert attrs["Config"]["User"] == NOBODY and attrs["HostConfig"]["ReadonlyRootfs"] is True
        assert process_uids(container_of(member)) == {"65534"}
        page = httpx.get(f"http://{member['ip']}:8000/index.html", timeout=10)
        assert page.status_code == 200 and f"{member_name(cluster, member)} of {cluster['id']}" in page.text
        denied = container_of(member).exec_run(["sh", "-c", "touch /etc/x 2>&1; touch /usr/x 2>&1"]).output.decode()
        assert denied.count("Read-only file system") == 2, denied


def pids_cgroup(container) -> Path:
    """The container's pids cgroup folder on the host (cgroup v1 or v2)."""
    pid = container.attrs["State"]["Pid"]
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            return Path("/sys/fs/cgroup") / path.lstrip("/")
        if "pids" in controllers.split(","):
            return Path("/sys/fs/cgroup/pids") / path.lstrip("/")
    raise AssertionError(f"no pids cgroup for pid {pid}")


def limit_hits(cgroup: Path) -> int:
    return int(next(line.split()[1] for line in (cgroup / "pids.events").read_text().splitlines()
                    if line.startswith("max ")))


def end_the_sleepers(cgroup: Path) -> int:
    """Kill what the bomb left (its ``sleep`` children, orphans of the member's PID 1 by now), so the
    member has its pids back once that init reaps them; the number of pids left."""
    for pid in (cgroup / "cgroup.procs").read_text().split():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep":
                os.kill(int(pid), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError):
            pass
    deadline = time.monotonic() + 30
    while int((cgroup / "pids.current").read_text()) > 20 and time.monotonic() < deadline:
        time.sleep(0.2)
    return int((cgroup / "pids.current").read_text())


def test_a_fork_bomb_inside_a_member_stops_at_its_pids_limit(clusters, user):
    member = clusters["static-web"]["members"][0]
    container = container_of(member)
    limit = container.attrs["HostConfig"]["PidsLimit"]
    cgroup = pids_cgroup(container)
    assert int((cgroup / "pids.max").read_text()) == limit
    hits_before = limit_hits(cgroup)
    peak, stop = [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], int((cgroup / "pids.current").read_text()))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # Forks (each child sleeps a while) until a fork fails, at most 4 × the limit times.
    bomb = (f"n=0; while [ $n -lt {4 * limit} ]; do sleep 20 & if [ $? -ne 0 ]; then echo FORK-FAILED $n; break; "
            "fi; n=$((n+1)); done; echo STARTED $n")
    try:
        result = container.exec_run(["timeout", "-s", "KILL", "60", "sh", "-c", bomb])
    finally:
        stop.set()
        sampler.join()
        left = end_the_sleepers(cgroup)
    out = result.output.decode(errors="replace")
    assert limit_hits(cgroup) > hits_before, f"the bomb never reached the limit: {out[-500:]}"
    assert 0 < peak[0] <= limit, (peak[0], limit)
    assert any(sign in out for sign in ("Cannot fork", "Resource temporarily unavailable", "FORK-FAILED")), out[-500:]
    # The killed orphans were reaped (no zombies hold the limit), so the member can fork again.
    assert left <= 20, f"{left} pids still held after the bomb's processes were killed"
    assert container.exec_run(["true"]).exit_code == 0
    # The platform still answers, and the member itself still serves.
    me = httpx.get(f"{API_URL}/me", headers={"Authorization": f"Bearer {user.token}"}, timeout=30)
    assert me.status_code == 200 and me.json()["username"] == user.username
    assert httpx.get(f"http://{member['ip']}:8000/index.html", timeout=10).status_code == 200


def run_as_nobody_on_host(path: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", path, "-u"],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("product", ["engine"])
def test_a_setuid_root_binary_left_on_a_member_disk_is_inert_on_the_host(clusters, product):
    """Root inside (the engine stays root: it writes its disks as root) may still chmod u+s its own
    file; the disk is nosuid on the host, so the copy never runs as root there."""
    member = disk_member(clusters[product])
    container = container_of(member)
    made = container.exec_run(["sh", "-c", "cp /usr/bin/id /data/1/suid-id && chmod 4755 /data/1/suid-id && "
                                           "stat -c '%u %A' /data/1/suid-id"])
    assert made.exit_code == 0 and made.output.decode().split() == ["0", "-rwsr-xr-x"], made.output
    host_copy = f"{member['disks'][0]['mount_point']}/suid-id"
    assert Path(host_copy).stat().st_uid == 0 and Path(host_copy).stat().st_mode & 0o4000
    ran = run_as_nobody_on_host(host_copy)
    assert ran.returncode == 0 and ran.stdout.strip() == "65534", (ran.stdout, ran.stderr)
    # Without the disk's nosuid the same file would have given euid 0: the control case.
    control = Path("/tmp") / f"suid-control-{member['member_id']}"
    subprocess.run(["cp", host_copy, str(control)], check=True)
    try:
        control.chmod(0o4755)
        if "nosuid" not in mount_options(str(control)):
            assert run_as_nobody_on_host(str(control)).stdout.strip() == "0"
    finally:
        control.unlink()


@pytest.mark.parametrize("product", ["static-web", "engine", "spark"])
def test_no_device_node_can_be_made_on_a_member_disk(clusters, product):
    member = disk_member(clusters[product])
    container = container_of(member)
    made = container.exec_run(["sh", "-c", "mknod /data/1/mem c 1 1 2>&1; mknod /data/1/sda b 8 0 2>&1; "
                                           "ls /data/1"])
    out = made.output.decode()
    assert out.count("Operation not permitted") == 2 and "mem" not in out.split() and "sda" not in out.split(), out
    assert {"nodev", "nosuid"} <= mount_options(member["disks"][0]["mount_point"])


@pytest.mark.parametrize("product", ["static-web", "spark"])
def test_a_member_running_as_nobody_cannot_make_a_setuid_file_work_on_the_host(clusters, product):
    """The member's own user leaves a setuid copy (owned by nobody) on its disk; another local
    account running it keeps its own euid, and root inside cannot write the disk it does not own."""
    member = disk_member(clusters[product])
    assert container_of(member).attrs["Config"]["User"] == NOBODY
    container = container_of(member)
    made = container.exec_run(["sh", "-c", "cp /usr/bin/id /data/1/suid-id && chmod 4755 /data/1/suid-id"])
    assert made.exit_code == 0, made.output
    as_root = container.exec_run(["sh", "-c", "touch /data/1/by-root 2>&1"], user="0")
    assert as_root.exit_code != 0 and "Permission denied" in as_root.output.decode(), as_root.output
    host_copy = f"{member['disks'][0]['mount_point']}/suid-id"
    ran = subprocess.run(["setpriv", "--reuid=1234", "--regid=1234", "--clear-groups", host_copy, "-u"],
                         capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "1234", (ran.stdout, ran.stderr)
