"""The master's bookkeeping: frameworks, agents and the tasks on them."""
import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

# What the master knows of an agent's link (Mesos: registered/disconnected/unreachable/recovered).
ACTIVE = "ACTIVE"  # its SUBSCRIBE stream is open: offered, gets launches
DISCONNECTED = "DISCONNECTED"  # stream gone, not yet timed out: not offered, its tasks are still RUNNING
UNREACHABLE = "UNREACHABLE"  # no heartbeat for the agent timeout: its tasks were reported UNREACHABLE/LOST
RECOVERED = "RECOVERED"  # in the registry of a master that restarted, not re-registered yet


@dataclass
class Framework:
    framework_id: str
    info: dict[str, Any]
    stream_id: str
    events: asyncio.Queue
    connected: bool = True
    suppressed: bool = False
    refuse_until: dict[str, float] = field(default_factory=dict)  # agent id → monotonic time (DECLINE filters)
    offers: dict[str, dict[str, Any]] = field(default_factory=dict)  # agent id → its one outstanding offer
    disconnected_at: float | None = None

    @property
    def role(self) -> str:
        roles = self.info.get("roles") or [self.info.get("role", "*")]
        return roles[0]

    @property
    def partition_aware(self) -> bool:
        return any(c.get("type") == "PARTITION_AWARE" for c in self.info.get("capabilities", []))


@dataclass
class Task:
    info: dict[str, Any]
    framework_id: str
    executor_id: str
    agent_id: str
    state: str = "TASK_STAGING"
    status: dict[str, Any] = field(default_factory=dict)  # the latest TaskStatus
    unacked: dict[str, Any] | None = None  # status update waiting for the framework's ACKNOWLEDGE
    acked_uuid: str | None = None  # the last update the framework acknowledged (an agent may report it again)
    resent_at: float = field(default_factory=time.monotonic)
    unreachable: bool = False  # its agent timed out; reported TASK_UNREACHABLE (or TASK_LOST)

    @property
    def task_id(self) -> str:
        return self.info["task_id"]["value"]

    @property
    def key(self) -> tuple[str, str]:
        return self.framework_id, self.task_id

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.info.get("resources", [])


@dataclass
class Agent:
    agent_id: str
    hostname: str
    endpoint: str = ""  # host:port it advertises (its executor API)
    total: list[dict[str, Any]] = field(default_factory=list)
    state: str = ACTIVE
    events: asyncio.Queue | None = None  # its SUBSCRIBE stream while ACTIVE
    stream_id: str = ""
    last_seen: float = field(default_factory=time.monotonic)
    registered_time: float = field(default_factory=time.time)
    unreachable_time: float | None = None
    # (framework id, executor id) → ExecutorInfo of each executor running there (their resources are in use)
    executors: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    pending_kills: set[tuple[str, str]] = field(default_factory=set)  # KILLs to deliver when it is back
    pending_shutdowns: set[str] = field(default_factory=set)  # frameworks to shut down there when it is back

    def send(self, event: dict[str, Any]) -> bool:
        """Put ``event`` on the agent's stream; False when it has none (the caller keeps it for later)."""
        if self.state != ACTIVE or self.events is None:
            return False
        self.events.put_nowait(event)
        return True
