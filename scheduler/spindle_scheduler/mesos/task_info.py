"""Building the Mesos ``TaskInfo`` (v1 JSON) that starts one member through Spindle's executor."""
import base64
import json
from typing import Any

from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer, scalar_like

# What the executor process itself needs besides its container (the container's limits are Docker's).
EXECUTOR_CPUS = 0.05
EXECUTOR_MEM_MB = 64


def task_info(offer: ParsedOffer, task_id: str, name: str, cpus: float, mem_mb: float,
              disks: list[OfferedDisk], executor_command: str, container_spec: dict[str, Any]) -> dict[str, Any]:
    """A TaskInfo with the member's cpus, mem and whole disks (as offered) and the container spec as data."""
    return {
        "name": name,
        "task_id": {"value": task_id},
        "agent_id": {"value": offer.agent_id},
        "resources": [scalar_like(offer.scalars["cpus"], cpus), scalar_like(offer.scalars["mem"], mem_mb),
                      *(disk.resource for disk in disks)],
        "executor": {
            "executor_id": {"value": task_id},
            "name": f"spindle executor for {name}",
            "command": {"value": executor_command, "shell": True},
            "resources": [scalar_like(offer.scalars["cpus"], EXECUTOR_CPUS),
                          scalar_like(offer.scalars["mem"], EXECUTOR_MEM_MB)],
        },
        "data": base64.b64encode(json.dumps(container_spec).encode()).decode(),
    }
