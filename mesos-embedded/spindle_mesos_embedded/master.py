"""The master: frameworks, offers and tasks over any number of agents, all on one asyncio loop.
Scheduler and operator messages follow mesos/v1/scheduler and master protos (JSON: proto field
names, enums as strings, bytes base64); the agents speak ``protocol.py``.

Agents and their failures, as Mesos ≥ 1.1 does it:

- Each connected framework holds at most one outstanding offer per ACTIVE agent (that agent's free
  resources); an ACCEPT launches on the offer's agent. An agent whose resources change, whose stream
  closes or that times out has its offers rescinded.
- An agent that sends no heartbeat for ``agent_timeout_s`` is UNREACHABLE: each live task on it is
  reported TASK_UNREACHABLE to a PARTITION_AWARE framework, TASK_LOST to any other (source
  SOURCE_MASTER, reason REASON_AGENT_REMOVED, ``unreachable_time``), and every framework gets a
  FAILURE (agent lost). A KILL meanwhile is answered as reconciliation would and remembered.
- When it comes back (re-SUBSCRIBE with its tasks), a partition-aware framework is told each task's
  state again (reason REASON_AGENT_REREGISTERED) and decides; tasks of other frameworks, already
  reported lost, are shut down on the agent (Mesos 1.1–1.4 behaviour; from 1.5 Mesos lets them run).
  Remembered KILLs are delivered.
- A restarted master knows its agents from ``registry.json`` in its work dir (ids, hostnames, which
  were unreachable), not their tasks: those come back with each agent's SUBSCRIBE and are adopted.
  Until an agent re-registers (or times out), reconciling a task that may be on it gets no answer
  yet — it is answered once the agent is back — instead of a false TASK_LOST; frameworks
  re-subscribing with their FrameworkID get their tasks (and unacknowledged updates) back.
"""
import asyncio
import json
import logging
import os
import time
import uuid
from typing import Any

from spindle_mesos_embedded import resources as res
from spindle_mesos_embedded.model import ACTIVE, DISCONNECTED, RECOVERED, UNREACHABLE, Agent, Framework, Task
from spindle_mesos_embedded.protocol import VERSION
from spindle_mesos_embedded.v1 import TERMINAL, new_id, task_status, time_info

log = logging.getLogger("spindle.mesos")
HEARTBEAT_S = 15.0  # scheduler streams
STATUS_RETRY_S = 2.0
DEFAULT_REFUSE_S = 5.0


def _value(holder: dict[str, Any] | None, name: str) -> str:
    """``holder[name]["value"]`` of a v1 ID field, or ""."""
    return ((holder or {}).get(name) or {}).get("value", "")


