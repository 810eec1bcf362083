"""Which member a logs request names: its id or its role-index name in the cluster, nothing else."""
import pytest

from spindle_api.api.routes.member_logs import member_of
from spindle_common.contracts import ClusterView
from spindle_common.errors import ApiError

CLUSTER = ClusterView.model_validate({
    "id": "c0123456789", "owner": "ann", "product": "spark", "version": "3.5", "state": "RUNNING", "options": {},
    "created_at": "2026-11-25T16:00:00Z", "updated_at": "2026-11-25T16:00:00Z",
    "members": [{"member_id": "c0123456789-master-1", "role": "master", "state": "TASK_RUNNING", "node": "vm"},
                {"member_id": "c0123456789-worker-1", "role": "worker", "state": "TASK_RUNNING", "node": "n2"}]})


@pytest.mark.parametrize(("asked", "found"), [("worker-1", "c0123456789-worker-1"),
                                              ("c0123456789-master-1", "c0123456789-master-1")])
def test_a_member_by_id_or_name(asked, found):
    assert member_of(CLUSTER, asked).member_id == found


@pytest.mark.parametrize("asked", ["worker-2", "c9999999999-worker-1", "master", "c0123456789"])
def test_anything_else_is_404(asked):
    with pytest.raises(ApiError) as raised:
        member_of(CLUSTER, asked)
    assert raised.value.status == 404 and raised.value.code == "MEMBER_NOT_FOUND"
