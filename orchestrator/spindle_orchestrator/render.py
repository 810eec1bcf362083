"""Product configuration: a manifest + launch options + the members' IPs → each member's launch
request (resources and the rendered container: command, env, config files, health check).

Templates are Jinja2 strings (sandboxed, undefined names are errors) seeing ``cluster``,
``member`` (id, name, role, index, ip, data_dirs, disk_dirs, cpus, mem_mb), ``peers`` (role →
members), ``settings`` (the product-specific options) and ``bound`` (each of the product's bindings →
the bound cluster's ``cluster`` and ``peers``, or None: ``bindings.context``).

``shared`` holds the manifest's ``templates``, each rendered (on use) in the same context: a
configuration file several roles and the jobs have in common is written once.

``member.data_dirs`` lists every dedicated disk's folder (``/data/1..N``); ``member.disk_dirs`` the
same by class, classes in sorted order (hdd, nvme, ssd): the order the scheduler hands disks out in.
"""
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from spindle_common.catalog import member_requests
from spindle_orchestrator.kerberos import REALM

_jinja = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


class RenderError(ValueError):
    """A template of the product could not be rendered (the message names role and field)."""


@dataclass(frozen=True)
class PlannedMember:
    member_id: str
    name: str  # role-index, the member's DNS label inside its cluster
    role: str
    index: int
    cpus: float
    mem_mb: int
    disks: dict[str, int]


def planned_of(member: Any) -> PlannedMember:
    """A recorded member (``models.Member``) as planned: its name, role, index and the resources its
    launch asked for."""
    spec = member.spec or {}
    return PlannedMember(member_id=member.member_id, name=f"{member.role}-{member.index}", role=member.role,
                         index=member.index, cpus=float(spec.get("cpus", 0)), mem_mb=int(spec.get("mem_mb", 0)),
                         disks={c: int(n) for c, n in (spec.get("disks") or {}).items()})


def plan_members(cluster_id: str, manifest: dict[str, Any], options: dict[str, Any]) -> list[PlannedMember]:
    """How many members of each role, with which resources (the catalog's rule), named in the cluster."""
    return [PlannedMember(member_id=f"{cluster_id}-{m['role']}-{m['index']}", name=f"{m['role']}-{m['index']}",
                          role=m["role"], index=m["index"], cpus=m["cpus"], mem_mb=m["mem_mb"], disks=m["disks"])
            for m in member_requests(manifest, options)]


def render_value(value: Any, context: dict[str, Any], where: str) -> Any:
    if isinstance(value, str):
        try:
            return _jinja.from_string(value).render(context)
        except TemplateError as exc:
            raise RenderError(f"{where}: {exc}") from exc
    if isinstance(value, list):
        return [render_value(v, context, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: render_value(v, context, f"{where}.{k}") for k, v in value.items()}
    return value


class Shared(Mapping[str, str]):
    """A manifest's shared ``templates``, each rendered in ``context`` when a template reads it."""

    def __init__(self, templates: Mapping[str, str], context: dict[str, Any]) -> None:
        self._templates, self._context = templates, context

    def __getitem__(self, name: str) -> str:
        return render_value(self._templates[name], self._context, f"template {name}")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._templates)

    def __len__(self) -> int:
        return len(self._templates)