class Master:
    def __init__(self, endpoint: str, work_dir: str, agent_timeout_s: float = 15.0,
                 agent_heartbeat_s: float | None = None):
        self.endpoint = endpoint  # host:port of the scheduler/operator API
        self.work_dir = work_dir  # holds the agent registry
        self.agent_timeout_s = agent_timeout_s
        self.agent_heartbeat_s = agent_heartbeat_s or agent_timeout_s / 3
        self.master_id = str(uuid.uuid4())
        self.started = time.monotonic()
        self.frameworks: dict[str, Framework] = {}
        self.removed_frameworks: set[str] = set()  # torn down: their tasks' last updates are acknowledged here
        self.tasks: dict[tuple[str, str], Task] = {}  # (framework id, task id) → task
        self.agents: dict[str, Agent] = {}
        self.agent_count = 0
        self.offers_made = 0  # offers sent, over the master's life (its /metrics)
        # Explicit reconciliations that wait for a recovered agent: (framework id, task id, agent id or "").
        self.deferred: list[tuple[str, str, str]] = []
        # Set when an allocation should run now rather than at the next interval (a REVIVE, a new
        # agent), as Mesos' allocator allocates for a framework that revives.
        self.allocate_now = asyncio.Event()
        self._load_registry()

    # --- the registry: which agents exist, across master restarts -------------------------------
    @property
    def registry_path(self) -> str:
        return os.path.join(self.work_dir, "registry.json")

    def _load_registry(self) -> None:
        try:
            with open(self.registry_path) as f:
                entries = json.load(f).get("agents", {})
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable agent registry %s: %s", self.registry_path, exc)
            return
        for agent_id, entry in entries.items():
            unreachable_time = entry.get("unreachable_time")
            self.agents[agent_id] = Agent(agent_id, entry.get("hostname", ""), entry.get("endpoint", ""),
                                          state=UNREACHABLE if unreachable_time else RECOVERED,
                                          unreachable_time=unreachable_time)
        log.info("registry: %d agents to wait for", sum(a.state == RECOVERED for a in self.agents.values()))

    def _save_registry(self) -> None:
        os.makedirs(self.work_dir, exist_ok=True)
        entries = {a.agent_id: {"hostname": a.hostname, "endpoint": a.endpoint, "unreachable_time": a.unreachable_time}
                   for a in self.agents.values()}
        tmp = self.registry_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"agents": entries}, f)
        os.replace(tmp, self.registry_path)

    # --- scheduler API ----------------------------------------------------------------------
    def subscribe(self, call: dict[str, Any]) -> Framework:
        info = call["subscribe"]["framework_info"]
        framework_id = (call.get("framework_id") or info.get("id") or {}).get("value") or new_id("framework")
        old = self.frameworks.get(framework_id)
        if old:  # failover: the new connection takes over; its outstanding offers are gone
            old.events.put_nowait(None)
        framework = Framework(framework_id, {**info, "id": {"value": framework_id}}, str(uuid.uuid4()), asyncio.Queue())
        self.frameworks[framework_id] = framework
        self.removed_frameworks.discard(framework_id)
        host, port = self.endpoint.rsplit(":", 1)
        framework.events.put_nowait({"type": "SUBSCRIBED", "subscribed": {
            "framework_id": {"value": framework_id}, "heartbeat_interval_seconds": HEARTBEAT_S,
            "master_info": {"id": self.master_id, "ip": 0, "port": int(port), "hostname": host, "version": VERSION}}})
        # Updates not acknowledged before the failover (or adopted from agents after a master
        # restart) go out again.
        for task in self.tasks.values():
            if task.framework_id == framework_id and task.unacked:
                framework.events.put_nowait({"type": "UPDATE", "update": {"status": task.unacked}})
        self.allocate_now.set()
        log.info("framework %s subscribed%s", framework_id, " (failover)" if old else "")
        return framework

    def disconnected(self, framework: Framework) -> None:
        if self.frameworks.get(framework.framework_id) is framework:
            framework.connected = False
            framework.offers.clear()
            framework.disconnected_at = time.monotonic()

    def handle_call(self, call: dict[str, Any]) -> str | None:
        """A scheduler call; returns an error text for a 400, or None (202)."""
        framework = self.frameworks.get(_value(call, "framework_id"))
        if framework is None:
            return "framework is not subscribed"
        kind = call.get("type")
        handler = getattr(self, f"_call_{str(kind).lower()}", None)
        if handler is None:
            return f"unsupported call type {kind}"
        return handler(framework, call.get(str(kind).lower(), {}))

    def _call_accept(self, framework: Framework, accept: dict[str, Any]) -> str | None:
        offer_ids = {o["value"] for o in accept.get("offer_ids", [])}
        offers = [o for o in framework.offers.values() if o["id"]["value"] in offer_ids]
        for offer in offers:  # used (or invalid): gone either way
            framework.offers.pop(offer["agent_id"]["value"], None)
        agent_ids = {o["agent_id"]["value"] for o in offers}
        agent = self.agents.get(agent_ids.pop()) if len(agent_ids) == 1 else None
        if not offer_ids or len(offers) != len(offer_ids) or agent is None or agent.state != ACTIVE:
            # Like Mesos: launches on stale offers (or offers of several agents) are dropped.
            self._drop_launches(framework, accept, "offer no longer valid")
            return None
        available = [r for offer in offers for r in offer["resources"]]
        for op in accept.get("operations", []):
            if op.get("type") != "LAUNCH":
                continue
            for info in op["launch"].get("task_infos", []):
                wanted = info.get("resources", []) + info.get("executor", {}).get("resources", [])
                problem = res.contains(available, wanted) or self._invalid_task(framework, agent, info)
                task = Task({**info, "agent_id": {"value": agent.agent_id}}, framework.framework_id,
                            _value(info.get("executor"), "executor_id"), agent.agent_id)
                if problem:
                    self._master_update(task, "TASK_ERROR", problem, "REASON_TASK_INVALID")
                    continue
                available = res.free(available, wanted)
                self.tasks[task.key] = task
                self._launch(framework, agent, task)
        self._refuse(framework, agent.agent_id, accept.get("filters"))
        return None

    def _drop_launches(self, framework: Framework, accept: dict[str, Any], why: str) -> None:
        state = "TASK_DROPPED" if framework.partition_aware else "TASK_LOST"
        for op in accept.get("operations", []):
            for info in op.get("launch", {}).get("task_infos", []):
                task = Task(info, framework.framework_id, _value(info.get("executor"), "executor_id"),
                            _value(info, "agent_id"))
                self._master_update(task, state, why, "REASON_INVALID_OFFERS")

    def _invalid_task(self, framework: Framework, agent: Agent, info: dict[str, Any]) -> str | None:
        if not info.get("executor"):
            return "only tasks with an ExecutorInfo are supported by the embedded agent"
        task_id = info["task_id"]["value"]
        existing = self.tasks.get((framework.framework_id, task_id))
        if existing and existing.state not in TERMINAL:
            return f"task {task_id} already exists"
        named = _value(info, "agent_id")
        if named and named != agent.agent_id:
            return f"task {task_id} names agent {named}, the offer is of agent {agent.agent_id}"
        return None

    def _launch(self, framework: Framework, agent: Agent, task: Task) -> None:
        executor = task.info["executor"]
        agent.executors.setdefault((framework.framework_id, task.executor_id), executor)
        agent.send({"type": "RUN_TASK", "run_task": {"framework_info": framework.info, "task_info": task.info}})

    def _call_decline(self, framework: Framework, decline: dict[str, Any]) -> None:
        declined = {o["value"] for o in decline.get("offer_ids", [])}
        for agent_id, offer in list(framework.offers.items()):
            if offer["id"]["value"] in declined:
                del framework.offers[agent_id]
                self._refuse(framework, agent_id, decline.get("filters"))

    def _refuse(self, framework: Framework, agent_id: str, filters: dict[str, Any] | None) -> None:
        """Filters apply to the declined (or accepted) offer's agent, as in Mesos."""
        seconds = (filters or {}).get("refuse_seconds", DEFAULT_REFUSE_S)
        framework.refuse_until[agent_id] = time.monotonic() + seconds

    def _call_revive(self, framework: Framework, _: dict) -> None:
        framework.suppressed = False
        framework.refuse_until.clear()
        self.allocate_now.set()

    def _call_suppress(self, framework: Framework, _: dict) -> None:
        framework.suppressed = True

    def _call_kill(self, framework: Framework, kill: dict[str, Any]) -> None:
        task = self.tasks.get((framework.framework_id, kill["task_id"]["value"]))
        if task is None:  # Mesos answers a KILL of an unknown task by reconciling it
            self._reconcile(framework, kill["task_id"]["value"], _value(kill, "agent_id"))
            return
        agent = self.agents.get(task.agent_id)
        if task.unreachable:
            # Mesos can only answer with what it knows (reconciliation); the kill is kept and
            # delivered when the agent comes back.
            if agent:
                agent.pending_kills.add(task.key)
            self._reconcile(framework, task.task_id, task.agent_id)
            return
        if task.state in TERMINAL or agent is None:
            return
        if not agent.send({"type": "KILL_TASK", "kill_task": {"framework_id": {"value": task.framework_id},
                                                              "task_id": {"value": task.task_id}}}):
            agent.pending_kills.add(task.key)  # the agent is restarting: it gets the kill when back

    def _call_acknowledge(self, framework: Framework, ack: dict[str, Any]) -> None:
        task = self.tasks.get((framework.framework_id, ack["task_id"]["value"]))
        if task and task.unacked and task.unacked.get("uuid") == ack["uuid"]:
            task.unacked, task.acked_uuid = None, ack["uuid"]
            agent = self.agents.get(task.agent_id)
            if agent:  # if it is away, it reports the update again when back and is acknowledged then
                agent.send(self._acknowledged(task, ack["uuid"]))

    @staticmethod
    def _acknowledged(task: Task, uuid_: str) -> dict[str, Any]:
        return {"type": "ACKNOWLEDGED", "acknowledged": {"framework_id": {"value": task.framework_id},
                                                         "task_id": {"value": task.task_id}, "uuid": uuid_}}

    def _call_reconcile(self, framework: Framework, reconcile: dict[str, Any]) -> None:
        asked = reconcile.get("tasks", [])
        if not asked:  # implicit: every task the master knows to be live
            asked = [{"task_id": {"value": t.task_id}, "agent_id": {"value": t.agent_id}} for t in self.tasks.values()
                     if t.framework_id == framework.framework_id and t.state not in TERMINAL]
        for entry in asked:
            self._reconcile(framework, entry["task_id"]["value"], _value(entry, "agent_id"))

    def _reconcile(self, framework: Framework, task_id: str, agent_id: str) -> None:
        status = self._reconciled(framework, task_id, agent_id)
        if status is None:
            self.deferred.append((framework.framework_id, task_id, agent_id))
        elif framework.connected:
            framework.events.put_nowait({"type": "UPDATE", "update": {"status": status}})

    def _reconciled(self, framework: Framework, task_id: str, agent_id: str) -> dict[str, Any] | None:
        """The reconciliation answer for one task (no uuid: nothing to acknowledge); None while the
        task may be on an agent that has not re-registered since the master restarted."""
        task = self.tasks.get((framework.framework_id, task_id))
        if task:
            agent = self.agents.get(task.agent_id)
            return task_status(task_id, task.state, task.agent_id, task.executor_id, "reconciliation",
                               "REASON_RECONCILIATION", with_uuid=False,
                               unreachable_time=agent.unreachable_time if agent and task.unreachable else None)
        agent = self.agents.get(agent_id) if agent_id else None
        if (agent and agent.state == RECOVERED) or (not agent_id and
                                                    any(a.state == RECOVERED for a in self.agents.values())):
            return None
        if agent and agent.state == UNREACHABLE:
            state = "TASK_UNREACHABLE" if framework.partition_aware else "TASK_LOST"
            return task_status(task_id, state, agent_id, message="reconciliation: the task's agent is unreachable",
                               reason="REASON_RECONCILIATION", with_uuid=False, unreachable_time=agent.unreachable_time)
        state = "TASK_UNKNOWN" if framework.partition_aware else "TASK_LOST"
        return task_status(task_id, state, agent_id or None, message="reconciliation: unknown task",
                           reason="REASON_RECONCILIATION", with_uuid=False)

    def _resolve_deferred(self) -> None:
        waiting, self.deferred = self.deferred, []
        for framework_id, task_id, agent_id in waiting:
            framework = self.frameworks.get(framework_id)
            if framework:
                self._reconcile(framework, task_id, agent_id)

    def _call_teardown(self, framework: Framework, _: dict) -> None:
        """The framework is gone for good: its executors are shut down on every agent (their tasks
        end TASK_KILLED)."""
        framework_id = framework.framework_id
        for agent in self.agents.values():
            if any(f == framework_id for f, _ in agent.executors) or any(
                    t.agent_id == agent.agent_id and t.framework_id == framework_id and t.state not in TERMINAL
                    for t in self.tasks.values()):
                if not agent.send({"type": "SHUTDOWN_FRAMEWORK",
                                   "shutdown_framework": {"framework_id": {"value": framework_id}}}):
                    agent.pending_shutdowns.add(framework_id)
        framework.events.put_nowait(None)
        self.frameworks.pop(framework_id, None)
        self.removed_frameworks.add(framework_id)

    # --- offers -----------------------------------------------------------------------------
    def used(self, agent: Agent) -> list[dict]:
        live = [r for t in self.tasks.values() if t.agent_id == agent.agent_id and t.state not in TERMINAL
                for r in t.resources]
        return live + [r for info in agent.executors.values() for r in info.get("resources", [])]

    def offered(self, agent: Agent) -> list[dict]:
        return [r for f in self.frameworks.values() for r in (f.offers.get(agent.agent_id) or {}).get("resources", [])]

    def make_offers(self) -> None:
        """One allocation round: every connected, unsuppressed framework gets an offer from each
        ACTIVE agent it has no outstanding offer from (and has not filtered), of what is free there."""
        now = time.monotonic()
        for framework in self.frameworks.values():
            if not framework.connected or framework.suppressed:
                continue
            new = []
            for agent in self.agents.values():
                if (agent.state != ACTIVE or agent.agent_id in framework.offers
                        or now < framework.refuse_until.get(agent.agent_id, 0.0)):
                    continue
                available = res.free(agent.total, self.used(agent) + res.strip_allocation(self.offered(agent)))
                if not res.scalar(available, "cpus") and not any(res.mount_root(r) for r in available):
                    continue
                offer = {"id": {"value": new_id("offer")}, "framework_id": {"value": framework.framework_id},
                         "agent_id": {"value": agent.agent_id}, "hostname": agent.hostname,
                         "resources": res.for_role(available, framework.role)}
                framework.offers[agent.agent_id] = offer
                new.append(offer)
                self.offers_made += 1
            if new:
                framework.events.put_nowait({"type": "OFFERS", "offers": {"offers": new}})

    def rescind(self, agent_id: str) -> None:
        """Offers of one agent are invalidated when its inventory changes under them (e.g. a disk
        failed) or the agent goes away."""
        for framework in self.frameworks.values():
            offer = framework.offers.pop(agent_id, None)
            if offer:
                framework.events.put_nowait({"type": "RESCIND", "rescind": {"offer_id": offer["id"]}})

    def resend_unacknowledged(self) -> None:
        now = time.monotonic()
        for task in self.tasks.values():
            framework = self.frameworks.get(task.framework_id)
            if task.unacked and framework and framework.connected and now - task.resent_at > STATUS_RETRY_S:
                task.resent_at = now
                framework.events.put_nowait({"type": "UPDATE", "update": {"status": task.unacked}})

    def tick(self) -> None:
        """Every allocation interval: agent timeouts, offers, status update retries."""
        now = time.monotonic()
        for agent in list(self.agents.values()):
            if agent.state in (ACTIVE, DISCONNECTED) and now - agent.last_seen > self.agent_timeout_s:
                self.mark_unreachable(agent, f"no heartbeat for {self.agent_timeout_s:g} s")
            elif agent.state == RECOVERED and now - self.started > self.agent_timeout_s:
                self.mark_unreachable(agent, "it did not re-register after the master restarted")
        self.make_offers()
        self.resend_unacknowledged()

    # --- agent failures ------------------------------------------------------------------------
    def mark_unreachable(self, agent: Agent, why: str) -> None:
        log.warning("agent %s (%s) is unreachable: %s", agent.agent_id, agent.hostname, why)
        agent.state, agent.unreachable_time = UNREACHABLE, time.time()
        self._close_stream(agent)
        self.rescind(agent.agent_id)
        for task in self.tasks.values():
            if task.agent_id != agent.agent_id or task.state in TERMINAL:
                continue
            framework = self.frameworks.get(task.framework_id)
            # A framework not re-subscribed yet after a master restart is assumed partition-aware:
            # TASK_UNREACHABLE promises less than TASK_LOST.
            state = "TASK_UNREACHABLE" if framework is None or framework.partition_aware else "TASK_LOST"
            task.unreachable = True
            self._master_update(task, state, f"agent {agent.hostname} is unreachable: {why}", "REASON_AGENT_REMOVED",
                                unreachable_time=agent.unreachable_time)
        self._agent_lost(agent)
        self._save_registry()
        self._resolve_deferred()

    def _agent_lost(self, agent: Agent) -> None:
        for framework in self.frameworks.values():
            if framework.connected:
                framework.events.put_nowait({"type": "FAILURE", "failure": {"agent_id": {"value": agent.agent_id}}})

    def _close_stream(self, agent: Agent) -> None:
        if agent.events is not None:
            agent.events.put_nowait(None)
            agent.events = None

    def _master_update(self, task: Task, state: str, message: str, reason: str,
                       unreachable_time: float | None = None) -> None:
        """A status update the master itself generates for ``task`` (delivered reliably)."""
        status = task_status(task.task_id, state, task.agent_id or None, task.executor_id or None, message, reason,
                             "SOURCE_MASTER", unreachable_time=unreachable_time)
        task.state, task.status = state, status
        self._send_update(task, status)

    def _send_update(self, task: Task, status: dict[str, Any]) -> None:
        """Forward an update to the task's framework; one with a uuid is re-sent until acknowledged
        (also to a framework that is away now: when it re-subscribes)."""
        if status.get("uuid"):
            task.unacked, task.resent_at = status, time.monotonic()
        framework = self.frameworks.get(task.framework_id)
        if framework and framework.connected:
            framework.events.put_nowait({"type": "UPDATE", "update": {"status": status}})

    # --- the agent protocol (protocol.py) ------------------------------------------------------------
    def agent_subscribe(self, call: dict[str, Any]) -> Agent | str:
        """An agent (re-)registers with everything it runs; returns it (its stream is open) or an error."""
        subscribe = call.get("subscribe") or {}
        info = subscribe.get("agent_info") or {}
        if not info.get("hostname"):
            return "SUBSCRIBE needs subscribe.agent_info.hostname"
        agent_id = _value(call, "agent_id")
        agent = self.agents.get(agent_id) if agent_id else None
        previous = agent.state if agent else None
        if agent is None:  # new, or re-registering with a master that has no record of it
            if not agent_id:
                agent_id = f"{self.master_id}-S{self.agent_count}"
                self.agent_count += 1
            agent = self.agents[agent_id] = Agent(agent_id, info["hostname"])
        else:
            self._close_stream(agent)  # a newer stream replaces one the master has not seen close yet
            if previous in (RECOVERED, UNREACHABLE):
                agent.registered_time = time.time()
        self.rescind(agent_id)
        agent.hostname, agent.endpoint, agent.total = info["hostname"], subscribe.get("endpoint", ""), \
            subscribe.get("resources", [])
        agent.state, agent.unreachable_time, agent.last_seen = ACTIVE, None, time.monotonic()
        agent.stream_id, agent.events = str(uuid.uuid4()), asyncio.Queue()
        agent.send({"type": "SUBSCRIBED", "subscribed": {
            "agent_id": {"value": agent_id}, "master_id": self.master_id,
            "heartbeat_interval_seconds": self.agent_heartbeat_s}})
        self._reregister(agent, subscribe, previous)
        self._save_registry()
        self._resolve_deferred()
        self.allocate_now.set()
        log.info("agent %s (%s at %s) %s with %d tasks", agent_id, agent.hostname, agent.endpoint,
                 "registered" if previous is None else f"re-registered (was {previous})",
                 len(subscribe.get("tasks", [])))
        return agent

    def _reregister(self, agent: Agent, subscribe: dict[str, Any], previous: str | None) -> None:
        """Merge what a (re-)registering agent runs into the master's tables."""
        reported = {(_value(t, "framework_id"), t["task_info"]["task_id"]["value"]): t
                    for t in subscribe.get("tasks", [])}
        agent.executors = {(_value(e, "framework_id"), _value(e["executor_info"], "executor_id")): e["executor_info"]
                           for e in subscribe.get("executors", [])}
        shutdown, agent.pending_shutdowns = set(agent.pending_shutdowns), set()
        for placed in self.tasks.values():  # placed there, unknown to the agent: a launch lost on the way
            if placed.agent_id == agent.agent_id and placed.key not in reported and placed.state not in TERMINAL:
                framework = self.frameworks.get(placed.framework_id)
                placed.unreachable = False
                self._master_update(placed, "TASK_DROPPED" if framework is None or framework.partition_aware
                                    else "TASK_LOST", "the task is unknown to its agent", "REASON_RECONCILIATION")
        for key, entry in reported.items():
            framework_id = key[0]
            state, status, unacked = entry.get("state", "TASK_STAGING"), entry.get("status"), \
                entry.get("unacknowledged_update")
            if framework_id in self.removed_frameworks:
                shutdown.add(framework_id)
            task = self.tasks.get(key)
            if task is None:  # adopted: the master restarted (or never knew this agent)
                task = Task(entry["task_info"], framework_id, _value(entry["task_info"].get("executor"), "executor_id"),
                            agent.agent_id, state, status or {})
                self.tasks[key] = task
                if unacked:
                    self._send_update(task, unacked)
                continue
            framework = self.frameworks.get(framework_id)
            if task.unreachable:
                task.unreachable = False
                if framework is not None and not framework.partition_aware:
                    shutdown.add(framework_id)  # it was told TASK_LOST: the task must not live on
                    continue
                task.state, task.status = state, status or task.status
                if unacked and unacked.get("uuid") != task.acked_uuid:
                    self._send_update(task, unacked)  # a real change while it was away (e.g. it finished)
                else:
                    self._master_update(task, state, f"agent {agent.hostname} re-registered",
                                        "REASON_AGENT_REREGISTERED")
                continue
            task.state, task.status = state, status or task.status  # the agent's word is the latest
            if unacked:
                if unacked.get("uuid") == task.acked_uuid:  # acknowledged while the agent was away
                    agent.send(self._acknowledged(task, unacked["uuid"]))
                elif (task.unacked or {}).get("uuid") != unacked.get("uuid"):
                    self._send_update(task, unacked)
        for framework_id in shutdown:
            agent.send({"type": "SHUTDOWN_FRAMEWORK", "shutdown_framework": {"framework_id": {"value": framework_id}}})
        kills, agent.pending_kills = agent.pending_kills, set()
        for key in kills:
            if key in reported and key[0] not in shutdown and reported[key].get("state") not in TERMINAL:
                agent.send({"type": "KILL_TASK", "kill_task": {"framework_id": {"value": key[0]},
                                                               "task_id": {"value": key[1]}}})

    def agent_disconnected(self, agent: Agent, stream_id: str) -> None:
        """Its stream closed (the agent process died or restarts): no offers of it meanwhile; its
        tasks are unreachable only if no heartbeat comes within the timeout."""
        if agent.stream_id == stream_id and agent.state == ACTIVE:
            log.info("agent %s (%s) disconnected", agent.agent_id, agent.hostname)
            agent.state, agent.events = DISCONNECTED, None
            self.rescind(agent.agent_id)

    def agent_call(self, call: dict[str, Any], stream_id: str | None) -> tuple[int, str]:
        """A call of a subscribed agent: (HTTP status, error text)."""
        agent = self.agents.get(_value(call, "agent_id"))
        if agent is None or agent.state != ACTIVE or agent.stream_id != stream_id:
            return 404, "this master has no open stream of that agent: SUBSCRIBE again"
        agent.last_seen = time.monotonic()
        kind = str(call.get("type"))
        body = call.get(kind.lower()) or {}
        if kind == "HEARTBEAT":
            pass
        elif kind == "UPDATE":
            self._agent_update(agent, body)
        elif kind == "RESOURCES":
            if body.get("resources", []) != agent.total:
                self.rescind(agent.agent_id)
                agent.total = body.get("resources", [])
                self.allocate_now.set()
        elif kind == "EXECUTOR_EXITED":
            framework_id, executor_id = _value(body, "framework_id"), _value(body, "executor_id")
            agent.executors.pop((framework_id, executor_id), None)
            framework = self.frameworks.get(framework_id)
            if framework and framework.connected:
                framework.events.put_nowait({"type": "FAILURE", "failure": {
                    "agent_id": {"value": agent.agent_id}, "executor_id": {"value": executor_id},
                    "status": body.get("status", -1)}})
            self.allocate_now.set()
        elif kind == "UNREGISTER":
            self._remove_agent(agent)
        else:
            return 400, f"unsupported agent call {kind}"
        return 202, ""

    def _agent_update(self, agent: Agent, update: dict[str, Any]) -> None:
        framework_id, status = _value(update, "framework_id"), update["status"]
        status.setdefault("agent_id", {"value": agent.agent_id})
        key = (framework_id, status["task_id"]["value"])
        task = self.tasks.get(key)
        if task is None:
            task = self.tasks[key] = Task({"task_id": status["task_id"]}, framework_id,
                                          _value(status, "executor_id"), agent.agent_id)
        task.state, task.status = status["state"], status
        uuid_ = status.get("uuid")
        if framework_id in self.removed_frameworks or (uuid_ and uuid_ == task.acked_uuid):
            if uuid_:  # nobody will acknowledge it (torn down), or it was already: let the agent forget it
                agent.send(self._acknowledged(task, uuid_))
            return
        self._send_update(task, status)

    def _remove_agent(self, agent: Agent) -> None:
        """The agent shut down for good (it stopped its executors first)."""
        log.info("agent %s (%s) unregistered", agent.agent_id, agent.hostname)
        self._close_stream(agent)
        self.rescind(agent.agent_id)
        for task in self.tasks.values():
            if task.agent_id == agent.agent_id and task.state not in TERMINAL:
                framework = self.frameworks.get(task.framework_id)
                self._master_update(task, "TASK_GONE" if framework and framework.partition_aware else "TASK_LOST",
                                    f"agent {agent.hostname} shut down", "REASON_AGENT_REMOVED")
        self._agent_lost(agent)
        del self.agents[agent.agent_id]
        self._save_registry()

    def close_streams(self) -> None:
        """End every framework's and agent's event stream (the server stops): they re-subscribe with
        the next master."""
        for framework in self.frameworks.values():
            framework.events.put_nowait(None)
        for agent in self.agents.values():
            self._close_stream(agent)

    # --- operator API -------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        tasks = [(t, {"name": t.info.get("name", ""), "task_id": t.info["task_id"],
                      "framework_id": {"value": t.framework_id}, "executor_id": {"value": t.executor_id},
                      "agent_id": {"value": t.agent_id}, "state": t.state, "resources": t.resources,
                      "statuses": [t.status] if t.status else []}) for t in self.tasks.values()]
        return {
            "get_tasks": {"tasks": [v for t, v in tasks if not t.unreachable and t.state not in TERMINAL],
                          "unreachable_tasks": [v for t, v in tasks if t.unreachable],
                          "completed_tasks": [v for t, v in tasks if not t.unreachable and t.state in TERMINAL]},
            "get_executors": {"executors": [{"executor_info": info, "agent_id": {"value": a.agent_id}}
                                            for a in self.agents.values() if a.state != UNREACHABLE
                                            for info in a.executors.values()]},
            "get_frameworks": {"frameworks": [{"framework_info": f.info, "active": f.connected,
                                               "connected": f.connected}
                                              for f in self.frameworks.values()]},
            "get_agents": {"agents": [self.agent_view(a) for a in self.agents.values() if a.state != RECOVERED],
                           "recovered_agents": [self.agent_info(a) for a in self.agents.values()
                                                if a.state == RECOVERED]},
        }

    def agent_info(self, agent: Agent) -> dict[str, Any]:
        info: dict[str, Any] = {"id": {"value": agent.agent_id}, "hostname": agent.hostname,
                                "resources": agent.total}
        if agent.endpoint:
            info["port"] = int(agent.endpoint.rsplit(":", 1)[1])
        return info

    def agent_view(self, agent: Agent) -> dict[str, Any]:
        """GetAgents.Agent. Unlike Mesos (which lists them elsewhere), unreachable and disconnected
        agents are listed too, with ``active`` false."""
        return {"agent_info": self.agent_info(agent), "active": agent.state == ACTIVE, "version": VERSION,
                "pid": f"slave(1)@{agent.endpoint}", "registered_time": time_info(agent.registered_time),
                "total_resources": agent.total, "allocated_resources": self.used(agent),
                "offered_resources": self.offered(agent)}
