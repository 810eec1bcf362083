"""Every ``spindle …`` command line of README.md's CLI and Engine sections, run as written against
the running platform (by an admin user made for the test), each checked for exit code 0 and the
output it promises.

Lines are read from the README's code blocks: comments dropped, ``;`` separating commands, and
a line with ``[optional parts]`` run both without and with them. Placeholders get real values:
``<token>`` the user's API token, ``<id>`` the Spark cluster the CLI section launches,
``<cluster-id>`` the engine cluster the Engine section launches, ``<args>`` the word count's
arguments (one of them starts with ``-``), ``<job id>`` the job ``submit`` ran, ``<token id>`` the
token ``tokens create`` made, ``<node>`` this machine's node (put in a rack and taken out again). The program
files the lines name (wordcount.py, lib.py, my_driver.py, reducer.cpp) are written to the
folder the commands run in. The lines run in an order that works (``delete`` last); the README
and this test's lists must name the same lines, so a documented line cannot go untested.
"""
import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.platform.cluster_checks import wait_settled
from tests.support.live_users import live_user

README = REPO / "README.md"
SECTIONS = ("CLI", "Engine")

# A check of one command's output: (completed process, values so far) → nothing, or AssertionError.
Check = Callable[[subprocess.CompletedProcess, dict], None]


# --- the README's command lines --------------------------------------------------------------------

def section_code(text: str, title: str) -> list[str]:
    """The lines of every fenced code block under the ``## <title>`` heading."""
    body = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert body, f"README.md has no section {title!r}"
    return [line for block in re.findall(r"^```[^\n]*\n(.*?)^```", body.group(1), re.S | re.M)
            for line in block.splitlines()]


def documented_commands(text: str) -> dict[str, list[str]]:
    """Section title → its ``spindle`` command lines, optional parts expanded (without, then with them)."""
    found: dict[str, list[str]] = {}
    for title in SECTIONS:
        commands = found.setdefault(title, [])
        for line in section_code(text, title):
            for command in re.sub(r"\s+#.*$", "", line).split(";"):
                command = " ".join(command.split())
                if not command.startswith("spindle "):
                    continue
                for variant in (re.sub(r"\s*\[[^\]]*\]", "", command), re.sub(r"\[([^\]]*)\]", r"\1", command)):
                    if variant not in commands:
                        commands.append(variant)
    return found


# --- what the commands need -------------------------------------------------------------------------

WORDCOUNT_PY = '''\
"""A word count of its arguments on Spark; the words are split by lib.py when it was uploaded."""
import json
import os
import sys

from pyspark.sql import SparkSession

try:
    import lib
    split, how = lib.words, "lib.py"
except ImportError:
    split, how = str.split, "str.split"

spark = SparkSession.builder.appName("readme-wordcount").getOrCreate()
here = os.path.dirname(os.path.abspath(__file__))
if os.path.exists(os.path.join(here, "lib.py")):
    spark.sparkContext.addPyFile(os.path.join(here, "lib.py"))  # the executors import it too
counts = spark.sparkContext.parallelize(sys.argv[1:] or ["nothing"], 2).flatMap(split).map(
    lambda w: (w, 1)).reduceByKey(lambda a, b: a + b).collect()
print(f"COUNTS {json.dumps(dict(sorted(counts)))} split by {how}", flush=True)
spark.stop()
'''
LIB_PY = '''\
def words(text):
    return text.split()
'''
MY_DRIVER_PY = '''\
"""A driver of the README's Engine section: Python tokenizes, C++ (reducer.cpp, compiled here) reduces."""
import os
import subprocess

from spindle_engine import Cluster, Engine, Worker

here = os.path.dirname(os.path.abspath(__file__))
lib = "/tmp/spindle-functions/libreducer.so"
os.makedirs(os.path.dirname(lib), exist_ok=True)
subprocess.run(["g++", "-O2", "-std=c++17", "-shared", "-fPIC", "-I", os.environ["SPINDLE_ENGINE_INCLUDE"],
                os.path.join(here, "reducer.cpp"), "-o", lib], check=True)
with Engine.start():
    cluster = Cluster()
    python = Worker(cluster, "python")
    cpp = Worker(cluster, "cpp")
    pairs = python.parallelize(["a b a", "b a c"] * 100, 4).flatMap(lambda line: [(w, 1) for w in line.split()])
    counts = dict(cpp.importData(pairs).reduceByKey(f"{lib}:Join", 4).collect())
    print(f"COUNTS {sorted(counts.items())}", flush=True)
'''
WORD_ARGS = ["to be or", "not to be", "-n"]


