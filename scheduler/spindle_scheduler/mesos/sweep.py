"""The scheduler's sweep: disk-service's holdings compared with their holders, the tasks.

Every ``disk_sweep_interval_s`` (and once on ``POST /sweep``) the disks allocated in disk-service are
judged by the task of their owner (a member id), ``judge`` being pure:

- a task that runs, launches or is unreachable holds its disks: kept;
- a member that keeps its disks while it does not run (a stopped cluster's, ended with
  ``keep_disks``; one PENDING to be started on them, pinned) holds them: kept;
- an ended task that still owes its release: the release worker's (``releases.py``), left to it;
- an ended task whose release was done, yet its disks are held again or still: it owes its release
  again (container removed, then the disks freed), done by the same worker;
- a PENDING task holds nothing (a crash between holding and launching left them): freed at once,
  under the offer lock, re-read there, so a placement under way is never undone;
- an owner this scheduler has no task for is not its own (another scheduler's, or an admin's
  allocation): left alone, counted as foreign.

Holdings younger than ``disk_sweep_grace_s`` are not judged yet: a launch may be between its disk hold
and its task's LAUNCHING state.
"""
import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from spindle_common.contracts import as_utc, utcnow
from spindle_scheduler.store import PLACED_STATES, TERMINAL_STATES, kept, pinned

log = logging.getLogger("spindle.sweep")
LIVE_STATES = PLACED_STATES | {"TASK_UNREACHABLE"}


@dataclass(frozen=True)
class Holding:
    """One disk allocated in disk-service, to ``owner`` since about ``since``."""

    owner: str
    disk_id: int
    since: datetime


@dataclass(frozen=True)
class Holder:
    """What the scheduler knows of an owner: its task's state, whether it still owes its release."""

    state: str
    release_owed: bool = False
    keeps_disks: bool = False  # ended keeping them, or pending on them (``store.kept``/``store.pinned``)


@dataclass
class Verdict:
    stale_pending: list[str] = field(default_factory=list)  # owners to free now (their task is PENDING)
    ended: list[str] = field(default_factory=list)  # owners whose ended task owes its release again
    owed: list[str] = field(default_factory=list)  # owners already owed a release (the worker's)
    live: list[str] = field(default_factory=list)
    recent: list[str] = field(default_factory=list)  # within the grace period: judged next time
    foreign: list[str] = field(default_factory=list)  # no task of this scheduler


def judge(holdings: Iterable[Holding], holders: Mapping[str, Holder], now: datetime, grace: timedelta) -> Verdict:
    """Sort every owner holding disks by what should happen to its disks (each owner once)."""
    verdict = Verdict()
    newest: dict[str, datetime] = {}
    for holding in holdings:
        newest[holding.owner] = max(newest.get(holding.owner, holding.since), holding.since)
    for owner in sorted(newest):
        holder = holders.get(owner)
        if now - newest[owner] < grace:
            verdict.recent.append(owner)
        elif holder is None:
            verdict.foreign.append(owner)
        elif holder.state in LIVE_STATES or holder.keeps_disks:
            verdict.live.append(owner)
        elif holder.state in TERMINAL_STATES:
            (verdict.owed if holder.release_owed else verdict.ended).append(owner)
        else:  # PENDING (or an unknown state: nothing launched holds disks then either)
            verdict.stale_pending.append(owner)
    return verdict


class Sweeper:
    """Runs the sweep for one framework and keeps its counts (``GET /releases``)."""

    def __init__(self, framework, disks, grace_s: float):
        self.framework, self.disks = framework, disks
        self.grace = timedelta(seconds=grace_s)
        self.lock = threading.Lock()
        self.runs = 0
        self.freed_total = 0  # owners whose disks a sweep freed or had released again
        self.last: dict[str, Any] = {}

    def holdings(self) -> list[Holding]:
        return [Holding(d["owner"], d["id"], as_utc(datetime.fromisoformat(d["updated_at"].replace("Z", "+00:00"))))
                for d in self.disks.disks(state="allocated") if d.get("owner")]

    def run(self) -> dict[str, Any]:
        """One sweep; returns what it found and freed (also kept as ``last``)."""
        with self.lock:
            fw = self.framework
            holdings = self.holdings()
            holders = {t.member_id: Holder(t.state, t.release_owed, kept(t) or pinned(t))
                       for t in fw.store.by_members({h.owner for h in holdings})}
            verdict = judge(holdings, holders, utcnow(), self.grace)
            freed: list[str] = []
            if verdict.stale_pending:
                with fw.lock:  # placements hold disks under this lock: re-read the tasks inside it
                    still = [t.member_id for t in fw.store.by_members(verdict.stale_pending) if t.state == "PENDING"]
                    fw.launcher.release_disks(still)
                freed += still
            again = fw.store.owe_release_again(verdict.ended)  # only tasks still ended, atomically
            if again:
                fw.releases.wakeup.set()
                freed += again
            for owner in freed:
                log.warning("sweep: %s held disks without a live task; released", owner)
            self.runs += 1
            self.freed_total += len(freed)
            self.last = {"at": utcnow().isoformat(), "freed": sorted(freed), "owed": verdict.owed,
                         "live": len(verdict.live), "recent": len(verdict.recent), "foreign": verdict.foreign}
            return self.last

    def counts(self) -> dict[str, Any]:
        return {"runs": self.runs, "freed_total": self.freed_total, "last": self.last}
