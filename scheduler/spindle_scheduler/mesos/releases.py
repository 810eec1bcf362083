"""The releases ended tasks owe, done durably: an outbox in the task store.

A task entering a terminal state records ``release_owed`` in the same transaction (``TaskStore.set``);
its release (container removed, then its member's disks freed and wiped by disk-service) is tried at
once and, while a service is away, again with backoff (1, 2, 4 … s, at most ``max_retry_s``) until
disk-service confirms — by this process, or by the next one after a restart: the worker starts with
every release still owed. disk-service's ``POST /allocations/release`` with ``owners`` is idempotent
(an owner holding nothing is fine), so a release repeated after a crash changes nothing.
"""
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore

log = logging.getLogger("spindle.releases")


def backoff_s(failures: int, first_s: float, max_s: float) -> float:
    """Seconds to wait after ``failures`` failed attempts in a row (0: try now)."""
    if failures <= 0:
        return 0.0
    return min(max_s, first_s * 2 ** (failures - 1))


class Releases:
    """Owed releases and the one worker that does them (``run``); ``settle`` does one now."""

    def __init__(self, store: TaskStore, release: Callable[[Any], None], first_retry_s: float = 1.0,
                 max_retry_s: float = 15.0):
        self.store = store
        self.release = release  # frees what one ended task held: its container, then its disks
        self.first_retry_s, self.max_retry_s = first_retry_s, max_retry_s
        self.lock = threading.Lock()  # one release at a time, so a task is never released twice at once
        self.wakeup = threading.Event()
        self.failures: dict[str, int] = {}  # task id → failed attempts in a row, in this process
        self.next_try: dict[str, float] = {}  # task id → monotonic time of its next attempt
        self.clock: Callable[[], float] = time.monotonic
        self.released = 0  # releases confirmed by this process
        self.failed_attempts = 0

    def settle(self, task: Task, wait: bool = True) -> bool:
        """Release what ``task`` owes now; True once nothing is owed any more. Never raises: a failure
        is recorded and the worker tries again later. ``wait=False`` (the driver's event thread): if
        another release is under way, leave this one to the worker rather than block."""
        if not self.lock.acquire(blocking=wait):
            self.wakeup.set()
            return False
        try:
            return self._settle_locked(task.task_id)
        finally:
            self.lock.release()

    def _settle_locked(self, task_id: str) -> bool:
        current = self.store.get(task_id)
        if current is None or not current.release_owed:  # done already, or relaunched after its release
            self._forget(task_id)
            return True
        try:
            self.release(current)
        except Exception as exc:
            failures = self.failures.get(task_id, 0) + 1
            self.failures[task_id] = failures
            self.failed_attempts += 1
            delay = backoff_s(failures, self.first_retry_s, self.max_retry_s)
            self.next_try[task_id] = self.clock() + delay
            attempts = self.store.release_failed(task_id, f"{type(exc).__name__}: {exc}")
            log.warning("releasing %s (member %s) failed (attempt %d): %s; retrying in %.0f s", task_id,
                        current.member_id, attempts, exc, delay)
            return False
        if self.store.release_done(task_id):
            self.released += 1
            log.info("released what %s (member %s) held", task_id, current.member_id)
        self._forget(task_id)
        return True

    def _forget(self, task_id: str) -> None:
        self.failures.pop(task_id, None)
        self.next_try.pop(task_id, None)

    def run_once(self) -> float | None:
        """Settle every owed release that is due; seconds until the next one is (None: none owed)."""
        owed = self.store.owed_releases()
        now = self.clock()
        for task in owed:
            if self.next_try.get(task.task_id, 0.0) <= now:
                self.settle(task)
        left = [self.next_try.get(t.task_id, 0.0) for t in self.store.owed_releases()]
        return max(0.0, min(left) - self.clock()) if left else None

    def run(self, stop: threading.Event, idle_s: float = 5.0) -> None:
        """The worker: from the start (a restart resumes what the last process left owed) until stopped."""
        while not stop.is_set():
            self.wakeup.clear()  # a task that ends from now on wakes the wait below
            try:
                wait = self.run_once()
            except Exception:  # the task store is away: look again soon
                log.exception("reading owed releases failed")
                wait = self.first_retry_s
            self.wakeup.wait(idle_s if wait is None else max(min(wait, idle_s), 0.05))

    def counts(self) -> dict[str, int]:
        owed = self.store.owed_releases()
        return {"owed": len(owed), "retrying": sum(1 for t in owed if t.release_attempts),
                "released": self.released, "failed_attempts": self.failed_attempts}
