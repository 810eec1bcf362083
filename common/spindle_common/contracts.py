"""The words every Spindle service shares, defined once: disk classes, cluster/member/task states,
container labels, and the typed shapes that cross service boundaries (a cluster's launch spec,
a member's container, a task as the scheduler reports it, a cluster as users see it).

Services import these; nothing else defines them again. Timestamps are timezone-aware (UTC) and
serialise as RFC 3339."""
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, field_validator, model_validator

# --- words ----------------------------------------------------------------------------------------


class DiskClass(StrEnum):
    HDD = "hdd"
    SSD = "ssd"
    NVME = "nvme"


DISK_CLASSES: tuple[str, ...] = tuple(c.value for c in DiskClass)


class DiskState(StrEnum):
    """A whole disk's state in disk-service: free ─allocate→ allocated ─release→ wiping ─wiped→ free;
    retired; failed (quarantined until an admin repairs it)."""

    FREE = "free"
    ALLOCATED = "allocated"
    WIPING = "wiping"
    FAILED = "failed"
    RETIRED = "retired"


DISK_STATES: tuple[str, ...] = tuple(s.value for s in DiskState)


class ClusterState(StrEnum):
    PENDING = "PENDING"  # accepted, nothing held yet
    QUEUED = "QUEUED"  # waiting for resources (the user asked to wait)
    SCHEDULING = "SCHEDULING"  # members handed to the scheduler, waiting for offers that fit
    DEPLOYING = "DEPLOYING"  # placed; containers starting
    CONFIGURING = "CONFIGURING"  # every member healthy; service discovery being confirmed
    RUNNING = "RUNNING"
    DEGRADED = "DEGRADED"  # was RUNNING; a member died and is being replaced
    RESIZING = "RESIZING"  # was RUNNING; members are being added or removed (the owner changed a count)
    STOPPING = "STOPPING"  # the owner asked to stop it: its containers are being stopped
    STOPPED = "STOPPED"  # no container runs; its members keep their disks and floating IPs
    FAILED = "FAILED"
    DESTROYING = "DESTROYING"
    DESTROYED = "DESTROYED"


# States in which a cluster is served (or stopped) and nothing waits on a timer: streams end here.
SETTLED_STATES = frozenset({ClusterState.RUNNING, ClusterState.STOPPED, ClusterState.FAILED, ClusterState.DESTROYED})


class TaskState(StrEnum):
    """Mesos task states (mesos.proto ``TaskState``)."""

    TASK_STAGING = "TASK_STAGING"
    TASK_STARTING = "TASK_STARTING"
    TASK_RUNNING = "TASK_RUNNING"
    TASK_KILLING = "TASK_KILLING"
    TASK_FINISHED = "TASK_FINISHED"
    TASK_FAILED = "TASK_FAILED"
    TASK_KILLED = "TASK_KILLED"
    TASK_ERROR = "TASK_ERROR"
    TASK_LOST = "TASK_LOST"
    TASK_DROPPED = "TASK_DROPPED"
    TASK_UNREACHABLE = "TASK_UNREACHABLE"
    TASK_GONE = "TASK_GONE"
    TASK_GONE_BY_OPERATOR = "TASK_GONE_BY_OPERATOR"
    TASK_UNKNOWN = "TASK_UNKNOWN"


# After these a task holds nothing any more.
TERMINAL_TASK_STATES = frozenset({
    TaskState.TASK_FINISHED, TaskState.TASK_FAILED, TaskState.TASK_KILLED, TaskState.TASK_ERROR,
    TaskState.TASK_LOST, TaskState.TASK_DROPPED, TaskState.TASK_GONE, TaskState.TASK_GONE_BY_OPERATOR,
    TaskState.TASK_UNKNOWN})
# Ends that mean the member died (not that it finished or was killed on purpose).
DIED_TASK_STATES = TERMINAL_TASK_STATES - {TaskState.TASK_FINISHED, TaskState.TASK_KILLED}


