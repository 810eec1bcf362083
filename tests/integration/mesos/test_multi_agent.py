"""A master with several agent processes: offers per agent, agents that die, come back or outlive a
master restart — through the real pymesos scheduler and executor drivers, with real processes."""
import contextlib
import os
import re
import signal
import time

import pytest

from spindle_scheduler.mesos.driver import registered_agents
from tests.integration.mesos.conftest import Recorder, framework, operator
from tests.integration.mesos.test_conformance import launch, states

# The agents' heartbeat timeout in the tests that make an agent unreachable (each needs a master
# of its own), and one long enough that an agent restart stays well within it.
SHORT_TIMEOUT = {"SPINDLE_MESOS_AGENT_TIMEOUT_S": "3"}
LONG_TIMEOUT = {"SPINDLE_MESOS_AGENT_TIMEOUT_S": "30"}
# Waits that include a pymesos executor's reconnection to a restarted agent (backoff up to 15 s).
RECONNECT_S = 60
NOT_RUNNING = {"TASK_LOST", "TASK_UNREACHABLE", "TASK_FAILED", "TASK_GONE", "TASK_DROPPED", "TASK_UNKNOWN",
               "TASK_ERROR", "TASK_KILLED", "TASK_FINISHED"}


def alive(pid: int) -> bool:
    """The process runs (a zombie left by a SIGKILLed agent does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def executor_pid(recorder: Recorder, task_id: str) -> int:
    """The pid the sleepy executor reported with its TASK_RUNNING."""
    message = next(u["message"] for u in recorder.updates if u["task_id"]["value"] == task_id
                   and u["state"] == "TASK_RUNNING")
    match = re.search(r"pid (\d+)", message)
    assert match, message
    return int(match.group(1))


@pytest.fixture
def executors():
    """Pids of executors a test started: any still alive at its end (e.g. after a failed assertion
    with its agent dead) are killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class Tracker(Recorder):
    """A Recorder that also remembers which offers it used."""

    def __init__(self):
        super().__init__()
        self.used: set[str] = set()


def offer_of(recorder: Tracker, agent_id: str) -> dict | None:
    """The framework's outstanding offer from that agent (the latest one neither used nor rescinded)."""
    return next((o for o in reversed(recorder.offers) if o["agent_id"]["value"] == agent_id
                 and o["id"]["value"] not in recorder.rescinded and o["id"]["value"] not in recorder.used), None)


def changes(recorder: Recorder, task_id: str) -> list[str]:
    """The task's states, a state resent (until acknowledged) counted once."""
    seen = states(recorder, task_id)
    return [state for i, state in enumerate(seen) if i == 0 or seen[i - 1] != state]


def launch_on(recorder: Tracker, driver, agents: dict[str, str], node: str, task_id: str,
              executors: list[int]) -> str:
    """Launch ``task_id`` on ``node`` (hostname → agent id); wait for TASK_RUNNING; returns the agent id."""
    agent_id = agents[node]
    recorder.wait(lambda r: offer_of(r, agent_id))
    offer = offer_of(recorder, agent_id)
    assert offer is not None
    recorder.used.add(offer["id"]["value"])
    launch(driver, offer, task_id)
    recorder.wait(lambda r: "TASK_RUNNING" in states(r, task_id))
    executors.append(executor_pid(recorder, task_id))
    return agent_id


def agent_ids(cluster) -> dict[str, str]:
    """hostname → agent id of every agent the master lists."""
    return {a["agent_info"]["hostname"]: a["agent_info"]["id"]["value"]
            for a in operator(cluster.url, "GET_AGENTS")["get_agents"]["agents"]}


