"""The Mesos side: a pymesos Executor that runs each launched task as a member container and
reports TASK_STARTING → TASK_RUNNING (health passed) / TASK_FAILED (with the reason) → TASK_KILLED.

A job's driver (task data ``kind`` "job") goes TASK_STARTING (its files fetched from the
orchestrator into the sandbox) → TASK_RUNNING (its container started; no health check) → its
result put back to the orchestrator (exit code, logs, /job/output) → TASK_FINISHED (exit 0),
TASK_FAILED (the message says the exit code) or TASK_KILLED; a kill stops the container, and what
there is still goes back before TASK_KILLED.

Once every task it was given has ended (its final update sent, its container removed), the
executor stops its driver and exits, so the agent frees the executor's own resources; the agent
keeps delivering the final updates until the framework acknowledges them."""
import base64
import logging
import os
import shutil
import threading

import docker
from docker.errors import APIError, NotFound
from pymesos import Executor

from spindle_common.contracts import OWNED_LABEL, TASK_LABEL
from spindle_executor.container import LaunchFailed, create_and_start, remove, wait_healthy
from spindle_executor.isolation import Isolation, IsolationFailed, isolate
from spindle_executor.job import (
    TOKEN_ENV,
    JobTransferFailed,
    fetch_files,
    job_end,
    log_tail,
    put_result,
    sandbox,
)
from spindle_executor.task_spec import InvalidTaskSpec, TaskContainer, parse_task_spec

