"""Datasets: a deleted cluster's disks kept with their data (``DELETE …?keep_disks=true``), owned by
its owner, until a later launch of the same product attaches them (``options.dataset``) or they are
reclaimed (wiped).

A dataset holds, per member of the cluster it came from (its role and index), that member's whole
disks on its node, in the member's ``/data/N`` order; disk-service holds them for
``dataset-<dataset id>-<role>-<index>`` (``part_owner``). A launch attaching it gives each of its
members with the same role and index — which must ask for the same disk classes and counts — those
disks: the member is placed on their node and takes them over (``DiskPin``). A cluster deleted with
``keep_disks`` hands its members' disks back to the dataset it attached (or to a new one): a
dataset is a named thing of its owner that clusters come and go on. A failed cluster that attached
one hands its disks back too, so a failed launch loses no data.

States: KEEPING (made by a delete with ``keep_disks``, recorded before any disk moves, so a crash
mid-way resumes) → KEPT (held, counted against the owner's disk quota) → ATTACHED (to a cluster: its
disks are the cluster's, counted with it) → KEEPING/KEPT again, RELEASED (wiped with its cluster) or
RECLAIMED (wiped on its owner's or an admin's request)."""
import uuid
from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.clients import DiskClient
from spindle_common.contracts import DISK_CLASSES, DatasetPart, DatasetState, DatasetView, DiskPin
from spindle_common.errors import ApiError
from spindle_orchestrator.models import Cluster, Dataset, Member

KEEPING, KEPT, ATTACHED, RELEASED, RECLAIMED = "KEEPING", "KEPT", "ATTACHED", "RELEASED", "RECLAIMED"
LIVE = (KEEPING, KEPT, ATTACHED)


def new_dataset_id() -> str:
    return "d" + uuid.uuid4().hex[:10]


def part_owner(dataset_id: str, role: str, index: int) -> str:
    """Who holds a dataset's disks of one member in disk-service."""
    return f"dataset-{dataset_id}-{role}-{index}"


def _key(part: dict[str, Any]) -> tuple[str, int]:
    return part["role"], int(part["index"])


