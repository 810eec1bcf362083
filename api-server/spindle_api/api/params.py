"""Path and query parameters of the public API, each with the shape its real values have.

Every path parameter is checked here, before anything is forwarded to an internal service: a value
that cannot be a username, product, version, cluster, job, node, disk or pool is a 422 naming the
parameter, never a request built from it. Internal URLs are still built with ``segment`` (percent-
encoded), so a path parameter can never change which internal resource is addressed."""
import base64
import binascii
import re
from datetime import datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import Path, Query
from pydantic import AfterValidator

from spindle_common.contracts import DATASET_NAME_PATTERN, NAME_PATTERN, ClusterState, DiskClass
from spindle_common.errors import ApiError

# Users (api-server's users table; see NewUser): 3–32 lowercase letters, digits and '-'.
USERNAME_PATTERN = r"^[a-z][a-z0-9-]{1,30}[a-z0-9]$"
# Catalog folders (spindle_common.catalog.MANIFEST_SCHEMA) within the orchestrator's column sizes.
PRODUCT_PATTERN = r"^[a-z][a-z0-9-]{0,63}$"
VERSION_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z.-]{0,31}$"
# Cluster ids are names (contracts.NAME_PATTERN; the orchestrator makes them like c0123456789), job ids too (j…).
CLUSTER_ID_PATTERN = NAME_PATTERN
JOB_ID_PATTERN = r"^[a-z0-9][a-z0-9.-]{0,31}$"
# disk-service node names and racks (failure domains), network-service pool names.
NODE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$"
RACK_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"
POOL_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
# Page tokens are URL-safe base64.
PAGE_TOKEN_PATTERN = r"^[A-Za-z0-9_-]{1,500}={0,2}$"
# Free text that goes into a database: no control characters (PostgreSQL refuses NUL).
LINE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
INT32_MAX = 2**31 - 1

Username = Annotated[str, Path(pattern=USERNAME_PATTERN, description="the clusters' owner", examples=["alice"])]
Product = Annotated[str, Path(pattern=PRODUCT_PATTERN, description="a product of the catalog", examples=["spark"])]
Version = Annotated[str, Path(pattern=VERSION_PATTERN, description="a version of the product", examples=["3.5"])]
ClusterId = Annotated[str, Path(pattern=CLUSTER_ID_PATTERN, description="the cluster's id", examples=["c0123456789"])]
JobId = Annotated[str, Path(pattern=JOB_ID_PATTERN, description="the job's id", examples=["j0123456789"])]
NodeName = Annotated[str, Path(pattern=NODE_NAME_PATTERN, description="a node's name", examples=["node-1"])]
DiskId = Annotated[int, Path(ge=1, le=INT32_MAX, description="a disk's id", examples=[1])]
PoolName = Annotated[str, Path(pattern=POOL_NAME_PATTERN, description="an IP pool's name", examples=["default"])]
UserToDelete = Annotated[str, Path(pattern=USERNAME_PATTERN, description="the user to delete", examples=["alice"])]
DatasetName = Annotated[str | None, Query(pattern=DATASET_NAME_PATTERN, description="the dataset's name",
                                          examples=["my-data"])]
DatasetPathName = Annotated[str, Path(pattern=DATASET_NAME_PATTERN, description="a dataset's name",
                                      examples=["my-data"])]


def segment(value: str | int) -> str:
    """``value`` as one percent-encoded path segment of an internal URL."""
    text = str(value)
    if text in ("", ".", ".."):
        raise ApiError(422, "INVALID_REQUEST", f"{text!r} is not a name", {"value": text})
    return quote(text, safe="")


def _cluster_page_token(token: str | None) -> str | None:
    """A token as the orchestrator makes them (spindle_orchestrator.clusters._token): base64 of
    ``<created_at ISO 8601>|<cluster id>``; anything else would only fail further in."""
    if token is None:
        return None
    try:
        created, _, cluster_id = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        datetime.fromisoformat(created)
    except (binascii.Error, ValueError):
        raise ValueError("not a page token this API returned") from None
    if not re.fullmatch(NAME_PATTERN, cluster_id):
        raise ValueError("not a page token this API returned")
    return token


def _disk_page_token(token: str | None) -> str | None:
    """A token as disk-service makes them: base64 of ``disk:<last id>``."""
    if token is None:
        return None
    try:
        kind, _, last_id = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
    except (binascii.Error, ValueError):
        raise ValueError("not a page token this API returned") from None
    if kind != "disk" or not last_id.isascii() or not last_id.isdigit() or int(last_id) > INT32_MAX:
        raise ValueError("not a page token this API returned")
    return token


StateFilter = Annotated[ClusterState | None, Query(description="only clusters in this state")]
ProductFilter = Annotated[str | None, Query(pattern=PRODUCT_PATTERN, description="only clusters of this product")]
OwnerFilter = Annotated[str | None, Query(pattern=USERNAME_PATTERN, description="only this user's clusters")]
PageSize = Annotated[int, Query(ge=1, le=500, description="clusters per page")]
ClusterPageToken = Annotated[str | None, Query(pattern=PAGE_TOKEN_PATTERN,
                                               description="next_page_token of the previous page"),
                             AfterValidator(_cluster_page_token)]

NodeFilter = Annotated[str | None, Query(pattern=NODE_NAME_PATTERN, description="only disks of this node")]
DiskClassFilter = Annotated[DiskClass | None, Query(alias="class", description="only disks of this class")]
DiskOwnerFilter = Annotated[str | None, Query(min_length=1, max_length=255, pattern=LINE_PATTERN,
                                              description="only disks held by this owner (e.g. cluster/member)")]
DiskPageSize = Annotated[int, Query(ge=1, le=1000, description="disks per page")]
DiskPageToken = Annotated[str | None, Query(pattern=PAGE_TOKEN_PATTERN,
                                            description="next_page_token of the previous page"),
                          AfterValidator(_disk_page_token)]
