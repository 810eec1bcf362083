"""Placement as pure code (no Mesos, no DB): node offers + a request in, a plan with reasons out.

Stages, one module each (after Nomad's scheduler): ``feasibility`` (can this node take this
member?) → ``ranking`` (which feasible node is best?) → ``placer`` (places a whole request
atomically on a working copy of the offers, explaining every node that did not fit).
"""
from spindle_scheduler.placement.model import (
    MemberRequest, NodeOffer, Placement, PlacementRequest, Plan, Reason,
)
from spindle_scheduler.placement.placer import place

__all__ = ["MemberRequest", "NodeOffer", "Placement", "PlacementRequest", "Plan", "Reason", "place"]
