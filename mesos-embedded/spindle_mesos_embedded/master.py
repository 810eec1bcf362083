"""The master + agent logic, all on one asyncio loop. Message shapes follow mesos/v1/scheduler,
executor and master protos (JSON: proto field names, enums as strings, bytes base64)."""
import asyncio
import base64
import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Callable
from typing import Any

from spindle_mesos_embedded import resources as res
from spindle_mesos_embedded.model import TERMINAL, Executor, Framework, Task

log = logging.getLogger("spindle.mesos")
HEARTBEAT_S = 15.0
STATUS_RETRY_S = 2.0
DEFAULT_REFUSE_S = 5.0


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


def status_update(task: Task, state: str, message: str = "", reason: str | None = None,
                  source: str = "SOURCE_AGENT", with_uuid: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {"task_id": {"value": task.task_id}, "state": state, "source": source,
                              "agent_id": task.info.get("agent_id"), "timestamp": time.time(),
                              "executor_id": {"value": task.executor_id}}
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    if with_uuid:
        status["uuid"] = base64.b64encode(uuid.uuid4().bytes).decode()
    return status


class Master:
    def __init__(self, endpoint: str, hostname: str, work_dir: str, load_resources: Callable[[], list[dict]]):
        self.endpoint = endpoint  # host:port the executors call back
        self.hostname = hostname
        self.work_dir = work_dir
        self.load_resources = load_resources
        self.master_id = new_id("master")
        self.agent_id = new_id("agent") + "-S0"
        self.frameworks: dict[str, Framework] = {}
        self.tasks: dict[str, Task] = {}
        self.executors: dict[str, Executor] = {}
        self.total: list[dict] = []
        # Set when an allocation should run now rather than at the next interval (a REVIVE), as
        # Mesos' allocator allocates for a framework that revives.
        self.allocate_now = asyncio.Event()

    # --- scheduler API ----------------------------------------------------------------------
    def subscribe(self, call: dict[str, Any]) -> Framework:
        info = call["subscribe"]["framework_info"]
        framework_id = (call.get("framework_id") or info.get("id") or {}).get("value") or new_id("framework")
        old = self.frameworks.get(framework_id)
        if old:  # failover: the new connection takes over; its outstanding offer is gone
            old.events.put_nowait(None)
        framework = Framework(framework_id, {**info, "id": {"value": framework_id}}, str(uuid.uuid4()), asyncio.Queue())
        self.frameworks[framework_id] = framework
        framework.events.put_nowait({"type": "SUBSCRIBED", "subscribed": {
            "framework_id": {"value": framework_id}, "heartbeat_interval_seconds": HEARTBEAT_S,
            "master_info": {"id": self.master_id, "ip": 0, "port": int(self.endpoint.rsplit(":", 1)[1]),
                            "hostname": self.endpoint.rsplit(":", 1)[0], "version": "1.11.0"}}})
        for task in self.tasks.values():  # updates not acknowledged before the failover go out again
            if task.framework_id == framework_id and task.unacked:
                framework.events.put_nowait({"type": "UPDATE", "update": {"status": task.unacked}})
        log.info("framework %s subscribed%s", framework_id, " (failover)" if old else "")
        return framework

    def disconnected(self, framework: Framework) -> None:
        if self.frameworks.get(framework.framework_id) is framework:
            framework.connected, framework.offer = False, None
            framework.disconnected_at = time.monotonic()

    def handle_call(self, call: dict[str, Any]) -> str | None:
        """A scheduler call; returns an error text for a 400, or None (202)."""
        framework = self.frameworks.get((call.get("framework_id") or {}).get("value", ""))
        if framework is None:
            return "framework is not subscribed"
        kind = call.get("type")
        handler = getattr(self, f"_call_{str(kind).lower()}", None)
        if handler is None:
            return f"unsupported call type {kind}"
        return handler(framework, call.get(str(kind).lower(), {}))

    def _call_accept(self, framework: Framework, accept: dict[str, Any]) -> str | None:
        offer = framework.offer
        offer_ids = [o["value"] for o in accept.get("offer_ids", [])]
        if offer is None or offer["id"]["value"] not in offer_ids:
            for op in accept.get("operations", []):  # like Mesos: launches on a stale offer are dropped
                for info in op.get("launch", {}).get("task_infos", []):
                    executor_id = info.get("executor", {}).get("executor_id", {}).get("value", "")
                    task = Task(info, framework.framework_id, executor_id)
                    self._send_update(framework, task, status_update(task, "TASK_DROPPED", "offer no longer valid",
                                                                     "REASON_INVALID_OFFERS", "SOURCE_MASTER"))
            return None
        framework.offer = None
        available = offer["resources"]
        for op in accept.get("operations", []):
            if op.get("type") != "LAUNCH":
                continue
            for info in op["launch"].get("task_infos", []):
                wanted = info.get("resources", []) + info.get("executor", {}).get("resources", [])
                problem = res.contains(available, wanted) or self._invalid_task(info)
                executor_id = info.get("executor", {}).get("executor_id", {}).get("value", "")
                task = Task(info, framework.framework_id, executor_id)
                if problem:
                    self._send_update(framework, task, status_update(task, "TASK_ERROR", problem, "REASON_TASK_INVALID",
                                                                     "SOURCE_MASTER"))
                    continue
                available = res.free(available, wanted)
                self.tasks[task.task_id] = task
                self._launch(framework, task)
        self._refuse(framework, accept.get("filters"))
        return None

    def _invalid_task(self, info: dict[str, Any]) -> str | None:
        if not info.get("executor"):
            return "only tasks with an ExecutorInfo are supported by the embedded agent"
        task_id = info["task_id"]["value"]
        if task_id in self.tasks and self.tasks[task_id].state not in TERMINAL:
            return f"task {task_id} already exists"
        return None

    def _call_decline(self, framework: Framework, decline: dict[str, Any]) -> None:
        if framework.offer and framework.offer["id"]["value"] in [o["value"] for o in decline.get("offer_ids", [])]:
            framework.offer = None
        self._refuse(framework, decline.get("filters"))

    def _refuse(self, framework: Framework, filters: dict[str, Any] | None) -> None:
        seconds = (filters or {}).get("refuse_seconds", DEFAULT_REFUSE_S)
        framework.refuse_until = time.monotonic() + seconds

    def _call_revive(self, framework: Framework, _: dict) -> None:
        framework.suppressed, framework.refuse_until = False, 0.0
        self.allocate_now.set()

    def _call_suppress(self, framework: Framework, _: dict) -> None:
        framework.suppressed = True

    def _call_kill(self, framework: Framework, kill: dict[str, Any]) -> None:
        task = self.tasks.get(kill["task_id"]["value"])
        if task is None or task.framework_id != framework.framework_id:
            fake = Task({"task_id": kill["task_id"], "agent_id": {"value": self.agent_id}}, framework.framework_id, "")
            self._send_update(framework, fake, status_update(fake, "TASK_LOST", "unknown task", "REASON_RECONCILIATION",
                                                             "SOURCE_MASTER", with_uuid=False))
            return
        if task.state in TERMINAL:
            return
        executor = self.executors.get(task.executor_id)
        if executor and executor.events:
            executor.events.put_nowait({"type": "KILL", "kill": {"task_id": kill["task_id"]}})
        elif executor:
            executor.pending.append({"type": "KILL", "kill": {"task_id": kill["task_id"]}})
        else:
            self._agent_update(task, "TASK_KILLED", "killed before its executor started")

    def _call_acknowledge(self, framework: Framework, ack: dict[str, Any]) -> None:
        task = self.tasks.get(ack["task_id"]["value"])
        if task and task.unacked and task.unacked.get("uuid") == ack["uuid"]:
            task.unacked = None
            executor = self.executors.get(task.executor_id)
            if executor and executor.events:
                executor.events.put_nowait({"type": "ACKNOWLEDGED", "acknowledged": {
                    "task_id": ack["task_id"], "uuid": ack["uuid"]}})

    def _call_reconcile(self, framework: Framework, reconcile: dict[str, Any]) -> None:
        asked = [t["task_id"]["value"] for t in reconcile.get("tasks", [])]
        ids = asked or [t.task_id for t in self.tasks.values()
                        if t.framework_id == framework.framework_id and t.state not in TERMINAL]
        for task_id in ids:
            task = self.tasks.get(task_id)
            if task is None or task.framework_id != framework.framework_id:
                task = Task({"task_id": {"value": task_id}, "agent_id": {"value": self.agent_id}},
                            framework.framework_id, "")
                state = "TASK_LOST"
            else:
                state = task.state
            framework.events.put_nowait({"type": "UPDATE", "update": {"status": status_update(
                task, state, "reconciliation", "REASON_RECONCILIATION", "SOURCE_MASTER", with_uuid=False)}})

    def _call_teardown(self, framework: Framework, _: dict) -> None:
        for task in list(self.tasks.values()):
            if task.framework_id == framework.framework_id and task.state not in TERMINAL:
                self._call_kill(framework, {"task_id": {"value": task.task_id}})
        framework.events.put_nowait(None)
        self.frameworks.pop(framework.framework_id, None)

    # --- offers -----------------------------------------------------------------------------
    def used(self) -> list[dict]:
        live = [r for t in self.tasks.values() if t.state not in TERMINAL for r in t.resources]
        return live + [r for e in self.executors.values() if e.process and e.process.returncode is None
                       for r in e.resources]

    def make_offers(self) -> None:
        """One allocation round: every connected, unsuppressed, unfiltered framework without an
        outstanding offer is offered what is free."""
        try:
            loaded = self.load_resources()
        except Exception as exc:  # keep the last known inventory when its source is briefly away
            log.warning("could not load agent resources: %s", exc)
            loaded = self.total
        if loaded != self.total:
            # The agent's resources changed (e.g. a disk failed or was retired): offers made from
            # the old inventory are no longer valid.
            self.rescind_all()
            self.total = loaded
        now = time.monotonic()
        for framework in self.frameworks.values():
            if not framework.connected or framework.suppressed or framework.offer or now < framework.refuse_until:
                continue
            outstanding = [r for f in self.frameworks.values() if f.offer for r in f.offer["resources"]]
            available = res.free(self.total, self.used() + res.strip_allocation(outstanding))
            if not res.scalar(available, "cpus") and not any(res.mount_root(r) for r in available):
                continue
            offer = {"id": {"value": new_id("offer")}, "framework_id": {"value": framework.framework_id},
                     "agent_id": {"value": self.agent_id}, "hostname": self.hostname,
                     "resources": res.for_role(available, framework.role)}
            framework.offer = offer
            framework.events.put_nowait({"type": "OFFERS", "offers": {"offers": [offer]}})

    def rescind_all(self) -> None:
        """Offers are invalidated when the inventory changes under them (e.g. a disk failed)."""
        for framework in self.frameworks.values():
            if framework.offer:
                framework.events.put_nowait({"type": "RESCIND", "rescind": {"offer_id": framework.offer["id"]}})
                framework.offer = None

    def resend_unacknowledged(self) -> None:
        now = time.monotonic()
        for task in self.tasks.values():
            framework = self.frameworks.get(task.framework_id)
            if task.unacked and framework and framework.connected and now - task.resent_at > STATUS_RETRY_S:
                task.resent_at = now
                framework.events.put_nowait({"type": "UPDATE", "update": {"status": task.unacked}})

    # --- agent: executors and status updates -------------------------------------------------
    def _launch(self, framework: Framework, task: Task) -> None:
        executor = self.executors.get(task.executor_id)
        launch = {"type": "LAUNCH", "launch": {"framework": framework.info, "task": task.info}}
        if executor is None or executor.process is None or executor.process.returncode is not None:
            executor = Executor(task.executor_id, framework.framework_id, task.info["executor"])
            self.executors[task.executor_id] = executor
            executor.pending.append(launch)
            asyncio.get_running_loop().create_task(self._run_executor(framework, executor))
        elif executor.events:
            executor.events.put_nowait(launch)
        else:
            executor.pending.append(launch)

    async def _run_executor(self, framework: Framework, executor: Executor) -> None:
        executor.sandbox = os.path.join(self.work_dir, "frameworks", framework.framework_id, "executors",
                                        executor.executor_id, "runs", uuid.uuid4().hex[:8])
        os.makedirs(executor.sandbox, exist_ok=True)
        env = {**os.environ, "MESOS_AGENT_ENDPOINT": self.endpoint, "MESOS_FRAMEWORK_ID": framework.framework_id,
               "MESOS_EXECUTOR_ID": executor.executor_id, "MESOS_DIRECTORY": executor.sandbox,
               "MESOS_SANDBOX": executor.sandbox, "MESOS_AGENT_ID": self.agent_id, "MESOS_SLAVE_ID": self.agent_id,
               "MESOS_CHECKPOINT": "1", "MESOS_HTTP_COMMAND_EXECUTOR": "0",
               "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": "5secs"}
        for variable in executor.info.get("command", {}).get("environment", {}).get("variables", []):
            env[variable["name"]] = variable.get("value", "")
        command = executor.info["command"]["value"]
        with open(os.path.join(executor.sandbox, "stdout"), "wb") as out, \
                open(os.path.join(executor.sandbox, "stderr"), "wb") as err:
            executor.process = await asyncio.create_subprocess_shell(command, env=env, cwd=executor.sandbox,
                                                                     stdout=out, stderr=err, start_new_session=True)
        code = await executor.process.wait()
        log.info("executor %s exited with %s", executor.executor_id, code)
        executor.events = None
        for task in self.tasks.values():
            if task.executor_id == executor.executor_id and task.state not in TERMINAL:
                self._agent_update(task, "TASK_FAILED", f"executor exited with code {code}",
                                   "REASON_EXECUTOR_TERMINATED")

    def executor_subscribed(self, call: dict[str, Any]) -> tuple[Executor, asyncio.Queue] | str:
        executor = self.executors.get(call.get("executor_id", {}).get("value", ""))
        framework = self.frameworks.get(call.get("framework_id", {}).get("value", ""))
        if executor is None or framework is None:
            return "unknown executor or framework"
        executor.events = asyncio.Queue()
        executor.events.put_nowait({"type": "SUBSCRIBED", "subscribed": {
            "executor_info": executor.info, "framework_info": framework.info,
            "agent_info": {"id": {"value": self.agent_id}, "hostname": self.hostname},
            "container_id": {"value": executor.executor_id}}})
        for event in executor.pending:
            executor.events.put_nowait(event)
        executor.pending.clear()
        return executor, executor.events

    def executor_update(self, call: dict[str, Any]) -> str | None:
        status = call.get("update", {}).get("status", {})
        task = self.tasks.get(status.get("task_id", {}).get("value", ""))
        if task is None:
            return "unknown task"
        framework = self.frameworks.get(task.framework_id)
        task.state, task.status = status["state"], status
        status.setdefault("agent_id", {"value": self.agent_id})
        if framework:
            self._send_update(framework, task, status)
        return None

    def _agent_update(self, task: Task, state: str, message: str, reason: str | None = None) -> None:
        task.state = state
        framework = self.frameworks.get(task.framework_id)
        update = status_update(task, state, message, reason)
        task.status = update
        if framework:
            self._send_update(framework, task, update)

    def _send_update(self, framework: Framework, task: Task, status: dict[str, Any]) -> None:
        if status.get("uuid"):
            task.unacked, task.resent_at = status, time.monotonic()
        if framework.connected:
            framework.events.put_nowait({"type": "UPDATE", "update": {"status": status}})

    def shutdown(self) -> None:
        """The agent goes away: its executors (each in its own session) go with it."""
        for executor in self.executors.values():
            if executor.process and executor.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(executor.process.pid, signal.SIGTERM)

    # --- operator API -------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        tasks = [{"name": t.info.get("name", ""), "task_id": t.info["task_id"],
                  "framework_id": {"value": t.framework_id}, "executor_id": {"value": t.executor_id},
                  "agent_id": {"value": self.agent_id}, "state": t.state,
                  "resources": t.resources, "statuses": [t.status] if t.status else []} for t in self.tasks.values()]
        return {
            "get_tasks": {"tasks": [t for t in tasks if t["state"] not in TERMINAL],
                          "completed_tasks": [t for t in tasks if t["state"] in TERMINAL]},
            "get_executors": {"executors": [{"executor_info": e.info, "agent_id": {"value": self.agent_id}}
                                            for e in self.executors.values()
                                            if e.process and e.process.returncode is None]},
            "get_frameworks": {"frameworks": [{"framework_info": f.info, "active": f.connected,
                                               "connected": f.connected}
                                              for f in self.frameworks.values()]},
            "get_agents": {"agents": [self.agent_info()]},
        }

    def agent_info(self) -> dict[str, Any]:
        return {"agent_info": {"id": {"value": self.agent_id}, "hostname": self.hostname, "resources": self.total},
                "active": True, "total_resources": self.total, "allocated_resources": self.used()}
