"""Resize's arithmetic: the counts a cluster's options ask for (the manifest's defaults filling in),
the options with new counts, and the counts recorded members make."""
from types import SimpleNamespace

from spindle_common.catalog import role_counts, with_counts
from spindle_orchestrator.resize import recorded_counts

MANIFEST = {"roles": {"master": {"count": {"default": 1, "min": 1, "max": 1}, "cpus": 1, "mem_mb": 512},
                      "worker": {"count": {"default": 2, "min": 1, "max": 8}, "cpus": 1, "mem_mb": 512,
                                 "disks": {"hdd": 1}}}}


def test_counts_come_from_the_options_and_the_defaults():
    assert role_counts(MANIFEST, {}) == {"master": 1, "worker": 2}
    assert role_counts(MANIFEST, {"roles": {"worker": {"count": 4, "cpus": 2}}}) == {"master": 1, "worker": 4}


def test_resized_options_keep_everything_else():
    options = {"roles": {"worker": {"count": 2, "cpus": 2}}, "placement": {"strategy": "pack"}}
    assert with_counts(options, {"worker": 3, "master": 1}) == {
        "roles": {"worker": {"count": 3, "cpus": 2}, "master": {"count": 1}}, "placement": {"strategy": "pack"}}
    assert options["roles"]["worker"]["count"] == 2, "a new dict: the cluster's own options are not changed"


def test_recorded_counts_are_the_highest_index_per_role():
    cluster = SimpleNamespace(members=[SimpleNamespace(member_id=f"c-w-{i}", role="w", index=i) for i in (1, 2, 3)]
                              + [SimpleNamespace(member_id="c-m-1", role="m", index=1)])
    assert recorded_counts(cluster) == {"w": 3, "m": 1}  # type: ignore[arg-type]
    assert recorded_counts(cluster, exclude={"c-w-3"}) == {"w": 2, "m": 1}  # type: ignore[arg-type]
