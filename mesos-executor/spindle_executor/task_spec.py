"""What a member's container must look like, as carried in the Mesos TaskInfo's ``data``: the
shared ``TaskData`` contract (JSON), validated here, plus the Mesos task id it runs for.

The scheduler builds it from the placement (disks, IP, cpuset) and the product manifest (image,
command, env, config files, health check); the executor only executes it.
"""
import json

from pydantic import ValidationError

from spindle_common.contracts import CLUSTER_LABEL, JOB_LABEL, MEMBER_LABEL, OWNED_LABEL, TASK_LABEL, TaskData

# Where a job's driver finds its files (read-only) and writes what it wants kept.
JOB_MOUNT, JOB_OUTPUT_MOUNT = "/job", "/job/output"


class InvalidTaskSpec(ValueError):
    """The task's data cannot be turned into a container (the message says which field)."""


class TaskContainer(TaskData):
    """The container of one Mesos task."""

    task_id: str
    # A job's driver: the folder on this node (in the task's sandbox) holding its files, with output/.
    job_dir: str | None = None

    @property
    def is_job(self) -> bool:
        return self.kind == "job"

    @property
    def container_name(self) -> str:
        return f"spindle-{self.member_id}"  # a job's driver: spindle-job-<job id>

    @property
    def labels(self) -> dict[str, str]:
        labels = {OWNED_LABEL: "true", TASK_LABEL: self.task_id, MEMBER_LABEL: self.member_id,
                  CLUSTER_LABEL: self.cluster_id}
        if self.is_job and self.job_id:
            labels[JOB_LABEL] = self.job_id
        return labels

    @property
    def mounts(self) -> list[tuple[str, str]]:
        """(host path, container path) of each dedicated disk: /data/1 … /data/N in order."""
        return [(d.host_path, f"/data/{i}") for i, d in enumerate(self.disks, start=1)]

    @property
    def binds(self) -> list[tuple[str, str, bool]]:
        """(host path, container path, read only) of everything bind-mounted: the disks; for a job's
        driver its files at /job (read-only) and /job/output (writable)."""
        binds = [(source, target, False) for source, target in self.mounts]
        if self.is_job:
            if not self.job_dir:
                raise InvalidTaskSpec("a job's driver needs its files' folder")
            binds += [(self.job_dir, JOB_MOUNT, True), (f"{self.job_dir}/output", JOB_OUTPUT_MOUNT, False)]
        return binds

    @property
    def working_dir(self) -> str | None:
        return JOB_MOUNT if self.is_job else None

    @property
    def nano_cpus(self) -> int:
        return int((self.cpu_limit or self.cpus) * 1e9)


def parse_task_spec(task_id: str, raw: bytes | str) -> TaskContainer:
    """Validate the task's JSON data and build its container spec."""
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidTaskSpec(f"task data is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidTaskSpec("task data must be a JSON object")
    if "job_dir" in data:  # the executor's own, set where it fetches the job's files
        raise InvalidTaskSpec("task data is not valid: job_dir: Extra inputs are not permitted")
    try:
        return TaskContainer(**{**data, "task_id": task_id})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'data'}: {e['msg']}" for e in exc.errors())
        raise InvalidTaskSpec(f"task data is not valid: {problems}") from None
