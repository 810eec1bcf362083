"""Bodies of the public API that are not users.

Clusters, members and events are the shared contracts (``spindle_common.contracts``); the internal
services still send naive timestamps (UTC), so their answers are read with ``upstream_model``,
which makes every timestamp aware. The admin endpoints' bodies are disk-service's and
network-service's, typed here as those services define them; their timestamps are aware too.
Every timestamp leaves the API as RFC 3339 in UTC (``…Z``)."""
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from spindle_api.api.params import INT32_MAX, LINE_PATTERN, NODE_NAME_PATTERN, POOL_NAME_PATTERN, RACK_PATTERN
from spindle_api.timeseries import FigureName, NodeFigureName, Unit
from spindle_common.contracts import (
    ClusterPage,
    ClusterView,
    DiskClass,
    DiskView,
    EventView,
    Model,
    PortSpec,
    RestartPolicy,
    SecuritySpec,
    Timestamp,
    as_utc,
)
from spindle_common.errors import ApiError

_DATETIME = TypeAdapter(datetime)


def utc(value: Any) -> datetime:
    """A timestamp as an internal service sends it (ISO 8601, naive = UTC, or aware) made aware, in UTC."""
    return as_utc(_DATETIME.validate_python(value))


# Text that goes into a database: no control characters.
Line = Annotated[str, Field(pattern=LINE_PATTERN)]

M = TypeVar("M", bound=BaseModel)


def _with_utc(data: Any, keys: Iterable[str]) -> Any:
    if isinstance(data, dict):
        return {k: (utc(v) if k in keys and v is not None else v) for k, v in data.items()}
    return data


def upstream_model(model: type[M], data: Any, service: str = "orchestrator") -> M:
    """``data`` from an internal service as ``model`` (its timestamps made aware); a 502 when the
    service answered outside the contract."""
    try:
        if model is ClusterView:
            data = _with_utc(data, ("created_at", "updated_at"))
        elif model is EventView:
            data = _with_utc(data, ("at",))
        elif model is ClusterPage and isinstance(data, dict):
            data = {**data, "items": [_with_utc(c, ("created_at", "updated_at")) for c in data.get("items") or []]}
        return model.model_validate(data)
    except (ValidationError, ValueError) as exc:
        raise ApiError(502, "BAD_UPSTREAM_ANSWER", f"{service} answered outside its contract: {exc}"[:1000],
                       {"service": service}) from None


def upstream_list(model: type[M], data: Any, service: str = "orchestrator") -> list[M]:
    if not isinstance(data, list):
        raise ApiError(502, "BAD_UPSTREAM_ANSWER", f"{service} answered outside its contract: not a list",
                       {"service": service})
    return [upstream_model(model, item, service) for item in data]


# An event of a cluster's timeline as the events route returns the orchestrator's answer: the
# contract's EventView, its naive timestamp read as UTC.
ClusterEvent = Annotated[EventView, BeforeValidator(lambda data: _with_utc(data, ("at",)))]


# --- products -------------------------------------------------------------------------------------


class ProductImages(BaseModel):
    """Whether the product's images are built (deploy/up builds them in the background, one at a time)."""

    state: Literal["ready", "preparing", "failed"] = Field(
        description="ready: its images are in the registry; preparing: still being built (a launch is accepted "
                    "and waits for them, its timeline says so); failed: a build failed (a launch fails, IMAGE_FAILED)")
    image: str | None = Field(default=None, description="the image not ready yet")
    image_state: Literal["queued", "building", "pushing", "failed"] | None = None
    step: int | None = Field(default=None, description="the Dockerfile step being built, of steps")
    steps: int | None = None
    message: str | None = Field(default=None,
                                description="one line, e.g. image spindle/kafka:4.0 building (step 3 of 12)")


class ProductSummary(BaseModel):
    name: str
    version: str
    description: str
    roles: list[str]
    path: str = Field(description="where to GET the manifest and POST a launch")
    images: ProductImages


class ProductCatalog(BaseModel):
    products: list[ProductSummary]


