"""Every service's figures read from its own tables at /metrics scrape time: each query runs on the
service's migrated schema (empty, then with rows) and yields its families; the scheduler's placement
counter is registered on its app."""
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from spindle_common.migrations import upgrade
from spindle_disk import metrics as disk_metrics
from spindle_network import metrics as network_metrics
from spindle_orchestrator import metrics as orchestrator_metrics
from spindle_orchestrator.models import Cluster, Member
from spindle_scheduler import metrics as scheduler_metrics

SERVICES = [("spindle_disk", disk_metrics.FAMILIES), ("spindle_network", network_metrics.FAMILIES),
            ("spindle_orchestrator", orchestrator_metrics.FAMILIES), ("spindle_scheduler", scheduler_metrics.FAMILIES)]


def exposed(database_url: str, families) -> dict[str, list]:
    registry = CollectorRegistry()
    registry.register(disk_metrics.QueryMetrics(database_url, families))
    return {f.name: f.samples for f in text_string_to_metric_families(generate_latest(registry).decode())}


@pytest.mark.parametrize(("package", "families"), SERVICES, ids=[p for p, _ in SERVICES])
def test_each_query_runs_on_the_services_schema(fresh_database, package, families):
    upgrade(package, fresh_database)
    names = exposed(fresh_database, families)
    for kind, name, *_ in families:
        assert name in names, name  # present even with no rows (then without samples)
        if kind == "counter":
            assert all(s.name == f"{name}_total" for s in names[name])


def test_clusters_and_members_are_counted_by_state(fresh_database):
    upgrade("spindle_orchestrator", fresh_database)
    with Session(create_engine(fresh_database)) as session, session.begin():
        for n, (product, state) in enumerate([("spark", "RUNNING"), ("spark", "RUNNING"), ("hadoop", "QUEUED"),
                                              ("spark", "DESTROYED")]):
            session.add(Cluster(id=f"c{n:010d}", owner="alice", owner_id="u1", product=product, version="1",
                                options={}, state=state))
            session.add(Member(member_id=f"c{n:010d}-worker-1", cluster_id=f"c{n:010d}", role="worker", index=1,
                               state="RUNNING" if state == "RUNNING" else "PENDING"))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in exposed(fresh_database, orchestrator_metrics.FAMILIES).values() for s in family}
    assert samples[("spindle_clusters", (("product", "spark"), ("state", "RUNNING")))] == 2
    assert samples[("spindle_clusters", (("product", "hadoop"), ("state", "QUEUED")))] == 1
    assert samples[("spindle_clusters", (("product", "spark"), ("state", "DESTROYED")))] == 1
    members = {labels: value for (name, labels), value in samples.items() if name == "spindle_members"}
    # a destroyed cluster's members are history, not counted
    assert members == {(("product", "spark"), ("role", "worker"), ("state", "RUNNING")): 2,
                       (("product", "hadoop"), ("role", "worker"), ("state", "PENDING")): 1}


def test_the_scheduler_app_registers_its_placement_counter():
    scheduler_metrics.PLACEMENTS.labels("placed").inc()
    registry = CollectorRegistry()
    registry.register(scheduler_metrics.PLACEMENTS)
    samples = {(s.name, s.labels.get("outcome")): s.value
               for f in text_string_to_metric_families(generate_latest(registry).decode()) for s in f.samples}
    assert samples[("spindle_placements_total", "placed")] >= 1