class MemberState(StrEnum):
    """A member as users see it: not launched yet, resources held and launch sent, then its task's state."""

    PENDING = "PENDING"
    LAUNCHING = "LAUNCHING"
    TASK_STAGING = "TASK_STAGING"
    TASK_STARTING = "TASK_STARTING"
    TASK_RUNNING = "TASK_RUNNING"
    TASK_KILLING = "TASK_KILLING"
    TASK_FINISHED = "TASK_FINISHED"
    TASK_FAILED = "TASK_FAILED"
    TASK_KILLED = "TASK_KILLED"
    TASK_ERROR = "TASK_ERROR"
    TASK_LOST = "TASK_LOST"
    TASK_DROPPED = "TASK_DROPPED"
    TASK_UNREACHABLE = "TASK_UNREACHABLE"
    TASK_GONE = "TASK_GONE"
    TASK_GONE_BY_OPERATOR = "TASK_GONE_BY_OPERATOR"
    TASK_UNKNOWN = "TASK_UNKNOWN"


class RestartPolicy(StrEnum):
    NEVER = "never"
    REPLACE = "replace"  # a member that dies while running is launched again on fresh disks, same IP
    # A member whose container ends while running starts again on its node with its disks, data and
    # all (same IP); one whose node is lost is replaced on fresh disks elsewhere, as REPLACE.
    IN_PLACE = "in_place"


# The policies under which a member that dies while running is launched again (at most
# MAX_REPLACEMENTS times, the orchestrator's reconciler counts).
RELAUNCHED = frozenset({RestartPolicy.REPLACE, RestartPolicy.IN_PLACE})


class Strategy(StrEnum):
    SPREAD = "spread"
    PACK = "pack"


STRATEGIES: tuple[str, ...] = tuple(s.value for s in Strategy)


# Docker labels on everything Spindle starts (containers of members and of job drivers).
OWNED_LABEL = "io.spindle.owned"
TASK_LABEL = "io.spindle.task-id"
MEMBER_LABEL = "io.spindle.member"
CLUSTER_LABEL = "io.spindle.cluster"
JOB_LABEL = "io.spindle.job"

# Names: cluster and member ids (also Mesos task id prefixes and DNS labels).
NAME_PATTERN = r"^[a-z0-9][a-z0-9.-]{0,127}$"


def utcnow() -> datetime:
    """Now, timezone-aware (UTC)."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """A database timestamp (stored without zone, in UTC) as an aware one."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _rfc3339(value: datetime) -> str:
    return as_utc(value).isoformat().replace("+00:00", "Z")


# A timestamp, aware in UTC (a naive one, as the databases keep them, is read as UTC), that
# serialises as RFC 3339 (``2026-11-23T19:52:47.123456Z``).
Timestamp = Annotated[datetime, AfterValidator(as_utc), PlainSerializer(_rfc3339, return_type=str, when_used="json")]


class Model(BaseModel):
    """Shared base: unknown fields are refused, so drift between services shows at once."""

    model_config = ConfigDict(extra="forbid")


# --- a cluster's launch, as the orchestrator hands it to the scheduler ---------------------------


class HealthCheckSpec(Model):
    command: list[str] | None = None
    tcp_port: int | None = Field(default=None, ge=1, le=65535)
    timeout_seconds: float = Field(default=120, gt=0, le=3600)
    interval_seconds: float | None = Field(default=None, gt=0, le=60,
                                           description="default: 0.1 s for a TCP port, 0.5 s for a command")

    @model_validator(mode="after")
    def _something_to_check(self) -> "HealthCheckSpec":
        if not (self.command or self.tcp_port):
            raise ValueError("a health check needs 'command' or 'tcp_port'")
        return self


# Hardened containers: every member and job driver runs with every capability dropped but those its
# product's role asks for (only these may be asked for), no-new-privileges, a pids limit and capped
# json-file logs (the executor applies them; ``docs/ARCHITECTURE.md``, "Containers").
ALLOWED_CAPABILITIES: tuple[str, ...] = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "NET_BIND_SERVICE",
                                         "SETGID", "SETUID")
DEFAULT_PIDS_LIMIT = 512
MAX_PIDS_LIMIT = 4096
USER_PATTERN = r"^[0-9]{1,10}(:[0-9]{1,10})?$"  # numeric uid[:gid]: no name the image may lack


class SecuritySpec(Model):
    """How locked down a member's (or a job driver's) container is, from the manifest's ``security``."""

    user: str | None = Field(default=None, pattern=USER_PATTERN,
                             description="uid[:gid] inside the container (default: the image's user)")
    cap_add: list[Literal[ALLOWED_CAPABILITIES]] = Field(  # type: ignore[valid-type]
        default=[], description="capabilities kept (every other one is dropped)")
    read_only_root: bool = Field(default=False, description="read-only root filesystem (a tmpfs at /tmp)")
    pids_limit: int = Field(default=DEFAULT_PIDS_LIMIT, ge=16, le=MAX_PIDS_LIMIT)

    @property
    def uid_gid(self) -> tuple[int, int] | None:
        """The numeric user and group (the gid defaults to the uid), None for the image's own."""
        if self.user is None:
            return None
        uid, _, gid = self.user.partition(":")
        return int(uid), int(gid or uid)


