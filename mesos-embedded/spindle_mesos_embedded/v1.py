"""Mesos v1 JSON objects both sides build: ids, TaskStatus, TimeInfo (proto field names, enums as
strings, bytes base64)."""
import base64
import time
import uuid
from typing import Any

TERMINAL = frozenset({"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_DROPPED",
                      "TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN"})


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


def time_info(seconds: float) -> dict[str, int]:
    return {"nanoseconds": int(seconds * 1e9)}


def task_status(task_id: str, state: str, agent_id: str | None, executor_id: str | None = None, message: str = "",
                reason: str | None = None, source: str = "SOURCE_MASTER", with_uuid: bool = True,
                unreachable_time: float | None = None) -> dict[str, Any]:
    """A TaskStatus. Updates that must be acknowledged carry a ``uuid``; reconciliation answers
    (and other informational ones) do not, as in Mesos."""
    status: dict[str, Any] = {"task_id": {"value": task_id}, "state": state, "source": source,
                              "timestamp": time.time()}
    if agent_id:
        status["agent_id"] = {"value": agent_id}
    if executor_id:
        status["executor_id"] = {"value": executor_id}
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    if unreachable_time is not None:
        status["unreachable_time"] = time_info(unreachable_time)
    if with_uuid:
        status["uuid"] = base64.b64encode(uuid.uuid4().bytes).decode()
    return status