class RoleCount(Model):
    default: int = Field(ge=0)
    min: int = Field(ge=0)
    max: int = Field(ge=0)
    when: dict[str, int] | None = Field(default=None, description="a boolean setting → the count while it is on "
                                        "(HDFS's ha: two NameNodes); such a role takes no count option")


class RoleHealth(Model):
    command: list[str] | None = None
    tcp_port: int | None = Field(default=None, ge=1, le=65535)
    timeout_seconds: float | None = Field(default=None, gt=0)


class RoleDrain(Model):
    by: str = Field(description="the role whose first member drains it (its files rendered with `leaving`, "
                                "then its reload), or `self`: each leaving member runs `start`, then `done`")
    start: list[str] | None = Field(default=None, description="`by: self` only: run in each leaving member to "
                                                              "start its drain; a non-zero exit refuses its removal")
    done: list[str] = Field(description="run in that member: exit 0 once the leaving members are drained "
                                        "(`by: self`: 3 when the drain failed and the member stays)")
    timeout_s: int | None = Field(default=None, ge=10, le=86400, description="then they go anyway")


class RoleManifest(Model):
    count: RoleCount
    cpus: float = Field(gt=0)
    mem_mb: int = Field(ge=16)
    disks: dict[DiskClass, int] | None = None
    ports: list[PortSpec] | None = None
    health: RoleHealth | None = None
    command: list[str] | None = None
    restart: RestartPolicy | None = Field(default=None, description="replace: a member that dies while running is "
                                          "launched again on fresh disks with the same floating IP; in_place: "
                                          "on its node with its disks, data and all (replaced on fresh disks "
                                          "only when its node is lost)")
    env: dict[str, str] | None = None
    files: dict[str, str] | None = None
    reload: list[str] | None = Field(default=None, description="run in a running member after a resize put its "
                                     "re-rendered files in (its new peers)")
    drain: RoleDrain | None = Field(default=None, description="how a member is drained before a resize removes it")
    security: SecuritySpec | None = Field(default=None, description="the member's container hardening")
    replicas: bool | None = Field(default=None, description="its members hold copies of each other's data: "
                                  "placement.replicas_apart defaults to it (one per node, over racks first)")


class JobsManifest(Model):
    image: str
    command: list[str]
    env: dict[str, str] | None = None
    cpus: float | None = Field(default=None, gt=0)
    mem_mb: int | None = Field(default=None, ge=64)
    security: SecuritySpec | None = Field(default=None, description="the driver's container hardening")


class KerberosManifest(Model):
    when: str | None = Field(default=None, description="a template: the keys are made while it renders True")
    principals: list[str] = Field(description="templates: the principals whose keys each member gets")
    job_principals: list[str] | None = Field(default=None, description="templates: those a job's driver gets")


class Binding(Model):
    product: str = Field(description="the product of the clusters this binding takes")
    description: str


class Manifest(Model):
    """A product version as the catalog holds it (``catalog/<product>/<version>/manifest.json``)."""

    name: str
    version: str
    description: str
    image: str
    roles: dict[str, RoleManifest]
    options_schema: dict[str, Any] = Field(description="JSON Schema (2020-12) of the launch options")
    jobs: JobsManifest | None = Field(default=None, description="how a job's driver runs")
    kerberos: KerberosManifest | None = Field(
        default=None, description="the Kerberos principals (the platform's KDC, realm SPINDLE) its members and "
                                  "job drivers get keys of")
    templates: dict[str, str] | None = Field(default=None, description="templates the product's other templates "
                                             "share (each seen as shared[name])")
    bindings: dict[str, Binding] | None = Field(
        default=None, description="other clusters of yours it can use, by name: launch with "
                                  '"bind": {name: cluster id}')


class PlacedMember(Model):
    member_id: str
    node: str
    disks: list[str]
    cpus: list[int]


class NodeReason(Model):
    node: str
    constraint: str
    message: str


class UnplacedMember(Model):
    member_id: str
    nodes: list[NodeReason] = Field(description="why each node cannot take the member")


