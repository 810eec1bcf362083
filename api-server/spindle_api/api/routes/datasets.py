"""Datasets: disks a deleted cluster kept with their data (``DELETE …?keep_disks=true``). You list
yours and reclaim one (its disks are wiped); a launch of the same product attaches one by name
(``options.dataset``). Admins list everyone's and reclaim any. Others' datasets are 404, like
their clusters; the orchestrator keeps them, keyed by the owner's stable id (``actor_of``)."""
from fastapi import APIRouter

from spindle_api.api.deps import AdminUser, CurrentUser, OrchestratorDep, SessionDep, user_named
from spindle_api.api.params import DatasetPathName, Username, segment
from spindle_api.models import User
from spindle_api.schemas import upstream_list, upstream_model
from spindle_api.upstream import actor_of
from spindle_common.clients import ServiceClient
from spindle_common.contracts import DatasetView
from spindle_common.errors import ApiError, error_responses

router = APIRouter(tags=["datasets"])
NOT_YOURS = "no such user you may see (USER_NOT_FOUND), or no dataset of that name (DATASET_NOT_FOUND)"


def _owner_id(session: SessionDep, user: User, username: str) -> str:
    """Whose datasets ``user`` asks for: their own (by id, nothing of an earlier user of the name), or,
    for an admin, ``username``'s; anyone else's is 404."""
    if username == user.username:
        return actor_of(user)
    if not user.is_admin:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r} you may see", {"username": username})
    return actor_of(user_named(session, username))


def _datasets(orchestrator: ServiceClient, owner_id: str | None, include_ended: bool = False) -> list[DatasetView]:
    params = {k: v for k, v in {"owner_id": owner_id, "include_ended": include_ended or None}.items() if v}
    return upstream_list(DatasetView, orchestrator.request("GET", "/datasets", params=params))


@router.get("/datasets/{username}", responses=error_responses(401, 404, 422, 502, 503, descriptions={
    404: "not your own username (USER_NOT_FOUND; admins may list anyone's)"}))
def list_datasets(username: Username, user: CurrentUser, session: SessionDep, orchestrator: OrchestratorDep,
                  include_ended: bool = False) -> list[DatasetView]:
    """Your datasets holding disks (KEPT: counted against your disk quota; ATTACHED: a cluster of yours
    uses them), newest first; with ``include_ended`` also those wiped."""
    return _datasets(orchestrator, _owner_id(session, user, username), include_ended)


@router.delete("/datasets/{username}/{name}", responses=error_responses(401, 404, 409, 422, 502, 503, descriptions={
    404: NOT_YOURS, 409: "the dataset is attached to a cluster (DATASET_IN_USE)"}))
def reclaim_dataset(username: Username, name: DatasetPathName, user: CurrentUser, session: SessionDep,
                    orchestrator: OrchestratorDep) -> DatasetView:
    """Wipe a kept dataset's disks: they are free (and off your quota) once wiped."""
    found = [d for d in _datasets(orchestrator, _owner_id(session, user, username)) if d.name == name]
    if not found:
        raise ApiError(404, "DATASET_NOT_FOUND", f"{username} has no dataset {name!r}", {"dataset": name})
    return upstream_model(DatasetView, orchestrator.request("DELETE", f"/datasets/{segment(found[0].id)}"))


@router.get("/admin/datasets", tags=["admin: clusters"], responses=error_responses(401, 403, 422, 502, 503))
def all_datasets(_: AdminUser, orchestrator: OrchestratorDep, include_ended: bool = False) -> list[DatasetView]:
    """Every user's datasets holding disks (with ``include_ended``, also those wiped), newest first."""
    return _datasets(orchestrator, None, include_ended)
