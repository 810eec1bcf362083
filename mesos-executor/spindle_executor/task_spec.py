"""What a member's container must look like, as carried in the Mesos TaskInfo's ``data``: the
shared ``TaskData`` contract (JSON), validated here, plus the Mesos task id it runs for.

The scheduler builds it from the placement (disks, IP, cpuset) and the product manifest (image,
command, env, config files, health check); the executor only executes it.
"""
import json

from pydantic import ValidationError

from spindle_common.contracts import CLUSTER_LABEL, MEMBER_LABEL, OWNED_LABEL, TASK_LABEL, TaskData


class InvalidTaskSpec(ValueError):
    """The task's data cannot be turned into a container (the message says which field)."""


class TaskContainer(TaskData):
    """The container of one Mesos task."""

    task_id: str

    @property
    def container_name(self) -> str:
        return f"spindle-{self.member_id}"

    @property
    def labels(self) -> dict[str, str]:
        return {OWNED_LABEL: "true", TASK_LABEL: self.task_id, MEMBER_LABEL: self.member_id,
                CLUSTER_LABEL: self.cluster_id}

    @property
    def mounts(self) -> list[tuple[str, str]]:
        """(host path, container path) of each dedicated disk: /data/1 … /data/N in order."""
        return [(d.host_path, f"/data/{i}") for i, d in enumerate(self.disks, start=1)]


def parse_task_spec(task_id: str, raw: bytes | str) -> TaskContainer:
    """Validate the task's JSON data and build its container spec."""
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidTaskSpec(f"task data is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidTaskSpec("task data must be a JSON object")
    try:
        return TaskContainer(**{**data, "task_id": task_id})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'data'}: {e['msg']}" for e in exc.errors())
        raise InvalidTaskSpec(f"task data is not valid: {problems}") from None
