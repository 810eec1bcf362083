"""Datasets: disks kept with their data by a delete with ``keep_disks`` (``datasets.py``): list them
(an owner's, or everyone's), see one, reclaim one (its disks wiped)."""
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from spindle_common.contracts import NAME_PATTERN, DatasetView
from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator import datasets
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.models import Dataset

router = APIRouter(prefix="/datasets", tags=["datasets"])
DatasetId = Annotated[str, Path(pattern=NAME_PATTERN)]


@router.get("")
def list_datasets(session: SessionDep, _: ServiceCaller,
                  owner_id: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
                  include_ended: bool = False) -> list[DatasetView]:
    """The owner's datasets (every owner's without ``owner_id``), newest first; those holding disks
    (KEPT, ATTACHED) unless ``include_ended``."""
    return [datasets.view(d) for d in datasets.listed(session, owner_id, include_ended)]


def _found(session, dataset_id: str, lock: bool = False) -> Dataset:
    dataset = session.get(Dataset, dataset_id, with_for_update=lock)
    if dataset is None:
        raise ApiError(404, "DATASET_NOT_FOUND", f"dataset {dataset_id} does not exist")
    return dataset


@router.get("/{dataset_id}", responses=error_responses(404))
def get_dataset(dataset_id: DatasetId, session: SessionDep, _: ServiceCaller) -> DatasetView:
    return datasets.view(_found(session, dataset_id))


@router.delete("/{dataset_id}", responses=error_responses(404, 409, 502, 503, descriptions={
    409: "the dataset is attached to a cluster, or ended already (DATASET_IN_USE)"}))
def reclaim_dataset(dataset_id: DatasetId, session: SessionDep, _: ServiceCaller, request: Request) -> DatasetView:
    """Wipe a KEPT dataset's disks (they are free once wiped) and mark it RECLAIMED."""
    dataset = _found(session, dataset_id, lock=True)
    datasets.reclaim(dataset, request.app.state.disks)
    session.commit()
    return datasets.view(dataset)
