"""Nodes and their disks in the database: register, discover, find, filter, edit, change state."""
import base64
from collections.abc import Mapping, Sequence

from sqlalchemy import Select, and_, select
from sqlalchemy.orm import Session

from spindle_common.errors import ApiError
from spindle_disk import schemas, transitions
from spindle_disk.discovery import FoundDisk, admin_class
from spindle_disk.models import Allocation, Disk, Node
from spindle_disk.states import WIPING


def node_or_404(session: Session, name: str) -> Node:
    node = session.scalar(select(Node).where(Node.name == name))
    if node is None:
        raise ApiError(404, "NODE_NOT_FOUND", f"no node named {name!r}", {"node": name})
    return node


def register_node(session: Session, body: schemas.NodeCreate) -> tuple[Node, bool]:
    """Create the node; registering the same node again is a no-op, a different one a 409. A
    registration without a rack (a node agent's, deploy's) leaves the rack an admin set as it is."""
    existing = session.scalar(select(Node).where(Node.name == body.name))
    if existing is not None:
        given = body.model_dump(exclude={"rack"} if body.rack is None else None)
        same = all(getattr(existing, k) == v for k, v in given.items())
        if not same:
            raise ApiError(409, "NODE_EXISTS", f"node {body.name!r} is registered with other attributes",
                           {"node": body.name})
        return existing, False
    node = Node(**body.model_dump())
    session.add(node)
    session.commit()
    return node, True


def list_nodes(session: Session) -> list[Node]:
    return list(session.scalars(select(Node).order_by(Node.name)))


def set_rack(session: Session, name: str, rack: str | None) -> Node:
    """Put the node in failure domain ``rack``; None takes it out (it is its own failure domain again)."""
    node = node_or_404(session, name)
    node.rack = rack
    session.commit()
    return node


def disk_query() -> Select:
    """Disks with their node's name and their current owner (NULL when not allocated)."""
    active = and_(Allocation.disk_id == Disk.id, Allocation.released_at.is_(None))
    return (select(Disk, Node.name, Allocation.owner)
            .join(Node, Node.id == Disk.node_id)
            .outerjoin(Allocation, active))


def disk_view(disk: Disk, node: str, owner: str | None) -> schemas.DiskOut:
    columns = {column.key: getattr(disk, column.key) for column in Disk.__table__.columns}
    return schemas.DiskOut.model_validate({**columns, "node": node, "owner": owner})


def views(session: Session, query: Select) -> list[schemas.DiskOut]:
    return [disk_view(*row) for row in session.execute(query)]


def disk_or_404(session: Session, disk_id: int, lock: bool = False) -> Disk:
    """The disk row, locked FOR UPDATE when ``lock`` (for state changes)."""
    query = select(Disk).where(Disk.id == disk_id)
    disk = session.scalar(query.with_for_update() if lock else query)
    if disk is None:
        raise ApiError(404, "DISK_NOT_FOUND", f"no disk with id {disk_id}", {"disk_id": disk_id})
    return disk


def disk_out(session: Session, disk_id: int) -> schemas.DiskOut:
    found = views(session, disk_query().where(Disk.id == disk_id))
    if not found:
        raise ApiError(404, "DISK_NOT_FOUND", f"no disk with id {disk_id}", {"disk_id": disk_id})
    return found[0]


def register_found(session: Session, node: Node, found: Sequence[FoundDisk], classes: Mapping[str, str],
                   actor: str) -> tuple[list[int], list[int]]:
    """Insert disks seen for the first time (state free) and refresh the facts of known ones.

    A disk is known by its mount point on the node; its state and labels stay as they are, its
    class changes only when ``classes`` names it. Returns (new disk ids, updated disk ids).
    """
    known = {d.mount_point: d for d in session.scalars(
        select(Disk).where(Disk.node_id == node.id).with_for_update())}
    new, updated = [], []
    for item in found:
        facts = {k: getattr(item, k) for k in ("device_path", "serial", "model", "transport", "size_bytes",
                                              "rotational", "fs_type", "fs_label")}
        disk = known.get(item.mount_point)
        if disk is None:
            disk = Disk(node_id=node.id, mount_point=item.mount_point,
                        disk_class=admin_class(item, classes) or item.detected_class,
                        labels={}, state="free", **facts)
            session.add(disk)
            session.flush()
            transitions.record_creation(session, disk, actor)
            new.append(disk.id)
        else:
            for key, value in facts.items():
                setattr(disk, key, value)
            disk.disk_class = admin_class(item, classes) or disk.disk_class
            updated.append(disk.id)
    session.commit()
    return new, updated


def _page_token(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"disk:{last_id}".encode()).decode()


def _after_id(page_token: str | None) -> int:
    if not page_token:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(page_token.encode()).decode().partition(":")
        if kind != "disk":
            raise ValueError(kind)
        return int(value)
    except ValueError as exc:
        raise ApiError(422, "INVALID_PAGE_TOKEN", "page_token is not one this API returned",
                       {"page_token": page_token}) from exc


def list_disks(session: Session, node: str | None, state: str | None, disk_class: str | None,
               owner: str | None, page_size: int, page_token: str | None) -> schemas.DiskPage:
    """Disks matching every given filter, by id, ``page_size`` at a time (keyset pagination)."""
    query = disk_query().where(Disk.id > _after_id(page_token))
    if node is not None:
        query = query.where(Node.name == node)
    if state is not None:
        query = query.where(Disk.state == state)
    if disk_class is not None:
        query = query.where(Disk.disk_class == disk_class)
    if owner is not None:
        query = query.where(Allocation.owner == owner)
    items = views(session, query.order_by(Disk.id).limit(page_size + 1))
    more = len(items) > page_size
    items = items[:page_size]
    return schemas.DiskPage(items=items, next_page_token=_page_token(items[-1].id) if more else None)


def update_disk(session: Session, disk_id: int, body: schemas.DiskUpdate) -> None:
    """Set the class and/or replace the labels chosen by the admin."""
    disk = disk_or_404(session, disk_id, lock=True)
    if body.disk_class is not None:
        disk.disk_class = body.disk_class
    if body.labels is not None:
        disk.labels = body.labels
    session.commit()


def change_state(session: Session, disk_id: int, to: str, actor: str, reason: str | None) -> None:
    """An admin's state change (retire, fail, wipe): one checked, audited transition.

    A disk an owner still holds (e.g. failed while allocated) is never wiped from under it.
    """
    disk = disk_or_404(session, disk_id, lock=True)
    owner = session.scalar(select(Allocation.owner).where(
        Allocation.disk_id == disk_id, Allocation.released_at.is_(None)))
    if owner is not None and to == WIPING:
        raise ApiError(409, "DISK_STILL_ALLOCATED", f"disk {disk_id} is still held by {owner}: release it first",
                       {"disk_id": disk_id, "owner": owner})
    transitions.move(session, disk, to, actor, owner=owner, reason=reason)
    session.commit()