def _classes(disks: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for disk in disks:
        counts[disk["disk_class"]] = counts.get(disk["disk_class"], 0) + 1
    return counts


def live_named(session: Session, owner_id: str, name: str, lock: bool = False) -> Dataset | None:
    """The owner's dataset of this name that holds disks (kept or attached), if any."""
    query = select(Dataset).where(Dataset.owner_id == owner_id, Dataset.name == name, Dataset.state.in_(LIVE))
    return session.scalar(query.with_for_update() if lock else query)


def check_attachable(session: Session, owner_id: str, name: str, product: str,
                     members: list[dict[str, Any]]) -> Dataset:
    """The owner's KEPT dataset ``name`` (locked), if a launch of ``product`` with these members
    (``catalog.member_requests``) can attach it: 404 DATASET_NOT_FOUND (none of the owner's: another
    user's is not found either), 409 DATASET_IN_USE, 422 DATASET_MISMATCH naming the part."""
    dataset = live_named(session, owner_id, name, lock=True)
    if dataset is None:
        raise ApiError(404, "DATASET_NOT_FOUND", f"you have no dataset {name!r}", {"dataset": name})
    if dataset.state != KEPT:
        raise ApiError(409, "DATASET_IN_USE", f"dataset {name!r} is attached to cluster {dataset.attached_to}",
                       {"dataset": name, "cluster_id": dataset.attached_to})
    if dataset.product != product:
        raise ApiError(422, "DATASET_MISMATCH", f"dataset {name!r} holds {dataset.product} data; this is a "
                       f"{product} launch", {"dataset": name, "product": dataset.product})
    asked = {(m["role"], int(m["index"])): {c: int(n) for c, n in m["disks"].items() if n} for m in members}
    for part in dataset.members:
        key, held = _key(part), _classes(part["disks"])
        if key not in asked:
            raise ApiError(422, "DATASET_MISMATCH", f"dataset {name!r} has disks of {key[0]}-{key[1]}, which this "
                           f"launch does not have (ask for at least {key[1]} {key[0]} members)",
                           {"dataset": name, "member": f"{key[0]}-{key[1]}"})
        if asked[key] != held:
            raise ApiError(422, "DATASET_MISMATCH", f"{key[0]}-{key[1]} of dataset {name!r} holds disks {held}; "
                           f"this launch asks {asked[key] or 'none'} for it", {"dataset": name,
                                                                            "member": f"{key[0]}-{key[1]}",
                                                                            "held": held, "asked": asked[key]})
    return dataset


def reserve(session: Session, cluster: Cluster, name: str | None) -> Dataset:
    """The dataset a delete with ``keep_disks`` keeps the cluster's disks in, recorded before any of
    them moves: the one the cluster attached (``name`` must be None or its name), or a new one named
    ``name`` (default: the cluster's id), KEEPING. 409 DATASET_EXISTS for a name the owner has, 422
    for a name other than the attached dataset's."""
    attached = session.get(Dataset, cluster.dataset_id) if cluster.dataset_id else None
    if attached is not None and attached.attached_to == cluster.id:
        if name not in (None, attached.name):
            raise ApiError(422, "INVALID_OPTIONS", f"the cluster's disks go back to the dataset it attached, "
                           f"{attached.name!r}", {"dataset": attached.name})
        return attached
    name = name or cluster.id
    if live_named(session, cluster.owner_id or "", name) is not None:
        raise ApiError(409, "DATASET_EXISTS", f"you have a dataset {name!r} already", {"dataset": name})
    dataset = Dataset(id=new_dataset_id(), name=name, owner=cluster.owner, owner_id=cluster.owner_id or "",
                      product=cluster.product, version=cluster.version, source_cluster=cluster.id, state=KEEPING,
                      attached_to=cluster.id, members=[])
    session.add(dataset)
    cluster.dataset_id = dataset.id
    return dataset


def keeping(session: Session, cluster: Cluster) -> bool:
    """Whether the cluster's disks are still to go into its dataset (KEEPING, or ATTACHED to it)."""
    dataset = session.get(Dataset, cluster.dataset_id) if cluster.dataset_id else None
    return dataset is not None and dataset.attached_to == cluster.id and dataset.state in (KEEPING, ATTACHED)


def pins(dataset: Dataset) -> dict[tuple[str, int], DiskPin]:
    """(role, index) → where that member's disks are and who holds them now."""
    return {_key(p): DiskPin(node=p["node"], mount_points=[d["mount_point"] for d in p["disks"]],
                             adopt_from=part_owner(dataset.id, p["role"], int(p["index"])))
            for p in dataset.members}


def keep(dataset: Dataset, members: list[Member], moved: dict[str, list[dict[str, Any]]]) -> None:
    """After the scheduler handed the ``members``' kept disks to the dataset's parts (``moved``: part
    owner → the disks it holds now): those parts recorded, in each member's /data/N order, and the
    dataset KEPT (a part no member took over stays as it was)."""
    parts = {_key(p): p for p in dataset.members}
    for member in members:
        held = {d["mount_point"]: d for d in moved.get(part_owner(dataset.id, member.role, member.index), [])}
        if not held:
            continue
        # In the member's /data/N order (its recorded disks), with what disk-service says of each.
        ordered = [d["mount_point"] for d in sorted(member.disks, key=lambda d: d.get("container_path", ""))
                   if d["mount_point"] in held] or sorted(held)
        parts[(member.role, member.index)] = {
            "role": member.role, "index": member.index, "node": next(iter(held.values()))["node"],
            "disks": [{k: held[m][k] for k in ("id", "mount_point", "disk_class", "size_bytes")} for m in ordered]}
    dataset.members = [parts[k] for k in sorted(parts)]
    dataset.state, dataset.attached_to = KEPT, None


def end_attachment(session: Session, cluster: Cluster, disks: DiskClient) -> Dataset | None:
    """The cluster that attached a dataset is gone without keeping it: its disks go with the
    cluster's (a part no member took over is released here)."""
    dataset = session.get(Dataset, cluster.dataset_id) if cluster.dataset_id else None
    if dataset is None or dataset.attached_to != cluster.id or dataset.state != ATTACHED:
        return None
    disks.release_many([part_owner(dataset.id, p["role"], int(p["index"])) for p in dataset.members])
    dataset.state = RELEASED
    return dataset


def reclaim(dataset: Dataset, disks: DiskClient) -> None:
    """Wipe a KEPT dataset's disks (they are free again once wiped); 409 unless it is KEPT."""
    if dataset.state != KEPT:
        raise ApiError(409, "DATASET_IN_USE", f"dataset {dataset.name!r} is {dataset.state}"
                       + (f" (cluster {dataset.attached_to})" if dataset.attached_to else ""),
                       {"dataset": dataset.name, "state": dataset.state})
    disks.release_many([part_owner(dataset.id, p["role"], int(p["index"])) for p in dataset.members])
    dataset.state = RECLAIMED


def kept_disks_of(dataset: Dataset) -> dict[str, int]:
    """Disks per class the dataset holds."""
    return _classes(d for p in dataset.members for d in p["disks"])


def kept_disks(session: Session, owner_id: str) -> dict[str, int]:
    """Disks per class the owner's KEPT datasets hold (what counts against their disk quota)."""
    counts: dict[str, int] = {}
    for dataset in session.scalars(select(Dataset).where(Dataset.owner_id == owner_id, Dataset.state == KEPT)):
        for disk_class, n in kept_disks_of(dataset).items():
            counts[disk_class] = counts.get(disk_class, 0) + n
    return counts


def listed(session: Session, owner_id: str | None = None, include_ended: bool = False) -> list[Dataset]:
    query = select(Dataset).order_by(Dataset.created_at.desc(), Dataset.id)
    if owner_id is not None:
        query = query.where(Dataset.owner_id == owner_id)
    if not include_ended:
        query = query.where(Dataset.state.in_(LIVE))
    return list(session.scalars(query))


def view(dataset: Dataset) -> DatasetView:
    disks = [d for p in dataset.members for d in p["disks"]]
    return DatasetView(id=dataset.id, name=dataset.name, owner=dataset.owner, owner_id=dataset.owner_id,
                       product=dataset.product, version=dataset.version, source_cluster=dataset.source_cluster,
                       state=cast(DatasetState, dataset.state), attached_to=dataset.attached_to,
                       disks={c: n for c, n in _classes(disks).items() if c in DISK_CLASSES},
                       size_bytes=sum(int(d.get("size_bytes") or 0) for d in disks),
                       members=[DatasetPart.model_validate(p) for p in dataset.members],
                       created_at=dataset.created_at, updated_at=dataset.updated_at)