log = logging.getLogger("spindle.executor")
# How long a SIGTERM'd executor waits for its drivers' results to go back before it exits.
JOB_SHUTDOWN_WAIT_S = 4.0


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
        self.jobs: dict[str, threading.Thread] = {}  # task id → the thread running a job's driver
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
        """The task's last update, sent once (a kill that comes after its end changes nothing)."""
        task_id = update["task_id"]["value"]
        with self.lock:
            if task_id in self.ended:
                return
            self.ended.add(task_id)
        driver.sendStatusUpdate(update)
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
        isolation: Isolation | None = None
        try:
            spec = parse_task_spec(task_id, base64.b64decode(data) if data else b"")
            if spec.is_job:
                with self.lock:
                    if task_id in self.ended:  # killed (and reported) before it began
                        return
                    self.jobs[task_id] = threading.current_thread()
                self._run_job(driver, spec)
                return
            container = create_and_start(self.client, spec)
            isolation = self._isolate(spec, container)
            log.info("task %s: container %s started", task_id, spec.container_name)
            wait_healthy(container, spec.health, spec.ip)
            log.info("task %s: healthy", task_id)
        except InvalidTaskSpec as exc:
            self._final(driver, status(task_id, "TASK_FAILED", str(exc), "REASON_TASK_INVALID"))
            return
        except LaunchFailed as exc:
            if isolation:
                isolation.stop()
            remove(self.client, task_id)
            self._final(driver, status(task_id, "TASK_FAILED", str(exc), "REASON_CONTAINER_LAUNCH_FAILED"))
            return
        with self.lock:
            if task_id in self.killed:  # killed while starting: killTask already reported
                if isolation:
                    isolation.stop()
                remove(self.client, task_id)
                return
        driver.sendStatusUpdate(status(task_id, "TASK_RUNNING", f"container {spec.container_name} healthy"))
        try:
            self._watch(driver, task_id, container)
        finally:
            if isolation:
                isolation.stop()

    def _isolate(self, spec: TaskContainer, container) -> Isolation | None:
        """The container's network isolation, installed (``LaunchFailed`` if it cannot be)."""
        try:
            return isolate(spec, container)
        except IsolationFailed as exc:
            raise LaunchFailed(f"the container's network isolation could not be installed: {exc}") from exc

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

    # --- a job's driver -----------------------------------------------------------------------
    def _killed(self, task_id: str) -> bool:
        with self.lock:
            return task_id in self.killed

    def _run_job(self, driver, spec: TaskContainer) -> None:
        """Fetch the files, run the driver to its end (or a kill), put the result back, then end the task."""
        task_id = spec.task_id
        folder = sandbox() / "job"
        token = os.environ.get(TOKEN_ENV, "")
        spec = spec.model_copy(update={"job_dir": str(folder)})
        try:
            files, limits = fetch_files(spec, folder, token)
            log.info("task %s: job %s's files fetched: %s", task_id, spec.job_id, ", ".join(files))
            if self._killed(task_id):
                raise LaunchFailed("killed before the driver started")
            container = create_and_start(self.client, spec)
            isolation = self._isolate(spec, container)
        except (JobTransferFailed, LaunchFailed, OSError) as exc:
            remove(self.client, task_id)
            if self._killed(task_id):
                self._final(driver, status(task_id, "TASK_KILLED", f"killed by the framework: {exc}"))
            else:
                self._final(driver, status(task_id, "TASK_FAILED", f"the driver could not start: {exc}",
                                           "REASON_CONTAINER_LAUNCH_FAILED"))
            return
        if self._killed(task_id):  # killed while it started (killTask found no container yet)
            self._stop(task_id)
        else:
            log.info("task %s: driver %s started", task_id, spec.container_name)
            driver.sendStatusUpdate(status(task_id, "TASK_RUNNING", f"driver {spec.container_name} running"))
        try:
            code = container.wait()["StatusCode"]
        except NotFound:
            code = None
        finally:
            if isolation:
                isolation.stop()
        stdout = stderr = ""
        try:  # streamed: only each log's end is ever held
            stdout = log_tail(container.logs(stdout=True, stderr=False, stream=True, follow=False), "stdout",
                              limits.log_bytes)
            stderr = log_tail(container.logs(stdout=False, stderr=True, stream=True, follow=False), "stderr",
                              limits.log_bytes)
        except (NotFound, APIError) as exc:
            log.warning("task %s: the driver's logs are gone: %s", task_id, exc)
        problem, note = put_result(spec, token, sandbox(), code, stdout, stderr, folder / "output", limits=limits)
        if problem:
            log.error("task %s: job %s's result did not go back: %s", task_id, spec.job_id, problem)
        else:  # the orchestrator keeps it now; the node keeps nothing of the job
            shutil.rmtree(folder, ignore_errors=True)
        remove(self.client, task_id)
        state, message, reason = job_end(code, self._killed(task_id), problem, note)
        log.info("task %s: %s %s", task_id, state, message)
        self._final(driver, status(task_id, state, message, reason))

    def _stop(self, task_id: str) -> None:
        """Kill a driver's container (not remove it: its logs and output still go back)."""
        for container in self.client.containers.list(
                filters={"label": [f"{TASK_LABEL}={task_id}", f"{OWNED_LABEL}=true"]}):
            try:
                container.kill()
            except (NotFound, APIError):  # it ended meanwhile
                pass

    # --- kills -------------------------------------------------------------------------------------
    def killTask(self, driver, task_id) -> None:  # noqa: N802
        value = task_id["value"]
        with self.lock:
            self.killed.add(value)
            job_running = value in self.jobs and value in self.working
        if job_running:  # its thread puts back what there is, then reports TASK_KILLED
            log.info("task %s: killing the driver", value)
            self._stop(value)
            return
        remove(self.client, value)
        self._final(driver, status(value, "TASK_KILLED", "killed by the framework"))

    def shutdown(self, driver) -> None:
        with self.lock:
            alive = self.launched - self.killed
        for task_id in alive:
            self.killTask(driver, {"value": task_id})
        with self.lock:
            drivers = [t for task_id, t in self.jobs.items() if task_id in self.working]
        for thread in drivers:  # let their results go back, briefly
            thread.join(JOB_SHUTDOWN_WAIT_S / len(drivers))
