"""The running platform's Mesos master, through its operator API, with the scheduler's credential
from spindle.env (the master refuses operator calls without one)."""
import os
from pathlib import Path

import httpx

STATE_DIR = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
MESOS_OPERATOR = "http://127.0.0.1:5050/api/v1"


def mesos_credential() -> tuple[str, str] | None:
    """(principal, secret) as deploy/up wrote them; None when the platform has none."""
    settings = dict(line.split("=", 1) for line in (STATE_DIR / "spindle.env").read_text().splitlines() if "=" in line)
    principal = settings.get("SPINDLE_MESOS_PRINCIPAL", "")
    return (principal, settings.get("SPINDLE_MESOS_SECRET", "")) if principal else None


def mesos_operator(call: str) -> dict:
    """The answer to operator call ``call`` (GET_TASKS, GET_AGENTS…)."""
    return httpx.post(MESOS_OPERATOR, json={"type": call}, auth=mesos_credential(),
                      timeout=10).raise_for_status().json()
