"""Fixtures shared by all tests. Integration tests use the platform `deploy/up` started
(the README's test command starts it); they never mock Docker, PostgreSQL or Consul."""
import os
from collections import Counter
from pathlib import Path

import anyio
import httpx
import httpx._transports.default
import pytest

from spindle_common.consul import TOKEN_ENV as CONSUL_TOKEN_ENV
from spindle_common.db import scratch_database
from tests.support.internal import use_platform_identity_key

# anyio imports its parts lazily, on first use, and pytest compiles them then (it rewrites the
# asserts of every pytest plugin's package, anyio's included). Deep in a request's stack that compile
# hit CPython 3.11's "AST constructor recursion depth mismatch" (a SystemError, in one of two runs
# of tests/unit/api/test_web_ui.py): import them all here, at a shallow stack, once.
for _name in dir(anyio):
    if not _name.startswith("_"):
        getattr(anyio, _name)

# httpx builds an SSL context (OpenSSL's, with the whole CA bundle) for every client, so for every
# `httpx.get(…)`: ~50 ms of CPU, though the tests speak plain HTTP. Measured in CI run 26 (py-spy): an
# xdist worker polling a server every 50 ms spent 89 % of its CPU there, half a core for minutes. The
# tests' clients that bring no context of their own share one, made once here. (Not the services'
# spindle_common.tls one: tests/unit/common/test_tls.py tells their clients, which must pass theirs,
# from these.)
_TESTS_TLS = httpx.create_ssl_context()
_create_ssl_context = httpx._transports.default.create_ssl_context


def _one_ssl_context(verify=True, cert=None, trust_env=True):
    if verify is True and cert is None:
        return _TESTS_TLS
    return _create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)


httpx._transports.default.create_ssl_context = _one_ssl_context  # type: ignore[assignment]

REPO = Path(__file__).resolve().parents[1]
STATE_DIR = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
# Internal calls are signed with the platform's identity key: make it this process's before any
# test module makes its headers (tests/support/internal.py).
use_platform_identity_key(STATE_DIR / "spindle.env")


# The storage products' end-to-end tests (issue #16): several minutes each on 2 cores. `make test`
# runs them with everything else; the marker selects them by hand (`pytest -m products`,
# `make test-products`).
PRODUCT_E2E = {"test_kafka_e2e.py", "test_cassandra_e2e.py", "test_hadoop_e2e.py", "test_hadoop_yarn_e2e.py",
               "test_jupyterlab_e2e.py", "test_engine_hdfs.py", "test_hdfs_bindings.py", "test_hadoop_kerberos_e2e.py"}


# The platform tier runs on two workers (scripts/test-all: `pytest -n 2 --dist loadgroup`), then the
# tests marked `serial` or `disruptive` one at a time. Tests that would get in each other's way on two
# workers share an xdist group (one worker runs a group's tests one after another), by path:
PLATFORM = "tests/integration/platform/"
XDIST_GROUPS = {
    # minutes each of most of the cpus and disks the test platform offers (make test: 4 cpus, 10 hdd)
    # (the group is the parallel pass's critical path: a test that needs little, as the metrics test's
    # one static-web member at 0.25 CPU, stays out of it). Split in two, one per worker, they did not
    # fit the 4 cpus together (an engine module's cluster waited past its fixture's time; 2026-11-29),
    # and this machine's 2 cores are busy through the pass anyway (vmstat: 0-30 % idle).
    # Kafka's (1.65 cpus, 3 hdd) and JupyterLab's (1.4 cpus, an ssd) wait for resources and fit beside
    # any of these, so they run on the other worker: in CI run 22 it ended 600 s before this group; so
    # does the Kerberos HDFS test's (1.25 cpus, 3 disks, under a minute).
    "heavy": {PLATFORM + name for name in (PRODUCT_E2E - {"test_kafka_e2e.py", "test_jupyterlab_e2e.py",
                                                          "test_hadoop_kerberos_e2e.py"})
              | {"test_resize.py", "test_spark_e2e.py", "test_engine_e2e.py"}},
    # Docker networks of fixed subnets on this machine's Docker Engine
    "docker-networks": {"tests/integration/network/", "tests/integration/executor/test_container.py",
                        "tests/integration/node_agent/test_node_agent.py"},
}
# Tests that count or disturb what every other test uses, so they run alone (after the parallel pass):
SERIAL = {
    "tests/integration/orchestrator/test_internal_calls.py",  # counts disk-service's calls in its log
    "tests/integration/api/test_capacity.py",  # compares two reads of every disk's state
    PLATFORM + "test_image_preparation.py",  # makes an image the platform's launches need unavailable
    "tests/security/test_log_flood.py",  # floods the logs every service writes
    "tests/security/test_durable_releases.py",  # restarts the scheduler, stops disk-service
    # a second master offering this node's disks
    PLATFORM + "test_framework_e2e.py", PLATFORM + "test_scheduler_crash.py",
    "tests/integration/foundation/test_deploy_lifecycle.py::test_up_twice_is_harmless",  # runs deploy/up again
    # compares every mount of the machine before and after (others' containers and wipes change them)
    "tests/integration/disk/test_dev_disks_script.py::test_ensure_is_idempotent_and_remove_takes_only_its_own",
}


def _under(nodeid: str, paths: set[str]) -> bool:
    return any(nodeid == p or nodeid.startswith(p if p.endswith("/") else p + "::") for p in paths)


def _nodeid(item) -> str:
    return item.path.relative_to(REPO).as_posix() + "::" + item.name