class Plan(Model):
    """A placement dry-run: where each member would go, or why it cannot be placed."""

    placeable: bool
    summary: str
    members: list[PlacedMember]
    reasons: list[UnplacedMember]


# --- jobs -----------------------------------------------------------------------------------------

JobState = Literal["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"]


class Job(Model):
    id: str
    cluster_id: str
    owner: str
    state: JobState
    main: str
    args: list[str]
    files: list[str]
    message: str
    exit_code: int | None
    ip: str | None
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None
    stdout: str | None = Field(default=None, description="the driver's stdout (only when one job is shown)")
    stderr: str | None = Field(default=None, description="the driver's stderr (only when one job is shown)")


# --- admin: nodes and disks (disk-service) --------------------------------------------------------



Rack = Annotated[str, Field(pattern=RACK_PATTERN, examples=["rack-1"])]
RACK_DESCRIPTION = "the node's failure domain (placement spreads replicas over racks); null: none, the node itself"


class NodeCreate(Model):
    name: str = Field(pattern=NODE_NAME_PATTERN, examples=["node-1"])
    address: str = Field(min_length=1, max_length=255, pattern=LINE_PATTERN, examples=["10.0.0.5"])
    disk_root: str = Field(min_length=2, max_length=4096, pattern=r"^/[^\x00-\x1f\x7f]+$",
                           description="where the node mounts its Spindle disks", examples=["/var/lib/spindle/disks"])
    cpus: float | None = Field(default=None, gt=0, le=100_000, allow_inf_nan=False)
    mem_mb: int | None = Field(default=None, gt=0, le=INT32_MAX)
    rack: Rack | None = Field(default=None, description=RACK_DESCRIPTION)


class NodeUpdate(Model):
    """A registered node's rack: set it, or null to clear it. Nothing else of a node changes."""

    rack: Rack | None = Field(description=RACK_DESCRIPTION)


class Node(Model):
    id: int
    name: str
    address: str
    disk_root: str
    cpus: float | None
    mem_mb: int | None
    created_at: Timestamp
    last_seen_at: Timestamp | None = Field(
        default=None, description="the node agent's last heartbeat (none: no node agent reports for it)")
    rack: str | None = Field(description=RACK_DESCRIPTION)
    failure_domain: str = Field(description="the node's rack, or its name when it has none", examples=["rack-1"])


class LsblkDevice(BaseModel):
    """One device of ``lsblk --json -b -o NAME,PATH,SERIAL,SIZE,ROTA,TRAN,TYPE,MOUNTPOINT,FSTYPE,LABEL,MODEL``
    (other columns lsblk adds are dropped)."""

    model_config = ConfigDict(extra="ignore")
    name: Line | None = Field(default=None, max_length=255)
    path: Line | None = Field(default=None, max_length=4096)
    serial: Line | None = Field(default=None, max_length=255)
    size: int | None = Field(default=None, ge=0, le=2**63 - 1)
    rota: bool | Literal[0, 1, "0", "1", "true", "false"] | None = None
    tran: Line | None = Field(default=None, max_length=32)
    type: Line | None = Field(default=None, max_length=64)
    mountpoint: Line | None = Field(default=None, max_length=4096)
    mountpoints: list[Annotated[str, Field(pattern=LINE_PATTERN, max_length=4096)] | None] | None = Field(
        default=None, max_length=64)
    fstype: Line | None = Field(default=None, max_length=32)
    label: Line | None = Field(default=None, max_length=64)
    model: Line | None = Field(default=None, max_length=255)
    children: list["LsblkDevice"] | None = Field(default=None, max_length=256)


class Lsblk(BaseModel):
    model_config = ConfigDict(extra="ignore")
    blockdevices: list[LsblkDevice] = Field(max_length=1024)


class DiscoverRequest(Model):
    """``lsblk``: the node's ``lsblk --json`` output (required unless the node is disk-service's machine).
    ``classes``: class per disk, keyed by filesystem label, mount point, device path or serial."""

    lsblk: Lsblk | None = None
    classes: dict[Annotated[str, Field(pattern=LINE_PATTERN, max_length=4096)], DiskClass] = {}