def job_files(folder: Path) -> None:
    (folder / "wordcount.py").write_text(WORDCOUNT_PY)
    (folder / "lib.py").write_text(LIB_PY)
    (folder / "my_driver.py").write_text(MY_DRIVER_PY)
    (folder / "reducer.cpp").write_text((REPO / "engine/cpp/examples/wordcount.cpp").read_text())


def substituted(template: str, values: dict) -> list[str]:
    """The command line's words, placeholders replaced (``<args>`` by several words)."""
    def value(match: re.Match) -> str:
        name = match.group(1)
        assert name in values, f"no value for <{name}> in {template!r} yet"
        given = values[name]
        return " ".join(map(shlex.quote, given)) if isinstance(given, list) else shlex.quote(given)

    return shlex.split(re.sub(r"<([^>]+)>", value, template))


# --- the checks, per command line -------------------------------------------------------------------

def has(*texts: str, stream: str = "stdout") -> Check:
    def check(done: subprocess.CompletedProcess, _: dict) -> None:
        out = getattr(done, stream)
        for text in texts:
            assert text in out, f"{text!r} not in {stream}:\n{out}"
    return check


def has_value(*keys: str, stream: str = "stdout") -> Check:
    """Output naming each value (e.g. the cluster id) found so far."""
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        has(*(values[k] for k in keys), stream=stream)(done, values)
    return check


def all_checks(*checks: Check) -> Check:
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        for c in checks:
            c(done, values)
    return check


def launched(key: str, state: str = "RUNNING") -> Check:
    """``launch … --follow``: remembers the new cluster's id; it followed the launch until it ran."""
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        match = re.search(r"^launched (\S+) \(", done.stdout, re.M)
        assert match, done.stdout
        values[key] = match.group(1)
        assert f"{values[key]} is {state}" in done.stdout and "CONFIGURING" in done.stdout, done.stdout
    return check


def word_counts(split_by: str, remember_job: bool = False) -> Check:
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        counts = {"to": 2, "be": 2, "or": 1, "not": 1, "-n": 1}
        assert f"COUNTS {json.dumps(dict(sorted(counts.items())))} split by {split_by}" in done.stdout, \
            done.stdout + done.stderr[-3000:]
        match = re.search(r"^job (\S+): SUCCEEDED", done.stderr, re.M)
        assert match, done.stderr[-3000:]
        if remember_job:
            values["job id"] = match.group(1)
    return check


def token_created(key: str) -> Check:
    """``tokens create``: remembers the new token's id; the token itself is printed once."""
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        match = re.search(r"^token (\d+), works until .*\n(spd_\S+)$", done.stdout, re.M)
        assert match, done.stdout
        values[key] = match.group(1)
    return check


def quota_row(limit: str, quota: str) -> Check:
    """A quota table's row: ``limit`` with this quota (after what is used)."""
    def check(done: subprocess.CompletedProcess, _: dict) -> None:
        rows = [line.split() for line in done.stdout.splitlines()]
        assert any(r[0] == limit and r[-1] == quota for r in rows if r), done.stdout
    return check


def nodes_listed(key: str) -> Check:
    """``admin nodes``: a row per node; remembers this machine's (deploy/up registers it at 127.0.0.1;
    simulated nodes other tests add and remove meanwhile are left alone)."""
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        lines = done.stdout.splitlines()
        assert lines[0].split() == ["NODE", "ADDRESS", "CPUS", "MEM_MB", "RACK", "FAILURE", "DOMAIN"], done.stdout
        values[key] = next((row[0] for row in map(str.split, lines[1:]) if row[1] == "127.0.0.1"), None)
        assert values[key], done.stdout
    return check


def node_in_rack(rack: str | None) -> Check:
    """``admin nodes set-rack``: the node's row with this rack, and the rack as its failure domain (none: itself)."""
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        row = done.stdout.splitlines()[1].split()
        assert (row[0], row[-2], row[-1]) == (values["node"], rack or "-", rack or values["node"]), done.stdout
    return check