def test_offers_from_every_agent_and_one_task_on_each(make_cluster, executors):
    cluster = make_cluster(3)
    if cluster.master is None and len(cluster.wait_agents(1)) < 3:
        pytest.skip("the real master has fewer than 3 agents")
    recorder = Tracker()
    with framework(cluster.url, recorder) as driver:
        recorder.wait(lambda r: len({o["agent_id"]["value"] for o in r.offers}) >= 3)
        offers = {o["agent_id"]["value"]: o for o in recorder.offers}  # the latest of each agent
        chosen = list(offers.values())[:3]
        assert len({o["hostname"] for o in chosen}) == 3, "each agent offers under its own hostname"
        if cluster.master is not None:  # ours: each offer is its agent's, with that agent's own disk
            assert {o["hostname"] for o in chosen} == set(cluster.agents)
            for offer in chosen:
                roots = [r["disk"]["source"]["mount"]["root"] for r in offer["resources"] if r.get("disk")]
                assert roots == [cluster.disks[offer["hostname"]]]
        placed = {}
        for i, offer in enumerate(chosen):
            launch(driver, offer, f"t-multi-{i}")
            placed[f"t-multi-{i}"] = offer["agent_id"]["value"]
        recorder.wait(lambda r: all("TASK_RUNNING" in states(r, t) for t in placed))
        executors.extend(executor_pid(recorder, t) for t in placed)
        for update in recorder.updates:
            if update["task_id"]["value"] in placed:
                assert update["agent_id"]["value"] == placed[update["task_id"]["value"]]
        tasks = operator(cluster.url, "GET_TASKS")["get_tasks"]["tasks"]
        assert {t["task_id"]["value"]: t["agent_id"]["value"] for t in tasks if t["task_id"]["value"] in placed} \
            == placed
        assert all(t["state"] == "TASK_RUNNING" for t in tasks if t["task_id"]["value"] in placed)
        listed = {a["agent_info"]["id"]["value"]: a
                  for a in operator(cluster.url, "GET_AGENTS")["get_agents"]["agents"]}
        for offer in chosen:
            agent = listed[offer["agent_id"]["value"]]
            assert agent["active"] and agent["agent_info"]["hostname"] == offer["hostname"]


def test_the_scheduler_lists_the_agents_the_master_counts_as_active(make_cluster):
    """What the scheduler gathers offers of after a revive (a node whose offer has not come yet
    included): the real operator call GET_AGENTS, with the scheduler's credential."""
    cluster = make_cluster(2, **SHORT_TIMEOUT)
    cluster.require_own_processes("make an agent unreachable")
    credential = cluster.credential if cluster.credential[0] else None
    assert registered_agents(cluster.url, credential) == {"node-0", "node-1"}
    cluster.agents["node-0"].kill()
    deadline = time.monotonic() + 30
    while registered_agents(cluster.url, credential) != {"node-1"}:  # unreachable: not active
        assert time.monotonic() < deadline, operator(cluster.url, "GET_AGENTS", cluster.credential)
        time.sleep(0.2)


def test_unreachable_agent_and_its_return_with_the_same_executor(make_cluster, executors):
    cluster = make_cluster(2, **SHORT_TIMEOUT)
    cluster.require_own_processes("make an agent unreachable")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder, partition_aware=True) as driver:
        victim = launch_on(recorder, driver, agents, "node-0", "t-part", executors)
        pid = executor_pid(recorder, "t-part")
        recorder.wait(lambda r: offer_of(r, victim))  # what is left on node-0 is offered again
        held = offer_of(recorder, victim)["id"]["value"]

        cluster.agents["node-0"].kill()  # the agent only: its executor lives on
        recorder.wait(lambda r: "TASK_UNREACHABLE" in states(r, "t-part") and victim in r.lost_agents)
        offered_then = len(recorder.offers)
        unreachable = next(u for u in recorder.updates if u["state"] == "TASK_UNREACHABLE")
        assert unreachable["reason"] == "REASON_AGENT_REMOVED" and unreachable["source"] == "SOURCE_MASTER"
        assert unreachable["agent_id"]["value"] == victim and "unreachable_time" in unreachable
        assert held in recorder.rescinded, "the unreachable agent's offer is rescinded"
        listed = {a["agent_info"]["id"]["value"]: a["active"]
                  for a in operator(cluster.url, "GET_AGENTS")["get_agents"]["agents"]}
        assert listed[victim] is False and listed[agents["node-1"]] is True
        got = operator(cluster.url, "GET_TASKS")["get_tasks"]
        assert [(t["task_id"]["value"], t["state"]) for t in got["unreachable_tasks"]] \
            == [("t-part", "TASK_UNREACHABLE")]
        assert alive(pid)
        time.sleep(2)  # allocation rounds: the unreachable agent is not offered
        assert not [o for o in recorder.offers[offered_then:] if o["agent_id"]["value"] == victim]

        cluster.agents["node-0"].start()  # same port, same work dir
        recorder.wait(lambda r: states(r, "t-part")[-1] == "TASK_RUNNING")
        back = [u for u in recorder.updates if u["task_id"]["value"] == "t-part"][-1]
        assert back["reason"] == "REASON_AGENT_REREGISTERED" and back["agent_id"]["value"] == victim
        assert agent_ids(cluster)["node-0"] == victim, "the agent keeps its id across restarts"
        assert alive(pid), "the same executor process still runs the task"
        tasks = operator(cluster.url, "GET_TASKS")["get_tasks"]["tasks"]
        assert [(t["task_id"]["value"], t["state"], t["agent_id"]["value"]) for t in tasks] \
            == [("t-part", "TASK_RUNNING", victim)]

        # The executor subscribed again to the restarted agent: a kill reaches it.
        driver.killTask({"value": "t-part"})
        recorder.wait(lambda r: "TASK_KILLED" in states(r, "t-part"), RECONNECT_S)
        killed = next(u for u in recorder.updates if u["state"] == "TASK_KILLED")
        assert killed["source"] == "SOURCE_EXECUTOR"


