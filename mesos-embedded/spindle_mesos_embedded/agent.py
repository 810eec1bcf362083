"""The agent: registers with the master (``protocol.py``), runs the executors of the tasks it is
given, serves them the v1 executor API (``agent_app.py``) and relays their status updates.

Executors run in their own session with the environment a real agent gives them
(``MESOS_AGENT_ENDPOINT`` = this agent, ``MESOS_CHECKPOINT=1``, …, plus the agent's own environment,
e.g. ``DOCKER_HOST``). Status updates are checkpointed before the executor gets its 202, sent to the
master until it takes them, and kept until the framework's acknowledgement comes back (framework →
master → agent → executor).

Checkpoints (JSON, replaced atomically) under the work dir: ``meta/agent.json`` (the agent id the
master gave, kept for life) and ``meta/frameworks/<framework>/executors/<executor>.json`` (FrameworkInfo,
ExecutorInfo, pid and its start time, sandbox, and each task: TaskInfo, state, latest status,
unacknowledged update). Sandboxes are ``frameworks/<framework>/executors/<executor>/runs/<run>``.

Recovery: an agent started again on the same work dir (after SIGKILL, SIGTERM or a crash) reloads
the checkpoints before serving. An executor whose process still runs is kept: pymesos executors
(``MESOS_CHECKPOINT``) reconnect to ``MESOS_AGENT_ENDPOINT`` and SUBSCRIBE again with their
unacknowledged tasks and updates; one that does not within ``EXECUTOR_REREGISTER_S`` is killed.
An executor that is gone fails its live tasks (TASK_FAILED, REASON_EXECUTOR_TERMINATED). Then the
agent re-registers with every task, so an agent restart loses no running task. Like a Mesos agent,
it leaves its executors running on SIGTERM; SIGUSR1 is the explicit shutdown (executors stopped,
the agent unregistered).
"""
import asyncio
import contextlib
import copy
import glob
import hashlib
import hmac
import json
import logging
import os
import secrets
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from spindle_mesos_embedded import protocol
from spindle_mesos_embedded.recordio import RecordReader
from spindle_mesos_embedded.v1 import TERMINAL, task_status

log = logging.getLogger("spindle.mesos.agent")
EXECUTOR_REREGISTER_S = 60.0  # > pymesos' longest reconnect backoff (15 s)
SHUTDOWN_GRACE_S = 5.0  # MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD
WATCH_INTERVAL_S = 0.5
RESOURCES_INTERVAL_S = 1.0
RETRY_S = 1.0


@dataclass
class AgentTask:
    info: dict[str, Any]
    state: str = "TASK_STAGING"
    status: dict[str, Any] | None = None  # the latest TaskStatus
    unacked: dict[str, Any] | None = None  # the latest update, until the framework acknowledges it
    sent: bool = False  # a LAUNCH of it went to the executor (or may have: recovered)

    @property
    def task_id(self) -> str:
        return self.info["task_id"]["value"]


@dataclass
class AgentExecutor:
    framework_id: str
    executor_id: str
    info: dict[str, Any]  # ExecutorInfo
    framework_info: dict[str, Any]
    tasks: dict[str, AgentTask] = field(default_factory=dict)
    sandbox: str = ""
    pid: int | None = None
    start_time: str | None = None  # of ``pid`` (/proc/<pid>/stat), so a reused pid is not mistaken for it
    process: subprocess.Popen | None = None  # when this agent process started it (and must reap it)
    events: asyncio.Queue | None = None  # its event stream while subscribed
    pending_kills: list[str] = field(default_factory=list)  # KILLs waiting for it to subscribe
    exited: bool = False
    shutting_down: bool = False
    awaiting_since: float | None = None  # recovered and not re-subscribed yet (monotonic)
    exit_reason: str = "REASON_EXECUTOR_TERMINATED"
    # Given an authentication token when started (every executor this agent version starts); one
    # recovered from an older agent's checkpoint was not, and is let in without one.
    authenticated: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.framework_id, self.executor_id


def process_start_time(pid: int) -> str | None:
    """The start time of a live (not zombie) process, None when there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]  # fields[0] is stat field 3; field 22: start


def runs(executor: AgentExecutor) -> bool:
    """The executor's process still runs (and is the one started: its pid was not reused)."""
    return bool(executor.pid and executor.start_time and process_start_time(executor.pid) == executor.start_time)