class IsolationSpec(Model):
    """Where a container's executor learns its cluster's peers, to keep every other tenant out of
    the container's network namespace (``spindle_common.isolation``; ``docs/ARCHITECTURE.md``,
    "Network isolation")."""

    peers_url: str = Field(min_length=1, max_length=500,
                           description="the orchestrator's GET /internal/clusters/{id}/peers for this cluster")


class ContainerSpec(Model):
    """What a member's (or a job driver's) container runs, rendered from the product manifest."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # env values rendered as numbers

    image: str = Field(min_length=1)
    command: list[str] | None = None
    env: dict[str, str] = {}
    files: dict[str, str] = Field(default={}, description="container path → content")
    health: HealthCheckSpec | None = None
    hostname: str | None = None
    security: SecuritySpec = SecuritySpec()
    isolation: IsolationSpec | None = None


# What a scheduler task runs: a cluster member, or a job's driver (member id ``job-<job id>``).
TaskKind = Literal["member", "job"]


class DiskMount(Model):
    host_path: str = Field(min_length=1, description="the dedicated disk's mount point on the node")


class TaskData(ContainerSpec):
    """What a member's executor gets in its TaskInfo's ``data``: the container, and where the
    scheduler placed it (cpus, cpuset, whole disks mounted at /data/1..N, the floating IP).

    ``kind`` "job": the task is a job's driver. Its executor downloads the job's files from the
    orchestrator (``orchestrator_url``, ``job_id``) into the sandbox, mounts them at ``/job`` (and
    ``/job/output`` writable), runs the driver to its end and uploads the result before the task
    ends. A driver holds ``cpus`` in offers and may use up to ``cpu_limit``."""

    cluster_id: str = Field(min_length=1)
    member_id: str = Field(min_length=1)
    cpus: float = Field(gt=0)
    mem_mb: int = Field(ge=6, description="Docker refuses less than 6 MiB")
    cpuset: str | None = None
    disks: list[DiskMount] = []
    network: str | None = None
    ip: str | None = None
    kind: TaskKind = "member"
    job_id: str | None = Field(default=None, pattern=NAME_PATTERN)
    orchestrator_url: str | None = Field(default=None, min_length=1, max_length=500,
                                         description="where a job's executor gets its files and puts its result")
    cpu_limit: float | None = Field(default=None, gt=0, description="the container's cpu cap (default: cpus)")

    @model_validator(mode="after")
    def _network_and_ip(self) -> "TaskData":
        if bool(self.network) != bool(self.ip):
            raise ValueError("'network' and 'ip' go together")
        return self

    @model_validator(mode="after")
    def _job_fields(self) -> "TaskData":
        if self.kind == "job" and not (self.job_id and self.orchestrator_url):
            raise ValueError("a job's task needs 'job_id' and 'orchestrator_url'")
        if self.kind == "job" and self.disks:
            raise ValueError("a job's task holds no disks")
        return self


class IpLease(Model):
    """A floating IP the orchestrator holds for a member (network-service's allocation)."""

    address: str
    docker_network: str
    dns_name: str | None = None


# A node as placement names it (the Mesos agent's hostname).
NodeName = Annotated[str, Field(min_length=1, max_length=255)]
RoleName = Annotated[str, Field(min_length=1, max_length=64)]


class DiskPin(Model):
    """Where a member's kept disks are: it is placed on that node, on exactly those disks (``/data/N``
    in this order), instead of being given fresh ones — a stopped cluster started again, or a
    dataset attached to a new cluster (``adopt_from``: who holds the disks in disk-service until the
    member takes them over)."""

    node: NodeName
    mount_points: list[str] = Field(min_length=1, max_length=64)
    adopt_from: str | None = Field(default=None, min_length=1, max_length=255)


class MemberSpec(Model):
    member_id: str = Field(pattern=NAME_PATTERN)
    role: str = Field(min_length=1, max_length=64)
    cpus: float = Field(gt=0, le=512)
    mem_mb: int = Field(ge=16, le=4 * 1024 * 1024)
    disks: dict[DiskClass, int] = {}
    cpuset: int | None = Field(default=None, ge=1, description="dedicated cpus on one NUMA node")
    restart: RestartPolicy = RestartPolicy.NEVER
    container: ContainerSpec
    lease: IpLease | None = Field(default=None, description="the member's floating IP, held by the orchestrator")
    pin: DiskPin | None = Field(default=None, description="kept disks it is placed on (else fresh ones)")

    @field_validator("disks")
    @classmethod
    def _counts(cls, disks: dict[DiskClass, int]) -> dict[DiskClass, int]:
        for disk_class, count in disks.items():
            if not 0 <= count <= 64:
                raise ValueError(f"disk count for {disk_class} must be 0–64")
        return disks


class ClusterSpec(Model):
    """A launch: every member of one cluster, placed all or nothing, as its ``placement`` option says
    (``placement_fields`` turns a launch's options into the four placement fields)."""

    cluster_id: str = Field(pattern=NAME_PATTERN)
    strategy: Strategy = Strategy.SPREAD
    preferred_hosts: list[NodeName] = Field(default=[], max_length=256, description="nodes tried first")
    anti_affinity_roles: list[RoleName] = Field(default=[], max_length=64,
                                                description="roles whose members must each be on a different node")
    excluded_hosts: list[NodeName] = Field(default=[], max_length=256, description="nodes never used")
    replica_roles: list[RoleName] = Field(default=[], max_length=64,
                                          description="roles whose members hold copies of each other's data: one "
                                                      "per node and over racks first, unless the platform has "
                                                      "one node")
    members: list[MemberSpec] = Field(min_length=1, max_length=1000)
    origin: str | None = Field(default=None, max_length=200,
                               description="who launched it (an orchestrator instance), to find its clusters again")

    @staticmethod
    def placement_fields(options: dict[str, Any]) -> dict[str, Any]:
        """The placement fields from a launch's (resolved) options: ``options["placement"]`` with its
        user-facing names (``strategy``, ``anti_affinity``, ``replicas_apart``, ``preferred_nodes``,
        ``excluded_nodes``); what is absent (e.g. a cluster recorded before the option existed) takes
        the defaults."""
        placement = options.get("placement") or {}
        return {"strategy": placement.get("strategy", Strategy.SPREAD.value),
                "anti_affinity_roles": list(placement.get("anti_affinity", [])),
                "replica_roles": list(placement.get("replicas_apart", [])),
                "preferred_hosts": list(placement.get("preferred_nodes", [])),
                "excluded_hosts": list(placement.get("excluded_nodes", []))}


# --- disks as disk-service keeps them --------------------------------------------------------------


class DiskView(Model):
    """A whole disk of a node, as disk-service answers it (admins see it through the api-server)."""

    id: int
    node: str
    device_path: str
    serial: str | None
    model: str | None
    transport: str | None
    size_bytes: int
    rotational: bool
    mount_point: str
    fs_type: str | None
    fs_label: str | None
    disk_class: DiskClass
    labels: dict[str, str]
    state: DiskState
    state_reason: str | None
    owner: str | None
    updated_at: Timestamp


# --- what the scheduler reports ------------------------------------------------------------------


class HeldDisk(Model):
    """A whole disk a member holds, as the member sees it and as disk-service knows it."""

    container_path: str
    mount_point: str
    id: int | None = None
    device_path: str | None = None
    disk_class: DiskClass | None = None
    size_bytes: int | None = None


class TaskView(Model):
    """One member's (or job driver's) Mesos task as the scheduler knows it."""

    task_id: str
    cluster_id: str
    member_id: str
    state: MemberState
    message: str
    hostname: str | None = None
    disks: list[HeldDisk] = []
    ip: str | None = None
    launches: int = Field(1, description="how many Mesos tasks this member has had (1 + relaunches)")
    kill_requested: bool = False
    disks_kept: bool = Field(default=False, description="an ended task whose disks stay held (a stopped member)")
    pinned_to: str | None = Field(default=None, description="the node a waiting task may only be placed on: its "
                                  "kept disks are there (a started member, or one restarted in place)")
    updated_at: Timestamp | None = None
    kind: TaskKind = Field(default="member", description="a cluster member, or a job's driver (member_id job-<job id>)")


# --- clusters as users see them ------------------------------------------------------------------


class PortSpec(Model):
    name: str
    port: int = Field(ge=1, le=65535)
    protocol: Literal["tcp", "udp"] = "tcp"
    ui: bool = Field(False, description="a web page people open in a browser")


class MemberView(Model):
    member_id: str
    role: str
    state: MemberState
    message: str = ""
    node: str | None = None
    ip: str | None = None
    dns_name: str | None = None
    disks: list[HeldDisk] = []
    ports: list[PortSpec] = []
    replacements: int = Field(0, description="how often Spindle launched this member again after it died")


class Notice(Model):
    code: str = Field(description="machine-readable: BINDING_GONE")
    message: str
    at: Timestamp


class ClusterView(Model):
    id: str
    owner: str = Field(description="the owner's username")
    owner_id: str | None = Field(default=None, description="the owner's stable id, never reused (a user re-created "
                                 "under the same name is another owner); null for a cluster whose owner was deleted "
                                 "before ids existed")
    product: str
    version: str
    state: ClusterState
    reason_code: str | None = None
    reason: str | None = None
    options: dict[str, object]
    created_at: Timestamp
    updated_at: Timestamp
    members: list[MemberView] = []
    notices: list[Notice] = Field(default=[], description="what the owner should know that the state does not "
                                    "say, e.g. BINDING_GONE: a cluster this one binds was deleted with force")


DATASET_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
DatasetState = Literal["KEEPING", "KEPT", "ATTACHED", "RELEASED", "RECLAIMED"]


class DatasetDisk(Model):
    id: int
    mount_point: str
    disk_class: DiskClass
    size_bytes: int | None = None


class DatasetPart(Model):
    """One member's disks in a dataset: a launch's member of the same role and index takes them over."""

    role: str
    index: int
    node: str
    disks: list[DatasetDisk]


class DatasetView(Model):
    """Disks a deleted cluster's members kept, with their data (``DELETE …?keep_disks=true``)."""

    id: str
    name: str
    owner: str
    owner_id: str
    product: str
    version: str
    source_cluster: str = Field(description="the cluster whose delete kept them")
    state: DatasetState = Field(description="KEEPING: a deleted cluster's disks are being handed to it; KEPT: "
                                "held for you (counts against your disk quota); ATTACHED: a cluster of yours "
                                "uses them; RELEASED/RECLAIMED: wiped")
    attached_to: str | None = Field(description="the cluster using them (ATTACHED)")
    disks: dict[str, int] = Field(description="whole disks per class")
    size_bytes: int
    members: list[DatasetPart]
    created_at: Timestamp
    updated_at: Timestamp


class ClusterPage(Model):
    items: list[ClusterView]
    next_page_token: str | None = None


class EventView(Model):
    """One step of a cluster's timeline (``member_id`` set when it is about one member)."""

    seq: int
    at: Timestamp
    member_id: str | None = None
    step: str
    state: str
    message: str


# --- quotas: what a user may hold, and holds (the orchestrator keeps and enforces them) ----------

# Largest amount a quota may name (PostgreSQL integer columns; JSON clients' safe integers).
QUOTA_MAX = 2**31 - 1
QUOTA_RESOURCES: tuple[str, ...] = ("clusters", "cpus", "mem_mb", "disks", "floating_ips")


class QuotaAmounts(Model):
    """Resources counted against a quota: clusters not given back, their members' cpus, memory
    (MiB) and dedicated disks per class, and floating IPs (one per member, one per job driver)."""

    clusters: int
    cpus: float
    mem_mb: int
    disks: dict[str, int] = Field(description="per disk class (every class named)")
    floating_ips: int


class QuotaView(Model):
    """A user's limits and what their clusters and jobs hold now."""

    owner: str
    limits: QuotaAmounts
    usage: QuotaAmounts
    defaults: list[str] = Field(description="the limits that are the platform's defaults (not set for this user)")


QuotaCount = Annotated[int, Field(ge=0, le=QUOTA_MAX)]


class QuotaUpdate(Model):
    """A user's quota as an admin sets it (the whole quota): a limit left out or null is the
    platform's default; a disk class left out of ``disks`` too."""

    clusters: QuotaCount | None = None
    cpus: Annotated[float, Field(ge=0, le=QUOTA_MAX, allow_inf_nan=False)] | None = None
    mem_mb: QuotaCount | None = None
    disks: dict[DiskClass, QuotaCount] | None = None
    floating_ips: QuotaCount | None = None