def with_shared(context: dict[str, Any], manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    """``context`` with ``shared``: the manifest's shared templates rendered in it."""
    context["shared"] = Shared((manifest or {}).get("templates", {}), context)
    return context


def disk_dirs(disks: Mapping[str, int]) -> dict[str, list[str]]:
    """The member's disk folders by class: ``/data/1..N`` in sorted class order (the scheduler's)."""
    dirs: dict[str, list[str]] = {}
    index = 1
    for disk_class, count in sorted(disks.items()):
        if count:
            dirs[disk_class] = [f"/data/{i}" for i in range(index, index + count)]
            index += count
    return dirs


def _peer(member: PlannedMember, ips: Mapping[str, str | None]) -> dict[str, Any]:
    return {"id": member.member_id, "name": member.name, "ip": ips.get(member.member_id)}


def platform_context(jvm_options: str = "", kdc: str = "") -> dict[str, Any]:
    """What every template sees of the platform (``platform``): the JVM options its admin adds to every
    JVM a product starts (``Settings.product_jvm_options``; the products' manifests put them in), and
    its Kerberos KDC's address as members reach it (empty: no KDC) and realm."""
    return {"jvm_options": jvm_options, "kdc": kdc, "realm": REALM}


def principals(manifest: Mapping[str, Any], context: dict[str, Any], clusters: Sequence[str],
               field: str = "principals") -> list[str]:
    """The Kerberos principals (names without the realm) whose keys one member or job driver gets: the
    manifest's ``kerberos.principals`` rendered in a member's context (``member_context``), or its
    ``kerberos.job_principals`` in a job driver's (``driver_context``), when ``kerberos.when`` renders
    ``True``; none without a ``kerberos`` part or a KDC. Every instance must be one of ``clusters`` (the
    cluster's own id and those of the clusters it binds), end in ``.<one of them>``, or be the member's
    own IP (an HTTP service principal, named after the address its callers use: ``ip_principals``):
    keys of one cluster's principals never reach another's members, and its principals are found again
    when it is destroyed (``cluster_principal_patterns`` and its members' IPs)."""
    if not uses_kerberos(manifest, context):
        return []
    spec = manifest["kerberos"]
    names = [n for n in render_value(spec.get(field, []), context, f"kerberos {field}") if n]  # "": not this one
    own_ip = (context.get("member") or {}).get("ip")
    for name in names:
        instance = name.partition("/")[2]
        if not (any(instance == c or instance.endswith(f".{c}") for c in clusters) or (own_ip and instance == own_ip)):
            raise RenderError(f"kerberos principals: {name!r} is not one of the cluster's own")
    return names


def uses_kerberos(manifest: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    """The cluster's members and jobs get Kerberos keys: the platform has a KDC and the manifest's
    ``kerberos.when`` renders ``True`` (it may read only ``settings``, ``cluster`` and ``platform``:
    the peers' filter asks it with those alone, ``api/routes/peers.py``)."""
    spec = manifest.get("kerberos")
    if not spec or not context["platform"].get("kdc"):
        return False
    return render_value(spec.get("when", "True"), dict(context), "kerberos when").strip() == "True"


def ip_principals(names: Sequence[str]) -> list[str]:
    """Those of ``names`` whose instance is an IP address: an address passes from member to member and
    cluster to cluster, so such a principal gets fresh keys whenever a member is made with it."""
    return [name for name in names if _is_ip(name.partition("/")[2])]


def _is_ip(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def cluster_principal_patterns(cluster_id: str, ips: Sequence[str] = ()) -> list[str]:
    """kadmin globs of every principal ``principals`` can make for a cluster whose members held ``ips``."""
    return [f"*/{cluster_id}", f"*/*.{cluster_id}", *(f"*/{ip}" for ip in ips)]


def render_member(cluster: dict[str, Any], manifest: dict[str, Any], options: dict[str, Any],
                  member: PlannedMember, ips: Mapping[str, str | None],
                  all_members: list[PlannedMember], bound: dict[str, Any] | None = None,
                  leaving: Sequence[PlannedMember] = (), retired: Sequence[Mapping[str, Any]] = (),
                  platform: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The container part of one member's launch request, every template rendered. ``leaving``:
    members a resize is draining (templates see them by role in ``leaving``, e.g. HDFS's exclude file);
    ``retired``: members it drained and removed (``clusters.retired``), by role in ``retired``."""
    role = manifest["roles"][member.role]
    context = member_context(cluster, manifest, options, member, ips, all_members, bound, leaving, retired, platform)
    where = f"role {member.role}"
    return {
        "image": manifest["image"],
        "command": render_value(role.get("command"), context, f"{where} command"),
        "env": render_value(role.get("env", {}), context, f"{where} env"),
        "files": render_value(role.get("files", {}), context, f"{where} files"),
        "health": role.get("health"),
        "hostname": member.name,
        "security": role.get("security", {}),
    }


def member_principals(cluster: dict[str, Any], manifest: dict[str, Any], options: dict[str, Any],
                      member: PlannedMember, ips: Mapping[str, str | None], all_members: list[PlannedMember],
                      bound: dict[str, Any] | None = None, platform: Mapping[str, Any] | None = None) -> list[str]:
    """The Kerberos principals whose keys one member gets (``principals``)."""
    context = member_context(cluster, manifest, options, member, ips, all_members, bound, platform=platform)
    return principals(manifest, context, [cluster["id"], *bound_ids(bound)])


def bound_ids(bound: Mapping[str, Any] | None) -> list[str]:
    """The ids of the clusters a cluster binds (``bindings.context``: name → its cluster and peers, or None)."""
    return [b["cluster"]["id"] for b in (bound or {}).values() if b]


def member_context(cluster: dict[str, Any], manifest: dict[str, Any], options: dict[str, Any],
                   member: PlannedMember, ips: Mapping[str, str | None], all_members: list[PlannedMember],
                   bound: dict[str, Any] | None = None, leaving: Sequence[PlannedMember] = (),
                   retired: Sequence[Mapping[str, Any]] = (), platform: Mapping[str, Any] | None = None
                   ) -> dict[str, Any]:
    """What a member's templates see: the cluster, the member, its peers by role, the members leaving
    by role, the members removed after a drain by role (those whose IP no member holds again), the
    settings, the bound clusters and the platform (``platform_context``)."""
    disk_count = sum(member.disks.values())
    peers: dict[str, list[dict[str, Any]]] = {}
    for other in all_members:
        peers.setdefault(other.role, []).append(_peer(other, ips))
    drained: dict[str, list[dict[str, Any]]] = {name: [] for name in manifest["roles"]}
    for other in leaving:
        drained[other.role].append(_peer(other, ips))
    gone: dict[str, list[dict[str, Any]]] = {name: [] for name in manifest["roles"]}
    held = set(ips.values())
    for old in retired:
        if old.get("role") in gone and old.get("ip") and old["ip"] not in held:
            gone[old["role"]].append({"id": old.get("member_id"), "ip": old["ip"]})
    return with_shared({
        "cluster": cluster,
        "member": {"id": member.member_id, "name": member.name, "role": member.role, "index": member.index,
                   "ip": ips.get(member.member_id), "data_dirs": [f"/data/{i}" for i in range(1, disk_count + 1)],
                   "disk_dirs": disk_dirs(member.disks), "cpus": member.cpus, "mem_mb": member.mem_mb},
        "peers": peers,
        "leaving": drained,
        "retired": gone,
        "settings": options.get("settings", {}),
        "bound": bound or {},
        "platform": dict(platform or platform_context()),
    }, manifest)