def kill_group(executor: AgentExecutor, sig: int) -> None:
    """Signal the executor's session (its process group), if it is still the process we started."""
    if runs(executor):
        assert executor.pid is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(executor.pid, sig)


def write_json(path: str, data: Any) -> None:
    """Replace ``path`` atomically: a SIGKILL leaves the old or the new checkpoint, never half of one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _value(holder: dict[str, Any] | None, name: str) -> str:
    return ((holder or {}).get(name) or {}).get("value", "")


class Agent:
    def __init__(self, master: str, host: str, port: int, hostname: str, work_dir: str,
                 load_resources: Callable[[], list[dict]], token: str = "", heartbeat_s: float | None = None):
        self.master = master  # host:port
        self.endpoint = f"{host}:{port}"  # what executors and the master are told
        self.port = port
        self.hostname = hostname
        self.work_dir = work_dir
        self.load_resources = load_resources
        self.token = token
        self.heartbeat_override = heartbeat_s
        self.heartbeat_s = heartbeat_s or 5.0  # until the master says
        self.agent_id = self._read_agent_id()
        self.executor_key = self._executor_key()
        self.master_id: str | None = None
        self.executors: dict[tuple[str, str], AgentExecutor] = {}
        self.total: list[dict] = []
        self.reported_total: list[dict] | None = None
        self.outbox: list[dict[str, Any]] = []  # calls the master must get (UPDATE, EXECUTOR_EXITED), in order
        self.wakeup = asyncio.Event()  # something was put in the outbox, or the agent (re)registered
        self.registered = asyncio.Event()
        self.stream_id: str | None = None
        self.client: httpx.AsyncClient | None = None
        self._link: asyncio.Task | None = None
        self._background: list[asyncio.Task] = []

    # --- checkpoints ------------------------------------------------------------------------------
    def _meta(self, *parts: str) -> str:
        return os.path.join(self.work_dir, "meta", *parts)

    def _executor_key(self) -> bytes:
        """The key executors' tokens are signed with (Mesos' ``--executor_secret_key``): made once,
        kept in the work dir (0600), so executors recovered after an agent restart still authenticate."""
        path = self._meta("executor-secret-key")
        try:
            with open(path, "rb") as f:
                key = f.read()
            if len(key) >= 32:
                return key
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(path), exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(f"{path}.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        os.replace(f"{path}.tmp", path)
        return key

    def executor_token(self, framework_id: str, executor_id: str) -> str:
        """What an executor presents on the executor API (``Authorization: Bearer …``), given to it as
        ``MESOS_EXECUTOR_AUTHENTICATION_TOKEN`` like a Mesos agent with ``--authenticate_http_executors``."""
        return hmac.new(self.executor_key, f"{framework_id}\n{executor_id}".encode(), hashlib.sha256).hexdigest()

    def executor_authorized(self, call: dict[str, Any], header: str | None) -> bool:
        """An executor API call carries its executor's token (unknown executors are refused later)."""
        executor = self.executors.get((_value(call, "framework_id"), _value(call, "executor_id")))
        if executor is None or not executor.authenticated:
            return True
        expected = f"Bearer {self.executor_token(executor.framework_id, executor.executor_id)}"
        return hmac.compare_digest((header or "").encode(), expected.encode())

    def _read_agent_id(self) -> str | None:
        try:
            with open(self._meta("agent.json")) as f:
                return json.load(f)["agent_id"]
        except (OSError, ValueError, KeyError):
            return None

    def _executor_path(self, executor: AgentExecutor) -> str:
        return self._meta("frameworks", executor.framework_id, "executors", f"{executor.executor_id}.json")

    def checkpoint(self, executor: AgentExecutor) -> None:
        write_json(self._executor_path(executor), {
            "framework_info": executor.framework_info, "executor_info": executor.info, "sandbox": executor.sandbox,
            "pid": executor.pid, "start_time": executor.start_time, "exited": executor.exited,
            "authenticated": executor.authenticated,
            "tasks": [{"task_info": t.info, "state": t.state, "status": t.status, "unacknowledged_update": t.unacked}
                      for t in executor.tasks.values()]})

    def _gc(self, executor: AgentExecutor) -> None:
        """Forget acknowledged terminal tasks, and an ended executor with nothing left to report."""
        for task_id, task in list(executor.tasks.items()):
            if task.state in TERMINAL and task.unacked is None:
                del executor.tasks[task_id]
        if executor.exited and not executor.tasks:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._executor_path(executor))
            self.executors.pop(executor.key, None)
        else:
            self.checkpoint(executor)

    def recover(self) -> None:
        """Rebuild executors and tasks from a previous run's checkpoints (before serving executors)."""
        for path in sorted(glob.glob(self._meta("frameworks", "*", "executors", "*.json"))):
            try:
                with open(path) as f:
                    data = json.load(f)
                executor = AgentExecutor(
                    data["framework_info"]["id"]["value"], data["executor_info"]["executor_id"]["value"],
                    data["executor_info"], data["framework_info"], sandbox=data.get("sandbox", ""),
                    pid=data.get("pid"), start_time=data.get("start_time"), exited=data.get("exited", False),
                    authenticated=data.get("authenticated", False))
                for entry in data.get("tasks", []):
                    task = AgentTask(entry["task_info"], entry.get("state", "TASK_STAGING"), entry.get("status"),
                                     entry.get("unacknowledged_update"), sent=True)
                    executor.tasks[task.task_id] = task
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("ignoring unreadable checkpoint %s: %s", path, exc)
                continue
            self.executors[executor.key] = executor  # unacknowledged updates go out with the SUBSCRIBE
            if executor.exited:
                continue
            if runs(executor):
                executor.awaiting_since = time.monotonic()
                log.info("recovered executor %s (pid %s); waiting for it to subscribe again", executor.executor_id,
                         executor.pid)
            else:
                self._executor_gone(executor, "executor is gone: it ended while the agent was down", None)
        log.info("recovered %d executors from %s", len(self.executors), self.work_dir)

    # --- master link ---------------------------------------------------------------------------------
    async def start(self) -> None:
        """Background work: the master link, heartbeats, the outbox, executors and resources."""
        self.client = httpx.AsyncClient(headers=protocol.bearer(self.token))
        await self._load_resources()  # registered with its resources, not empty at first
        loop = asyncio.get_running_loop()
        self._background = [loop.create_task(coroutine) for coroutine in (
            self._master_link(), self._heartbeats(), self._send_outbox(), self._watch_executors(),
            self._watch_resources())]

    def close_streams(self) -> None:
        """End the executors' event streams (the server stops): they reconnect to the next agent."""
        for executor in self.executors.values():
            if executor.events is not None:
                executor.events.put_nowait(None)
                executor.events = None

    async def stop(self) -> None:
        """The agent process goes away (SIGTERM): executors keep running for the next agent run."""
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self.close_streams()
        if self.client:
            await self.client.aclose()

    async def _call(self, kind: str, body: dict[str, Any]) -> httpx.Response:
        assert self.client is not None
        headers = {protocol.STREAM_HEADER: self.stream_id or ""}
        return await self.client.post(f"http://{self.master}{protocol.PATH}", headers=headers, timeout=10, json={
            "type": kind, "agent_id": {"value": self.agent_id}, kind.lower(): body})

    def _to_master(self, kind: str, body: dict[str, Any]) -> None:
        self.outbox.append({"type": kind, kind.lower(): body})
        self.wakeup.set()

    def _resubscribe(self, why: str) -> None:
        log.warning("re-subscribing with the master: %s", why)
        self.registered.clear()
        if self._link:
            self._link.cancel()

    async def _master_link(self) -> None:
        """Keep one SUBSCRIBE stream open; when it ends (master restarted, timed out, network),
        subscribe again with everything this agent runs."""
        backoff = RETRY_S / 2
        while True:
            self._link = asyncio.get_running_loop().create_task(self._subscribe_once())
            try:
                await asyncio.wait({self._link})
            finally:
                self._link.cancel()
            if not self._link.cancelled() and self._link.exception():
                log.warning("master link: %r", self._link.exception())
            if self.stream_id is not None:  # it had subscribed: retry soon
                backoff = RETRY_S / 2
            self.registered.clear()
            self.stream_id = None
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 4 * RETRY_S)

    async def _subscribe_once(self) -> None:
        assert self.client is not None
        body, included = self._subscribe_body()
        timeout = httpx.Timeout(10.0, read=max(3 * self.heartbeat_s, 5.0))  # silence that long: the master is gone
        async with self.client.stream("POST", f"http://{self.master}{protocol.PATH}", json=body,
                                      timeout=timeout) as response:
            if response.status_code != 200:
                log.warning("the master refused SUBSCRIBE: %s %s", response.status_code, (await response.aread())[:200])
                return
            stream_id = response.headers.get(protocol.STREAM_HEADER, "")
            reader = RecordReader()
            async for chunk in response.aiter_bytes():
                for event in reader.feed(chunk):
                    if event.get("type") == "SUBSCRIBED":
                        self._subscribed(event["subscribed"], stream_id, included, body["subscribe"]["resources"])
                    else:
                        self.on_master_event(event)
        log.warning("the master closed this agent's stream")

    def _subscribe_body(self) -> tuple[dict[str, Any], set[str]]:
        """SUBSCRIBE with every executor and task; also the uuids of the updates it carries."""
        tasks, included = [], set()
        for executor in self.executors.values():
            for task in executor.tasks.values():
                entry: dict[str, Any] = {"framework_id": {"value": executor.framework_id}, "task_info": task.info,
                                         "state": task.state}
                if task.status:
                    entry["status"] = task.status
                if task.unacked:
                    entry["unacknowledged_update"] = task.unacked
                    included.add(task.unacked.get("uuid", ""))
                tasks.append(entry)
        body: dict[str, Any] = {"type": "SUBSCRIBE", "subscribe": {
            "agent_info": {"hostname": self.hostname, "port": self.port}, "endpoint": self.endpoint,
            "resources": copy.deepcopy(self.total),
            "executors": [{"framework_id": {"value": e.framework_id}, "executor_info": e.info}
                          for e in self.executors.values() if not e.exited],
            "tasks": tasks}}
        if self.agent_id:
            body["agent_id"] = {"value": self.agent_id}
        return body, included

    def _subscribed(self, subscribed: dict[str, Any], stream_id: str, included: set[str],
                    resources: list[dict]) -> None:
        agent_id = subscribed["agent_id"]["value"]
        if agent_id != self.agent_id:
            self.agent_id = agent_id
            write_json(self._meta("agent.json"), {"agent_id": agent_id})
        if subscribed.get("master_id") != self.master_id:
            log.info("registered with master %s as agent %s", subscribed.get("master_id"), agent_id)
        self.master_id, self.stream_id, self.reported_total = subscribed.get("master_id"), stream_id, resources
        self.heartbeat_s = self.heartbeat_override or float(subscribed.get("heartbeat_interval_seconds", 5.0))
        # The SUBSCRIBE carried these updates already.
        self.outbox = [c for c in self.outbox
                       if not (c["type"] == "UPDATE" and c["update"]["status"].get("uuid") in included)]
        self.registered.set()
        self.wakeup.set()

    async def _heartbeats(self) -> None:
        while True:
            await self.registered.wait()
            await asyncio.sleep(self.heartbeat_s)
            if not self.registered.is_set():
                continue
            try:
                response = await self._call("HEARTBEAT", {})
            except httpx.HTTPError:
                continue  # the stream notices a master that is gone
            if response.status_code == 404:
                self._resubscribe("the master does not know this agent's stream (it restarted or timed us out)")

    async def _send_outbox(self) -> None:
        """Deliver the outbox in order; each call is retried until the master takes it."""
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            while self.outbox and self.registered.is_set():
                call = self.outbox[0]
                try:
                    response = await self._call(call["type"], call[call["type"].lower()])
                except httpx.HTTPError as exc:
                    log.warning("could not reach the master (%r); retrying", exc)
                    await asyncio.sleep(RETRY_S)
                    continue
                if response.status_code == 404:
                    self._resubscribe("the master does not know this agent's stream")
                    break
                if response.status_code >= 400:
                    log.error("the master rejected %s: %s %s", call["type"], response.status_code, response.text[:200])
                if self.outbox and self.outbox[0] is call:
                    self.outbox.pop(0)

    async def _load_resources(self) -> None:
        try:
            self.total = await asyncio.to_thread(self.load_resources)
        except Exception as exc:  # keep the last known inventory when its source is briefly away
            log.warning("could not load the agent's resources: %s", exc)

    async def _watch_resources(self) -> None:
        """Re-read the resources (so disk state changes show up) and report changes."""
        while True:
            await asyncio.sleep(RESOURCES_INTERVAL_S)
            await self._load_resources()
            if self.registered.is_set() and self.total != self.reported_total:
                total = copy.deepcopy(self.total)
                with contextlib.suppress(httpx.HTTPError):
                    response = await self._call("RESOURCES", {"resources": total})
                    if response.status_code == 202:
                        self.reported_total = total

    # --- what the master asks -------------------------------------------------------------------------
    def on_master_event(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type"))
        body = event.get(kind.lower()) or {}
        if kind == "RUN_TASK":
            self.run_task(body["framework_info"], body["task_info"])
        elif kind == "KILL_TASK":
            self.kill_task(_value(body, "framework_id"), _value(body, "task_id"))
        elif kind == "ACKNOWLEDGED":
            self.acknowledged(_value(body, "framework_id"), _value(body, "task_id"), body["uuid"])
        elif kind == "SHUTDOWN_FRAMEWORK":
            framework_id = _value(body, "framework_id")
            for executor in list(self.executors.values()):
                if executor.framework_id == framework_id:
                    self.shutdown_executor(executor)
        elif kind != "HEARTBEAT":
            log.warning("ignoring unknown master event %s", kind)

    def run_task(self, framework_info: dict[str, Any], info: dict[str, Any]) -> None:
        framework_id, executor_id = framework_info["id"]["value"], info["executor"]["executor_id"]["value"]
        task_id = info["task_id"]["value"]
        executor = self.executors.get((framework_id, executor_id))
        if executor and task_id in executor.tasks and executor.tasks[task_id].state not in TERMINAL:
            return  # already launched
        start = executor is None or executor.exited
        if executor is None:
            executor = self.executors[(framework_id, executor_id)] = AgentExecutor(
                framework_id, executor_id, info["executor"], framework_info)
        elif executor.exited:  # the same executor id again: a new run (earlier tasks may await acknowledgements)
            executor.info, executor.exited, executor.shutting_down = info["executor"], False, False
            executor.pid = executor.start_time = executor.process = None
            executor.exit_reason = "REASON_EXECUTOR_TERMINATED"
        executor.framework_info = framework_info
        task = executor.tasks[task_id] = AgentTask(info)
        self.checkpoint(executor)
        if start:
            self._start_executor(executor)
        elif executor.events is not None:
            executor.events.put_nowait({"type": "LAUNCH", "launch": {"task": info}})
            task.sent = True
        # else: it gets its TASK_STAGING tasks when it subscribes

    def _start_executor(self, executor: AgentExecutor) -> None:
        executor.sandbox = os.path.join(self.work_dir, "frameworks", executor.framework_id, "executors",
                                        executor.executor_id, "runs", uuid.uuid4().hex[:8])
        os.makedirs(executor.sandbox, exist_ok=True)
        env = {**os.environ, "MESOS_AGENT_ENDPOINT": self.endpoint, "MESOS_FRAMEWORK_ID": executor.framework_id,
               "MESOS_EXECUTOR_ID": executor.executor_id, "MESOS_DIRECTORY": executor.sandbox,
               "MESOS_SANDBOX": executor.sandbox, "MESOS_AGENT_ID": self.agent_id or "",
               "MESOS_SLAVE_ID": self.agent_id or "", "MESOS_SLAVE_PID": f"slave(1)@{self.endpoint}",
               "MESOS_CHECKPOINT": "1", "MESOS_RECOVERY_TIMEOUT": "15mins", "MESOS_HTTP_COMMAND_EXECUTOR": "0",
               "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": f"{SHUTDOWN_GRACE_S:g}secs"}
        for variable in executor.info.get("command", {}).get("environment", {}).get("variables", []):
            env[variable["name"]] = variable.get("value", "")
        env["MESOS_EXECUTOR_AUTHENTICATION_TOKEN"] = self.executor_token(executor.framework_id, executor.executor_id)
        executor.authenticated = True
        try:
            with open(os.path.join(executor.sandbox, "stdout"), "ab") as out, \
                    open(os.path.join(executor.sandbox, "stderr"), "ab") as err:
                # Popen, not asyncio's subprocess: asyncio kills the children it still tracks when its
                # loop closes, and executors must outlive this agent process.
                executor.process = subprocess.Popen(executor.info["command"]["value"], shell=True, env=env,
                                                    cwd=executor.sandbox, stdin=subprocess.DEVNULL, stdout=out,
                                                    stderr=err, start_new_session=True)
        except (OSError, KeyError) as exc:
            self._executor_gone(executor, f"could not start the executor: {exc!r}", None)
            return
        executor.pid, executor.start_time = executor.process.pid, process_start_time(executor.process.pid)
        self.checkpoint(executor)
        log.info("started executor %s of framework %s (pid %s)", executor.executor_id, executor.framework_id,
                 executor.pid)

    def _find(self, framework_id: str, task_id: str) -> tuple[AgentExecutor, AgentTask] | tuple[None, None]:
        for executor in self.executors.values():
            if executor.framework_id == framework_id and task_id in executor.tasks:
                return executor, executor.tasks[task_id]
        return None, None

    def kill_task(self, framework_id: str, task_id: str) -> None:
        executor, task = self._find(framework_id, task_id)
        if executor is None or task is None or task.state in TERMINAL:
            return
        if executor.events is not None:
            executor.events.put_nowait({"type": "KILL", "kill": {"task_id": {"value": task_id}}})
        elif task.state == "TASK_STAGING" and not task.sent:  # never given to its executor: it never runs
            self._update(executor, task, task_status(task_id, "TASK_KILLED", self.agent_id, executor.executor_id,
                                                     "killed before its executor started",
                                                     "REASON_TASK_KILLED_DURING_LAUNCH", "SOURCE_AGENT"))
        else:
            executor.pending_kills.append(task_id)  # recovered, about to re-subscribe

    def acknowledged(self, framework_id: str, task_id: str, uuid_: str) -> None:
        executor, task = self._find(framework_id, task_id)
        if executor is None or task is None or not task.unacked or task.unacked.get("uuid") != uuid_:
            return
        task.unacked = None
        if executor.events is not None:
            executor.events.put_nowait({"type": "ACKNOWLEDGED", "acknowledged": {
                "task_id": {"value": task_id}, "uuid": uuid_}})
        self._gc(executor)

    def shutdown_executor(self, executor: AgentExecutor) -> None:
        """SHUTDOWN (the executor stops its tasks and exits); signals after the grace period."""
        if executor.exited or executor.shutting_down:
            return
        executor.shutting_down = True
        if executor.events is not None:
            executor.events.put_nowait({"type": "SHUTDOWN"})
        else:
            kill_group(executor, signal.SIGTERM)
        loop = asyncio.get_running_loop()
        loop.call_later(SHUTDOWN_GRACE_S, self._signal_unless_exited, executor, signal.SIGTERM)
        loop.call_later(SHUTDOWN_GRACE_S + 2, self._signal_unless_exited, executor, signal.SIGKILL)

    @staticmethod
    def _signal_unless_exited(executor: AgentExecutor, sig: int) -> None:
        if not executor.exited:
            kill_group(executor, sig)

    async def shutdown(self) -> None:
        """The explicit shutdown (SIGUSR1): stop every executor, report, unregister."""
        log.info("shutting down: stopping %d executors", sum(not e.exited for e in self.executors.values()))
        for executor in list(self.executors.values()):
            self.shutdown_executor(executor)
        deadline = time.monotonic() + SHUTDOWN_GRACE_S + 3
        while any(not e.exited for e in self.executors.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        deadline = time.monotonic() + 3
        while self.outbox and self.registered.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        if self.registered.is_set():
            with contextlib.suppress(httpx.HTTPError):
                await self._call("UNREGISTER", {})

    # --- executors --------------------------------------------------------------------------------
    async def _watch_executors(self) -> None:
        """Notice executors that end: children are reaped, others (recovered) looked up in /proc."""
        while True:
            now = time.monotonic()
            for executor in list(self.executors.values()):
                if executor.exited or executor.pid is None:
                    continue
                if executor.process is not None:
                    code = executor.process.poll()
                    if code is not None:
                        self._executor_gone(executor, f"executor exited with code {code}", code)
                elif not runs(executor):
                    self._executor_gone(executor, "executor exited", None)
                elif executor.awaiting_since and now - executor.awaiting_since > EXECUTOR_REREGISTER_S:
                    log.warning("executor %s did not subscribe again within %g s: killing it", executor.executor_id,
                                EXECUTOR_REREGISTER_S)
                    executor.awaiting_since, executor.exit_reason = None, "REASON_EXECUTOR_REREGISTRATION_TIMEOUT"
                    kill_group(executor, signal.SIGKILL)
            await asyncio.sleep(WATCH_INTERVAL_S)

    def _executor_gone(self, executor: AgentExecutor, message: str, code: int | None) -> None:
        log.info("executor %s: %s", executor.executor_id, message)
        executor.exited, executor.process, executor.awaiting_since = True, None, None
        if executor.events is not None:
            executor.events.put_nowait(None)
            executor.events = None
        state = "TASK_KILLED" if executor.shutting_down else "TASK_FAILED"
        for task in executor.tasks.values():
            if task.state not in TERMINAL:
                self._update(executor, task, task_status(task.task_id, state, self.agent_id, executor.executor_id,
                                                         message, executor.exit_reason, "SOURCE_AGENT"))
        # Mesos reports the wait status: exit code << 8, or the signal; -1 when it is unknown
        # (an executor this agent process did not start).
        wait_status = -1 if code is None else (code << 8 if code >= 0 else -code)
        self._to_master("EXECUTOR_EXITED", {"framework_id": {"value": executor.framework_id},
                                            "executor_id": {"value": executor.executor_id}, "status": wait_status})
        self._gc(executor)

    def _update(self, executor: AgentExecutor, task: AgentTask, status: dict[str, Any]) -> None:
        """Record a status update (checkpointed first) and queue it for the master."""
        task.state, task.status = status["state"], status
        if status.get("uuid"):
            task.unacked = status
        self.checkpoint(executor)
        self._to_master("UPDATE", {"framework_id": {"value": executor.framework_id}, "status": status})

    # --- executor API (agent_app.py) --------------------------------------------------------------------
    def executor_subscribe(self, call: dict[str, Any]) -> asyncio.Queue | str:
        executor = self.executors.get((_value(call, "framework_id"), _value(call, "executor_id")))
        if executor is None or executor.exited:
            return "unknown executor"
        if executor.events is not None:  # an older connection of it is replaced
            executor.events.put_nowait(None)
        queue: asyncio.Queue = asyncio.Queue()
        executor.events = queue
        executor.awaiting_since = None
        queue.put_nowait({"type": "SUBSCRIBED", "subscribed": {
            "executor_info": executor.info, "framework_info": executor.framework_info,
            "agent_info": {"id": {"value": self.agent_id}, "hostname": self.hostname, "port": self.port},
            "container_id": {"value": executor.executor_id}}})
        subscribe = call.get("subscribe") or {}
        for update in subscribe.get("unacknowledged_updates", []):  # sent while this agent was away
            self._executor_status(executor, update.get("status") or {})
        # A task the executor already has is in its unacknowledged_tasks or past TASK_STAGING.
        known = {_value(task, "task_id") for task in subscribe.get("unacknowledged_tasks", [])}
        live = False
        for task in executor.tasks.values():
            live = live or task.state not in TERMINAL
            if task.state == "TASK_STAGING" and task.task_id not in known:
                queue.put_nowait({"type": "LAUNCH", "launch": {"task": task.info}})
            task.sent = task.sent or task.state == "TASK_STAGING"
        for task_id in executor.pending_kills:
            queue.put_nowait({"type": "KILL", "kill": {"task_id": {"value": task_id}}})
        executor.pending_kills.clear()
        if not live or executor.shutting_down:  # nothing to run (e.g. its tasks were killed meanwhile)
            executor.shutting_down = False
            self.shutdown_executor(executor)
        return queue

    def executor_disconnected(self, call: dict[str, Any], queue: asyncio.Queue) -> None:
        executor = self.executors.get((_value(call, "framework_id"), _value(call, "executor_id")))
        if executor is not None and executor.events is queue:
            executor.events = None

    def executor_update(self, call: dict[str, Any]) -> str | None:
        executor = self.executors.get((_value(call, "framework_id"), _value(call, "executor_id")))
        if executor is None:
            return "unknown executor"
        return self._executor_status(executor, (call.get("update") or {}).get("status") or {})

    def _executor_status(self, executor: AgentExecutor, status: dict[str, Any]) -> str | None:
        task = executor.tasks.get(_value(status, "task_id"))
        if task is None:
            return "unknown task"
        if status.get("uuid") and status["uuid"] in ((task.unacked or {}).get("uuid"), (task.status or {}).get("uuid")):
            return None  # a retry of an update this agent has
        status.setdefault("agent_id", {"value": self.agent_id})
        status.setdefault("executor_id", {"value": executor.executor_id})
        status.setdefault("source", "SOURCE_EXECUTOR")
        self._update(executor, task, status)
        return None