def status_all_passing(done: subprocess.CompletedProcess, _: dict) -> None:
    rows = done.stdout.splitlines()[1:]
    assert rows and all(row.split()[1] == "passing" for row in rows), done.stdout


def plan_placeable(done: subprocess.CompletedProcess, _: dict) -> None:
    lines = done.stdout.splitlines()
    assert lines[0].startswith("placeable: ") and lines[1].split() == ["MEMBER", "NODE", "CPUS", "DISKS"], done.stdout
    assert len(lines) > 2 and all("server" in line for line in lines[2:]), done.stdout


def members_on_top(done: subprocess.CompletedProcess, values: dict) -> None:
    """A row per member (their node reported them while the jobs ran), each with its disks' use."""
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["MEMBER", "CPU", "MEMORY"], done.stdout
    rows = {line.split()[0]: line for line in lines[1:]}
    member = f"{values['id']}-%s"
    assert {member % "master-1", member % "worker-1", member % "worker-2"} <= set(rows), done.stdout
    assert "/data/1:" in rows[member % "worker-1"] and "/data/2:" in rows[member % "worker-1"], done.stdout


def worker_log(done: subprocess.CompletedProcess, _: dict) -> None:
    """The Spark worker's own log: it registered with the master; each line starts with its time."""
    lines = done.stdout.splitlines()
    assert 0 < len(lines) <= 50 and all(re.match(r"^\d{4}-\d\d-\d\dT", line) for line in lines), done.stdout
    assert "Successfully registered with master" in done.stdout or "Executor" in done.stdout, done.stdout


def cluster_listed(state: str | None) -> Check:
    def check(done: subprocess.CompletedProcess, values: dict) -> None:
        rows = [line.split() for line in done.stdout.splitlines()[1:]]
        assert [(r[0], r[1], r[3]) for r in rows] == [(values["id"], "spark", state or "RUNNING")], done.stdout
    return check


# The README's command lines in an order that works, each with its check. Keys must be exactly
# the lines documented_commands() finds (test_the_readme_documents_exactly_these_lines).
CLI_FLOW: list[tuple[str, Check]] = [
    ("spindle status", status_all_passing),
    ("spindle login --url http://127.0.0.1:8080 --token <token>", has_value("user")),
    ("spindle products", has("spark", "static-web", "engine", "DESCRIPTION")),
    ("spindle tokens", has("PREFIX", "EXPIRES", "active")),
    ("spindle tokens create --expires-in 7d", token_created("token id")),
    ("spindle tokens revoke <token id>", all_checks(has("revoked token"), has_value("token id"))),
    ("spindle launch static-web 1.0 --plan", plan_placeable),
    ("spindle launch spark 3.5 --opt roles.worker.count=2 --opt roles.worker.disks.hdd=2 --follow", launched("id")),
    ("spindle clusters", cluster_listed(None)),
    ("spindle clusters --state RUNNING --product spark", cluster_listed("RUNNING")),
    ("spindle show <id>", all_checks(has_value("id"), has("state    RUNNING", "master", "worker", "TASK_RUNNING"))),
    ("spindle events <id>", has("cluster", "RUNNING", "CONFIGURING")),
    ("spindle events <id> --follow", all_checks(has("CONFIGURING"), has_value("id"), has(" is RUNNING"))),
    ("spindle submit <id> wordcount.py --wait -- <args>", word_counts("str.split")),
    ("spindle submit <id> wordcount.py --file lib.py --wait -- <args>", word_counts("lib.py", remember_job=True)),
    ("spindle jobs <id>", all_checks(has("SUCCEEDED", "wordcount.py"), has_value("job id"))),
    ("spindle jobs <id> <job id>", all_checks(has("COUNTS "), has_value("job id", stream="stderr"))),
    ("spindle top <id>", members_on_top),
    ("spindle logs <id> worker-1 --tail 50", worker_log),
    ("spindle exec <id> worker-1 -- df -h /data/1", has("/data/1", "Filesystem")),
    ("spindle execs <id>", has("EXIT", "worker-1", "df -h /data/1")),
    ("spindle quota", all_checks(has("LIMIT", "USED", "QUOTA", "floating_ips"), has_value("user"))),
    ("spindle admin quota set <user> --ips 8 --cpus 16 --disk ssd=2", quota_row("floating_ips", "8")),
    ("spindle admin quota show <user>", all_checks(quota_row("cpus", "16"), quota_row("disks.ssd", "2"))),
    ("spindle admin quota list", all_checks(has("USER", "FLOATING_IPS"), has_value("user"))),
    ("spindle admin nodes", nodes_listed("node")),
    ("spindle admin nodes set-rack <node> rack-1", node_in_rack("rack-1")),
    ("spindle admin nodes set-rack <node> --clear", node_in_rack(None)),
    ("spindle delete <id>", all_checks(has("deleting "), has_value("id"))),
]
ENGINE_FLOW: list[tuple[str, Check]] = [
    ("spindle launch engine 1.0 --opt roles.executor.count=2 --follow", launched("cluster-id")),
    ("spindle submit <cluster-id> my_driver.py --file reducer.cpp --wait",
     has("COUNTS [('a', 300), ('b', 200), ('c', 100)]")),
]