def pytest_itemcollected(item):
    """Product e2e tests are marked `products` as they are collected (before `-m` selects); the
    platform tier's xdist groups and `serial` tests are marked too."""
    if item.path.name in PRODUCT_E2E:
        item.add_marker(pytest.mark.products)
    nodeid = _nodeid(item)
    for group, paths in XDIST_GROUPS.items():
        if _under(nodeid, paths):
            item.add_marker(pytest.mark.xdist_group(group))
    if _under(nodeid, SERIAL):
        item.add_marker(pytest.mark.serial)


def pytest_collection_modifyitems(items):
    """Tests marked `disruptive` (they stop and restart the platform) run last (this hook runs after
    the plugins that shuffle the order), those on the simulated nodes last of all: they share the
    nodes for the rest of the run (tests/integration/nodes/conftest.py)."""
    items.sort(key=lambda item: (item.get_closest_marker("disruptive") is not None,
                                 _under(_nodeid(item), {"tests/integration/nodes/"})))


def read_env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="session", autouse=True)
def consul_token() -> None:
    """Consul refuses writes without a token (``deploy/lib/consul.sh``): the services' token for the
    in-process services and Consul clients of the tests, as the platform's services get it."""
    env_file = STATE_DIR / "spindle.env"
    token = read_env_file(env_file).get(CONSUL_TOKEN_ENV, "") if env_file.exists() else ""
    if token:
        os.environ.setdefault(CONSUL_TOKEN_ENV, token)


@pytest.fixture(scope="session")
def platform_env() -> dict[str, str]:
    """The environment `deploy/up` wrote for the running platform (DB URL, Consul URL, ...)."""
    env_file = STATE_DIR / "spindle.env"
    if not env_file.exists():
        pytest.fail(f"{env_file} is missing: start the platform with ./deploy/up (make test does)")
    return read_env_file(env_file)


@pytest.fixture(scope="session")
def database_url(platform_env) -> str:
    return platform_env["SPINDLE_DATABASE_URL"]


@pytest.fixture(scope="session", autouse=True)
def no_orphaned_clusters() -> None:
    """A test session starts without the users and clusters of an earlier one that was killed before
    its clean-up (they would hold cpus, disks and IPs the tests count on): tests/support/live_users.py."""
    env_file = STATE_DIR / "spindle.env"
    if not env_file.exists():
        return
    import httpx
    from sqlalchemy.exc import OperationalError

    from tests.support.live_users import sweep_stale_users
    try:
        sweep_stale_users(read_env_file(env_file)["SPINDLE_DATABASE_URL"])
    except (OperationalError, httpx.TransportError):
        pass  # the platform is down (unit tests run without it): nothing of it to clean


@pytest.fixture(scope="session")
def consul_url(platform_env) -> str:
    return platform_env["SPINDLE_CONSUL_URL"]


@pytest.fixture
def fresh_database(database_url):
    """An empty PostgreSQL database of its own for one test, dropped afterwards."""
    with scratch_database(database_url, "spindle_test") as url:
        yield url


@pytest.fixture(scope="session")
def disk_admin(platform_env):
    """disk-service of the running platform, called as an admin (the platform's internal token)."""
    from spindle_common.clients import DiskClient
    with DiskClient("http://127.0.0.1:8083", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="tests",
                    role="admin") as client:
        yield client


@pytest.fixture(scope="session")
def network_admin(platform_env):
    """network-service of the running platform, called as an admin (the platform's internal token)."""
    from spindle_common.clients import NetworkClient
    with NetworkClient("http://127.0.0.1:8084", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="tests",
                       role="admin") as client:
        yield client


# Seconds of tests each xdist worker ran, and each xdist group's, and when each worker's last test
# ended (from the first test's start): the parallel pass lasts as long as its busiest worker, so the
# summary says how evenly the groups share the two (docs/TESTING.md).
_BUSY: Counter[str] = Counter()
_SPAN: dict[str, list[float]] = {}


def _cpu_jiffies() -> tuple[int, int]:
    """This machine's (busy, all) CPU time so far, in jiffies (/proc/stat; idle and iowait are not busy)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


_CPU_AT_START = _cpu_jiffies()


def pytest_runtest_logreport(report):
    worker = getattr(report, "node", None)  # set on the reports workers send to the controller
    if worker is not None:
        _BUSY[f"worker {worker.gateway.id}"] += report.duration
        group = report.nodeid.rpartition("@")[2]  # xdist names a test's group after an @ at its end
        names = [f"worker {worker.gateway.id}"]
        if group in XDIST_GROUPS:
            _BUSY[f"group {group}"] += report.duration
            names.append(f"group {group}")
        for name in names:
            span = _SPAN.setdefault(name, [report.start, report.stop])
            span[:] = [min(span[0], report.start), max(span[1], report.stop)]


def pytest_terminal_summary(terminalreporter):
    if _BUSY:
        terminalreporter.write_line("seconds of tests: " + ", ".join(f"{name} {seconds:.0f}"
                                                                     for name, seconds in sorted(_BUSY.items())))
        first = min(start for start, _ in _SPAN.values())
        terminalreporter.write_line("from the first test's start, seconds: " + ", ".join(
            f"{name} {start - first:.0f}-{stop - first:.0f}" for name, (start, stop) in sorted(_SPAN.items())))
    busy, everything = (now - then for now, then in zip(_cpu_jiffies(), _CPU_AT_START, strict=True))
    if everything:  # how much of the machine's cores the run kept busy (all processes: tests, services, members)
        terminalreporter.write_line(f"this machine's cpus were busy {100 * busy / everything:.0f} % of the run")
