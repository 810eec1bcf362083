"""The Mesos side: a pymesos Executor that runs each launched task as a member container and
reports TASK_STARTING → TASK_RUNNING (health passed) / TASK_FAILED (with the reason) → TASK_KILLED.

Once every task it was given has ended (its final update sent, its container removed), the
executor stops its driver and exits, so the agent frees the executor's own resources; the agent
keeps delivering the final updates until the framework acknowledges them."""
import base64
import logging
import threading

import docker
from pymesos import Executor

from spindle_executor.container import LaunchFailed, create_and_start, remove, wait_healthy
from spindle_executor.task_spec import InvalidTaskSpec, parse_task_spec

log = logging.getLogger("spindle.executor")


def status(task_id: str, state: str, message: str = "", reason: str | None = None) -> dict:
    """A Mesos TaskStatus (v1 JSON) for ``task_id``."""
    update = {"task_id": {"value": task_id}, "state": state}
    if message:
        update["message"] = message
    if reason:
        update["reason"] = reason
    return update


class DockerExecutor(Executor):
    """Runs every task of this executor as a Docker container (one member = one container)."""

    def __init__(self, client: docker.DockerClient | None = None):
        self.client = client or docker.from_env()
        self.launched: set[str] = set()
        self.killed: set[str] = set()
        self.ended: set[str] = set()  # final status sent
        self.working: set[str] = set()  # a thread still starts or watches the task's container
        self.lock = threading.Lock()

    def launchTask(self, driver, task) -> None:  # noqa: N802 (pymesos API names)
        task_id = task["task_id"]["value"]
        log.info("task %s: launched", task_id)
        with self.lock:
            self.launched.add(task_id)
            self.working.add(task_id)
        threading.Thread(target=self._run, args=(driver, task_id, task.get("data", "")), daemon=True,
                         name=f"task-{task_id}").start()

    def _final(self, driver, update: dict) -> None:
        driver.sendStatusUpdate(update)
        with self.lock:
            self.ended.add(update["task_id"]["value"])
        self._exit_when_idle(driver)

    def _exit_when_idle(self, driver) -> None:
        with self.lock:
            idle = not self.working and self.launched <= self.ended
        if idle:
            log.info("every task ended; the executor exits")
            driver.stop()

    def _run(self, driver, task_id: str, data: str) -> None:
        try:
            self._start_and_watch(driver, task_id, data)
        finally:
            with self.lock:
                self.working.discard(task_id)
            self._exit_when_idle(driver)

    def _start_and_watch(self, driver, task_id: str, data: str) -> None:
        driver.sendStatusUpdate(status(task_id, "TASK_STARTING"))
        try:
            spec = parse_task_spec(task_id, base64.b64decode(data) if data else b"")
            container = create_and_start(self.client, spec)
            log.info("task %s: container %s started", task_id, spec.container_name)
            wait_healthy(container, spec.health, spec.ip)
            log.info("task %s: healthy", task_id)
        except InvalidTaskSpec as exc:
            self._final(driver, status(task_id, "TASK_FAILED", str(exc), "REASON_TASK_INVALID"))
            return
        except LaunchFailed as exc:
            remove(self.client, task_id)
            self._final(driver, status(task_id, "TASK_FAILED", str(exc), "REASON_CONTAINER_LAUNCH_FAILED"))
            return
        with self.lock:
            if task_id in self.killed:  # killed while starting: killTask already reported
                remove(self.client, task_id)
                return
        driver.sendStatusUpdate(status(task_id, "TASK_RUNNING", f"container {spec.container_name} healthy"))
        self._watch(driver, task_id, container)

    def _watch(self, driver, task_id: str, container) -> None:
        """Report the container's own end (crash or exit) unless Spindle killed it."""
        try:
            code = container.wait()["StatusCode"]
        except docker.errors.NotFound:
            code = None
        with self.lock:
            if task_id in self.killed:
                return
        logs = container.logs(tail=5).decode(errors="replace").strip() if code is not None else ""
        remove(self.client, task_id)
        if code == 0:
            self._final(driver, status(task_id, "TASK_FINISHED"))
        else:
            self._final(driver, status(task_id, "TASK_FAILED", f"container exited with code {code}: {logs}",
                                       "REASON_COMMAND_EXECUTOR_FAILED"))

    def killTask(self, driver, task_id) -> None:  # noqa: N802
        value = task_id["value"]
        with self.lock:
            self.killed.add(value)
        remove(self.client, value)
        self._final(driver, status(value, "TASK_KILLED", "killed by the framework"))

    def shutdown(self, driver) -> None:
        with self.lock:
            alive = self.launched - self.killed
        for task_id in alive:
            self.killTask(driver, {"value": task_id})
