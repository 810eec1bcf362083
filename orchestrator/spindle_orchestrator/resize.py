"""Resize: a running cluster's member count per role changed (``POST /clusters/{id}/resize``).

The counts live in the cluster's options (``roles.<role>.count``, the manifest's default when not
given), so a resize is a change of options, checked as a launch's are (the options schema: min and
max per role; the owner's quota for what it adds), and the reconcile core does the rest: members
whose (role, index) the counts ask for and the cluster does not have are added, those beyond the
counts are removed (``reconcile._resize``). Members are numbered 1..count per role, so growing adds
the next indexes and shrinking removes the highest ones (``catalog.role_counts``, ``catalog.with_counts``)."""
from collections.abc import Collection

from spindle_orchestrator.models import Cluster


def recorded_counts(cluster: Cluster, exclude: Collection[str] = ()) -> dict[str, int]:
    """How many members of each role the cluster has recorded (but ``exclude``)."""
    counts: dict[str, int] = {}
    for member in cluster.members:
        if member.member_id not in exclude:
            counts[member.role] = max(counts.get(member.role, 0), member.index)
    return counts