def test_master_restart_keeps_every_task(make_cluster, executors):
    cluster = make_cluster(2, **LONG_TIMEOUT)
    cluster.require_own_processes("restart the master")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder, partition_aware=True) as driver:
        placed = {f"t-keep-{node}": launch_on(recorder, driver, agents, node, f"t-keep-{node}", executors)
                  for node in ("node-0", "node-1")}
        pids = {t: executor_pid(recorder, t) for t in placed}
        framework_id = recorder.framework_id

        cluster.master.kill()
        cluster.master.start()  # same port, same work dir (its agent registry)
        recorder.wait(lambda r: r.subscriptions >= 2, RECONNECT_S)  # the driver re-subscribed by itself
        assert recorder.framework_id == framework_id
        seen = len(recorder.updates)
        driver.reconcileTasks([{"task_id": {"value": t}, "agent_id": {"value": a}} for t, a in placed.items()])
        recorder.wait(lambda r: all(any(u["task_id"]["value"] == t and u.get("reason") == "REASON_RECONCILIATION"
                                        for u in r.updates[seen:]) for t in placed), RECONNECT_S)
        # Besides the answers, an update whose acknowledgement the master's death cut off comes again.
        for update in recorder.updates[seen:]:
            assert update["state"] == "TASK_RUNNING"
            assert update["agent_id"]["value"] == placed[update["task_id"]["value"]]
        assert not NOT_RUNNING & {u["state"] for u in recorder.updates}
        assert all(alive(pid) for pid in pids.values()), "no executor was restarted"
        assert agent_ids(cluster) == agents
        tasks = operator(cluster.url, "GET_TASKS")["get_tasks"]["tasks"]
        assert {t["task_id"]["value"]: (t["state"], t["agent_id"]["value"]) for t in tasks} \
            == {t: ("TASK_RUNNING", a) for t, a in placed.items()}


def test_agent_restart_within_the_timeout_loses_nothing(make_cluster, executors):
    cluster = make_cluster(1, **LONG_TIMEOUT)
    cluster.require_own_processes("restart an agent")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder, partition_aware=True) as driver:
        agent_id = launch_on(recorder, driver, agents, "node-0", "t-stay", executors)
        pid = executor_pid(recorder, "t-stay")

        cluster.agents["node-0"].stop(signal.SIGTERM)  # a Mesos agent leaves its executors running
        cluster.agents["node-0"].start()
        cluster.wait_agents(1)
        assert alive(pid)
        cluster.agents["node-0"].kill()
        cluster.agents["node-0"].start()
        cluster.wait_agents(1)
        assert agent_ids(cluster) == agents
        assert alive(pid)
        tasks = operator(cluster.url, "GET_TASKS")["get_tasks"]["tasks"]
        assert [(t["task_id"]["value"], t["state"], t["agent_id"]["value"]) for t in tasks] \
            == [("t-stay", "TASK_RUNNING", agent_id)]

        driver.killTask({"value": "t-stay"})  # reaches the same executor, once it subscribed again
        recorder.wait(lambda r: "TASK_KILLED" in states(r, "t-stay"), RECONNECT_S)
        assert changes(recorder, "t-stay") == ["TASK_RUNNING", "TASK_KILLED"], "no LOST/UNREACHABLE/FAILED"
        killed = next(u for u in recorder.updates if u["state"] == "TASK_KILLED")
        assert killed["source"] == "SOURCE_EXECUTOR"


