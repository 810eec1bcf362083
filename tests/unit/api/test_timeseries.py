"""The api-server's fixed queries of the time-series database: a cluster's selector admits only a
cluster id (members, not job drivers), every figure is one cluster's, and VictoriaMetrics' matrix
answers become sorted series."""
import pytest

from spindle_api.timeseries import MEMBER_FIGURES, cluster_selector, parse_matrix
from spindle_common.errors import ApiError


@pytest.mark.parametrize("bad", ['c1",cluster=~".*', "c1}", "", "x0123456789", "c01 23", "cé"])
def test_only_a_cluster_id_makes_a_selector(bad):
    with pytest.raises(ValueError):
        cluster_selector(bad)


def test_every_figure_reads_one_clusters_members_only():
    selector = cluster_selector("c0123456789")
    assert selector == '{cluster="c0123456789",job=""}'
    for figure, spec in MEMBER_FIGURES.items():
        query = spec.query.replace("{sel}", selector)
        assert query.count(selector) == 1 and "{sel}" not in query, figure
        assert query.startswith("sum by (member"), figure  # nothing but the member (and disk) labels out


def test_a_matrix_becomes_series_sorted_by_member():
    answer = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"member": "c1-worker-2"}, "values": [[100, "0.5"], [115, "0.25"]]},
        {"metric": {"member": "c1-worker-1"}, "values": [[100, "1"]]}]}}
    series = parse_matrix("cpu", MEMBER_FIGURES["cpu"], answer)
    assert [(s.labels["member"], s.points, s.unit) for s in series] == [
        ("c1-worker-1", [(100.0, 1.0)], "cores"), ("c1-worker-2", [(100.0, 0.5), (115.0, 0.25)], "cores")]
    disks = parse_matrix("disk_used", MEMBER_FIGURES["disk_used"], {"status": "success", "data": {
        "resultType": "matrix", "result": [{"metric": {"member": "m", "disk": "/data/1"}, "values": [[1, "7"]]}]}})
    assert disks[0].labels == {"member": "m", "disk": "/data/1"}


@pytest.mark.parametrize("answer", [{"status": "error", "error": "bad query"},
                                    {"status": "success", "data": {"resultType": "vector", "result": []}}, {}])
def test_an_error_answer_is_a_502(answer):
    with pytest.raises(ApiError) as raised:
        parse_matrix("cpu", MEMBER_FIGURES["cpu"], answer)
    assert raised.value.status == 502 and raised.value.code == "METRICS_ERROR"