def test_the_readme_documents_exactly_these_lines():
    documented = documented_commands(README.read_text())
    assert documented["CLI"] and documented["Engine"]
    assert sorted(documented["CLI"]) == sorted(line for line, _ in CLI_FLOW), \
        "README.md's CLI section changed: run each new line in CLI_FLOW"
    assert sorted(documented["Engine"]) == sorted(line for line, _ in ENGINE_FLOW), \
        "README.md's Engine section changed: run each new line in ENGINE_FLOW"


# --- running them ----------------------------------------------------------------------------------

@pytest.fixture
def admin(database_url):
    """An administrator made for this test, with the clusters it launched destroyed afterwards."""
    with live_user(database_url, "readme", is_admin=True) as client:
        try:
            yield client
        finally:
            for cluster in [c for c in client.clusters(client.username) if c.state != "DESTROYED"]:
                client.delete(cluster)
                wait_settled(client, cluster, ("DESTROYED",), timeout=300)


@pytest.fixture
def run_documented(admin, tmp_path):
    """Runs a README line as written (``spindle`` = this repository's CLI) in a folder holding the
    job files, with its own ~/.config; checks exit code 0 and its output."""
    work = tmp_path / "work"
    work.mkdir()
    job_files(work)
    env = {k: v for k, v in os.environ.items() if k not in ("SPINDLE_URL", "SPINDLE_TOKEN")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    values: dict = {"token": admin.token, "user": admin.username, "args": WORD_ARGS}

    def run(template: str, check: Check) -> subprocess.CompletedProcess:
        argv = substituted(template, values)
        assert argv[0] == "spindle"
        done = subprocess.run([str(REPO / ".venv/bin/spindle"), *argv[1:]], cwd=work, env=env, text=True,
                              capture_output=True, timeout=900)
        assert done.returncode == 0, f"{template} → exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
        check(done, values)
        return done

    return run


def wait_for_free_disks(client, disk_class: str, count: int, timeout: float = 600) -> None:
    """Other tests may hold the development disks for a while: wait until ``count`` are free."""
    deadline = time.monotonic() + timeout
    while (free := next((d.free for d in client.capacity() if d.disk_class == disk_class), 0)) < count:
        assert time.monotonic() < deadline, f"only {free} free {disk_class} disks after {timeout:.0f} s"
        time.sleep(2)


def test_the_cli_section_runs_as_written(admin, run_documented, platform_env):
    wait_for_free_disks(admin, "hdd", 4)  # the Spark line asks for 2 workers × 2 HDDs
    for line, check in CLI_FLOW:
        run_documented(line, check)
    [cluster] = list(admin.clusters(admin.username))
    assert wait_settled(admin, cluster, ("DESTROYED",)).state == "DESTROYED"


def test_the_engine_section_runs_as_written(admin, run_documented, platform_env):
    run_documented("spindle login --url http://127.0.0.1:8080 --token <token>", has_value("user"))
    wait_for_free_disks(admin, "hdd", 4)  # 2 executors × 2 HDDs (the product's default)
    for line, check in ENGINE_FLOW:
        run_documented(line, check)