def test_returning_agent_kills_the_tasks_of_a_framework_that_is_not_partition_aware(make_cluster, executors):
    cluster = make_cluster(1, **SHORT_TIMEOUT)
    cluster.require_own_processes("make an agent unreachable")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder) as driver:
        launch_on(recorder, driver, agents, "node-0", "t-lost", executors)
        pid = executor_pid(recorder, "t-lost")

        cluster.agents["node-0"].kill()
        recorder.wait(lambda r: "TASK_LOST" in states(r, "t-lost"))
        lost = next(u for u in recorder.updates if u["state"] == "TASK_LOST")
        assert lost["reason"] == "REASON_AGENT_REMOVED" and "TASK_UNREACHABLE" not in states(recorder, "t-lost")
        assert alive(pid)

        cluster.agents["node-0"].start()
        recorder.wait(lambda r: "TASK_KILLED" in states(r, "t-lost"), RECONNECT_S)
        deadline = time.monotonic() + 20
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid), "the task's executor was shut down on the returning agent"
        assert changes(recorder, "t-lost") == ["TASK_RUNNING", "TASK_LOST", "TASK_KILLED"]
        assert operator(cluster.url, "GET_TASKS")["get_tasks"]["tasks"] == []


def test_kill_of_an_unreachable_task_is_delivered_when_its_agent_returns(make_cluster, executors):
    cluster = make_cluster(1, **SHORT_TIMEOUT)
    cluster.require_own_processes("make an agent unreachable")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder, partition_aware=True) as driver:
        launch_on(recorder, driver, agents, "node-0", "t-later", executors)
        pid = executor_pid(recorder, "t-later")
        cluster.agents["node-0"].kill()
        recorder.wait(lambda r: "TASK_UNREACHABLE" in states(r, "t-later"))

        seen = len(recorder.updates)
        driver.killTask({"value": "t-later"})  # answered as Mesos does: by reconciliation
        recorder.wait(lambda r: any(u.get("reason") == "REASON_RECONCILIATION" for u in r.updates[seen:]))
        assert [u["state"] for u in recorder.updates[seen:]] == ["TASK_UNREACHABLE"]
        assert alive(pid)

        cluster.agents["node-0"].start()
        recorder.wait(lambda r: "TASK_KILLED" in states(r, "t-later"), RECONNECT_S)
        assert changes(recorder, "t-later")[-2:] == ["TASK_RUNNING", "TASK_KILLED"]
        killed = next(u for u in recorder.updates if u["state"] == "TASK_KILLED")
        assert killed["source"] == "SOURCE_EXECUTOR", "the executor that ran it killed it"


def test_an_executor_that_died_with_its_agent_fails_its_task(make_cluster, executors):
    cluster = make_cluster(1, **LONG_TIMEOUT)
    cluster.require_own_processes("restart an agent")
    agents = agent_ids(cluster)
    recorder = Tracker()
    with framework(cluster.url, recorder, partition_aware=True) as driver:
        launch_on(recorder, driver, agents, "node-0", "t-gone", executors)
        pid = executor_pid(recorder, "t-gone")
        cluster.agents["node-0"].kill()
        os.killpg(os.getpgid(pid), signal.SIGKILL)  # the executor (its whole session) dies while the agent is away

        cluster.agents["node-0"].start()  # recovers: the checkpointed executor is gone
        recorder.wait(lambda r: "TASK_FAILED" in states(r, "t-gone"))
        failed = next(u for u in recorder.updates if u["state"] == "TASK_FAILED")
        assert failed["reason"] == "REASON_EXECUTOR_TERMINATED" and failed["source"] == "SOURCE_AGENT"
        assert failed["agent_id"]["value"] == agents["node-0"]
        assert changes(recorder, "t-gone") == ["TASK_RUNNING", "TASK_FAILED"]