Disk = DiskView  # as disk-service answers it


class DiskPage(Model):
    items: list[Disk]
    next_page_token: str | None


class IgnoredDevice(Model):
    device_path: str
    reason: str


class DiscoverResult(Model):
    registered: list[Disk]
    updated: list[Disk]
    ignored: list[IgnoredDevice]


LabelText = Annotated[str, Field(max_length=1024, pattern=LINE_PATTERN)]


class DiskUpdate(Model):
    disk_class: DiskClass | None = None
    labels: dict[LabelText, LabelText] | None = Field(default=None, max_length=256,
                                                      description="replaces every label of the disk")


class StateChange(Model):
    reason: str | None = Field(default=None, max_length=1024, pattern=LINE_PATTERN)


class DiskTransition(Model):
    id: int
    disk_id: int
    from_state: str | None
    to_state: str
    actor: str
    owner: str | None
    reason: str | None
    at: Timestamp


class ScalarValue(Model):
    value: float


class MountSource(Model):
    root: str


class DiskSource(Model):
    type: Literal["MOUNT"]
    mount: MountSource


class ResourceDisk(Model):
    source: DiskSource


class Reservation(Model):
    type: Literal["STATIC"]
    role: str


class MesosResource(Model):
    """One Mesos agent resource (mesos.proto ``Resource``): cpus, mem, or a whole disk as a MOUNT disk."""

    name: Literal["cpus", "mem", "disk"]
    type: Literal["SCALAR"]
    scalar: ScalarValue
    disk: ResourceDisk | None = None
    reservations: list[Reservation] | None = None


# --- admin: IP pools (network-service) ------------------------------------------------------------

IPV4_PATTERN = r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$"
# A pool is a /16 … /29: larger ones would hold millions of floating addresses.
POOL_CIDR_PATTERN = IPV4_PATTERN[:-1] + r"/(1[6-9]|2[0-9])$"
SUBNET_PATTERN = IPV4_PATTERN[:-1] + r"/(1[6-9]|2[0-9]|3[0-2])$"


class PoolCreate(Model):
    name: str = Field(pattern=POOL_NAME_PATTERN, examples=["default"])
    cidr: str = Field(pattern=POOL_CIDR_PATTERN, description="an IPv4 network, /16 to /29",
                      examples=["172.31.200.0/24"])
    gateway: str | None = Field(default=None, pattern=IPV4_PATTERN, description="default: the first address")
    floating_cidr: str | None = Field(default=None, pattern=SUBNET_PATTERN, description="default: upper half of cidr")
    auto_cidr: str | None = Field(default=None, pattern=SUBNET_PATTERN, description="Docker's automatic range; "
                                  "default: lower half")
    driver: Literal["bridge", "macvlan"] = "bridge"
    parent: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,14}$",
                               description="macvlan parent interface (e.g. a veth)")


class IpPool(Model):
    name: str
    cidr: str
    gateway: str
    floating_cidr: str
    auto_cidr: str
    driver: Literal["bridge", "macvlan"]
    parent: str | None
    docker_network: str
    floating_total: int
    floating_used: int


class MetricSeries(Model):
    """One figure of one member (of one of its dedicated disks for ``disk_used``/``disk_size``) over
    time: ``points`` are [unix seconds, value] pairs, oldest first."""

    figure: FigureName
    unit: Unit
    member: str
    disk: str | None = None
    points: list[tuple[float, float]]


class ClusterMetrics(Model):
    cluster_id: str
    start: Timestamp
    end: Timestamp
    step_seconds: int
    series: list[MetricSeries]


class NodeSeries(Model):
    """One figure of one node (disks: of one class in one state) over time; ``points`` as above."""

    figure: NodeFigureName
    unit: Unit
    node: str
    disk_class: str | None = None
    state: str | None = None
    points: list[tuple[float, float]]


class NodeMetrics(Model):
    start: Timestamp
    end: Timestamp
    step_seconds: int
    series: list[NodeSeries]
