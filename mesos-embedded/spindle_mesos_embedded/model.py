"""The master's bookkeeping: frameworks, tasks, executors (single agent)."""
import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

TERMINAL = frozenset({"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_DROPPED",
                      "TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN"})


@dataclass
class Framework:
    framework_id: str
    info: dict[str, Any]
    stream_id: str
    events: asyncio.Queue
    connected: bool = True
    suppressed: bool = False
    refuse_until: float = 0.0
    offer: dict[str, Any] | None = None  # the one outstanding offer
    disconnected_at: float | None = None

    @property
    def role(self) -> str:
        roles = self.info.get("roles") or [self.info.get("role", "*")]
        return roles[0]


@dataclass
class Task:
    info: dict[str, Any]
    framework_id: str
    executor_id: str
    state: str = "TASK_STAGING"
    status: dict[str, Any] = field(default_factory=dict)  # the latest TaskStatus
    unacked: dict[str, Any] | None = None  # status update waiting for the framework's ACKNOWLEDGE
    resent_at: float = field(default_factory=time.monotonic)

    @property
    def task_id(self) -> str:
        return self.info["task_id"]["value"]

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.info.get("resources", [])


@dataclass
class Executor:
    executor_id: str
    framework_id: str
    info: dict[str, Any]
    process: Any = None  # asyncio.subprocess.Process
    events: asyncio.Queue | None = None  # set while subscribed
    pending: list[dict[str, Any]] = field(default_factory=list)  # LAUNCH/KILL waiting for SUBSCRIBE
    sandbox: str = ""

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.info.get("resources", [])
