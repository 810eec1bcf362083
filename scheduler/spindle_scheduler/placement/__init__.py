"""Placement as pure code (no Mesos, no DB, no HTTP): node offers + a request in, a plan with reasons out.

Stages, one module each (after Nomad's scheduler): ``feasibility`` (can this node take this
member?) → ``ranking`` (which feasible node is best?) → ``placer`` (places a whole request
atomically on a working copy of the offers, explaining every node that did not fit) → ``plan``
(the result and its one-line summary). ``model`` holds the plain input data, ``state`` a node's
resources as placement consumes them.
"""
from spindle_scheduler.placement.model import (
    MemberRequest,
    NodeOffer,
    OfferedDisk,
    PlacementRequest,
    Reason,
)
from spindle_scheduler.placement.placer import place
from spindle_scheduler.placement.plan import Placement, Plan

__all__ = ["MemberRequest", "NodeOffer", "OfferedDisk", "Placement", "PlacementRequest", "Plan", "Reason", "place"]
