"""The reconcile core, by tables: desired (what the orchestrator recorded) × observed (what the
scheduler, Consul and the jobs report) × now → the actions, each branch of every cluster state."""
from datetime import UTC, datetime, timedelta

import pytest

from spindle_common.contracts import ClusterState as S
from spindle_common.contracts import MemberState as M
from spindle_common.contracts import RestartPolicy, TaskView
from spindle_orchestrator.reconcile import (
    MAX_REPLACEMENTS,
    Desired,
    Kill,
    Launch,
    MarkCleanedUp,
    MemberRecord,
    Observed,
    RecordMember,
    Relaunch,
    ReleaseIps,
    StopJobs,
    Timeouts,
    Transition,
    reconcile,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=10)  # a deadline not yet passed
EARLIER = NOW - timedelta(seconds=1)  # a deadline passed
REPLACE, IN_PLACE, NEVER = RestartPolicy.REPLACE, RestartPolicy.IN_PLACE, RestartPolicy.NEVER


def member(mid="m0", state=M.TASK_RUNNING, restart=NEVER, message="", replacements=0, dns="m0", role="", index=0):
    return MemberRecord(member_id=mid, restart=restart, state=state, message=message, replacements=replacements,
                        dns_name=dns, role=role, index=index)


def worker(index, state=M.TASK_RUNNING, drain=None, since=None):
    """A member of role w (its id w-<index>), as a resize sees it."""
    return MemberRecord(member_id=f"w-{index}", state=state, dns_name=f"w-{index}", role="w", index=index,
                        drain=drain, drain_since=since)


def task(mid="m0", state=M.TASK_RUNNING, message="", launches=1, kill_requested=False, kept=False):
    return TaskView(task_id=f"{mid}.t{launches}", cluster_id="c1", member_id=mid, state=state, message=message,
                    launches=launches, kill_requested=kill_requested, disks_kept=kept)


def tasks(*views):
    return {t.member_id: t for t in views}


def cluster(state, *members, deadline=None, delete=False, cleaned=False, wait=False, stop=False, keep=False,
            counts=None, pending=False, drains=None):
    return Desired(cluster_id="c1", state=state, members=tuple(members), delete_requested=delete, deadline=deadline,
                   cleaned_up=cleaned, wait_for_resources=wait, stop_requested=stop, keep_disks=keep, counts=counts,
                   keep_pending=pending, drains=drains or {})


DRAINS = {"w": 600.0}  # role w is drained before a resize removes a member of it (at most 10 minutes)


def summary(actions):
    """Actions as short tuples: what, and the fact that matters most about it."""
    out = []
    for a in actions:
        if isinstance(a, Transition):
            out.append(("to", a.state.value, a.code) if a.code else ("to", a.state.value))
        elif isinstance(a, (RecordMember, Relaunch)):
            out.append((type(a).__name__, a.member_id))
        else:
            out.append((type(a).__name__,))
    return out


RUNNING2 = (member("m0"), member("m1", dns="m1"))
REPLACEABLE = member("m0", restart=REPLACE)

TABLE = [
    # --- PENDING ------------------------------------------------------------------------------------
    ("pending launches", cluster(S.PENDING), Observed(), [("Launch",), ("to", "SCHEDULING")]),
    ("pending that waits for resources queues", cluster(S.PENDING, wait=True), Observed(),
     [("Launch",), ("to", "QUEUED")]),
    ("a launch that failed fails the cluster", cluster(S.PENDING),
     Observed(launch_error=("IP_UNAVAILABLE", "pool exhausted")), [("to", "FAILED", "IP_UNAVAILABLE")]),
    ("its images still building: wait, look again", cluster(S.PENDING),
     Observed(images={"state": "preparing", "message": "image spindle/kafka:4.0 building (step 3 of 12)"}),
     [("AwaitImages",), ("Recheck",)]),
    ("its images built: launch", cluster(S.PENDING), Observed(images={"state": "ready"}),
     [("Launch",), ("to", "SCHEDULING")]),
    ("an image that failed to build fails the cluster", cluster(S.PENDING),
     Observed(images={"state": "failed", "message": "image spindle/kafka:4.0 failed"}),
     [("to", "FAILED", "IMAGE_FAILED")]),
    ("delete while its images build: destroyed without a launch", cluster(S.PENDING, delete=True),
     Observed(tasks={}, images={"state": "preparing", "message": "m"}),
     [("to", "DESTROYING"), ("ReleaseIps",), ("to", "DESTROYED")]),
    ("delete while pending: nothing was launched, IPs released, destroyed",
     cluster(S.PENDING, delete=True), Observed(tasks={}),
     [("to", "DESTROYING"), ("ReleaseIps",), ("to", "DESTROYED")]),
    # --- SCHEDULING / QUEUED ---------------------------------------------------------------------------
    ("scheduling, nothing placed yet, deadline ahead: nothing",
     cluster(S.SCHEDULING, member(state=M.PENDING, message="waiting"), deadline=LATER),
     Observed(tasks=tasks(task(state=M.PENDING, message="waiting"))), []),
    ("scheduling, a member placed: deploying",
     cluster(S.SCHEDULING, member(state=M.PENDING), deadline=LATER),
     Observed(tasks=tasks(task(state=M.LAUNCHING))), [("RecordMember", "m0"), ("to", "DEPLOYING")]),
    ("scheduling past its deadline: unplaceable with the scheduler's reason",
     cluster(S.SCHEDULING, member(state=M.PENDING, message="no hdd"), deadline=EARLIER),
     Observed(tasks=tasks(task(state=M.PENDING, message="no hdd"))), [("to", "FAILED", "UNPLACEABLE")]),
    ("queued never times out", cluster(S.QUEUED, member(state=M.PENDING), deadline=None),
     Observed(tasks=tasks(task(state=M.PENDING))), []),
    ("queued, placed: deploying", cluster(S.QUEUED, member(state=M.PENDING)),
     Observed(tasks=tasks(task(state=M.TASK_STARTING))), [("RecordMember", "m0"), ("to", "DEPLOYING")]),
    ("delete while scheduling: kill the waiting tasks first",
     cluster(S.SCHEDULING, member(state=M.PENDING), delete=True),
     Observed(tasks=tasks(task(state=M.PENDING))), [("to", "DESTROYING"), ("Kill",)]),
    # --- DEPLOYING ----------------------------------------------------------------------------------------
    ("deploying, all running: configuring", cluster(S.DEPLOYING, *RUNNING2[:1], member("m1", M.TASK_STARTING)),
     Observed(tasks=tasks(task("m0"), task("m1"))),
     [("RecordMember", "m1"), ("to", "CONFIGURING"), ("AnnounceHealthy",)]),
    ("deploying, still starting, deadline ahead: nothing",
     cluster(S.DEPLOYING, member(state=M.TASK_STARTING), deadline=LATER),
     Observed(tasks=tasks(task(state=M.TASK_STARTING))), []),
    ("deploying past its deadline: deploy timeout",
     cluster(S.DEPLOYING, member(state=M.TASK_STARTING), deadline=EARLIER),
     Observed(tasks=tasks(task(state=M.TASK_STARTING))), [("to", "FAILED", "DEPLOY_TIMEOUT")]),
    ("a member failing to start fails the launch (even with restart: replace)",
     cluster(S.DEPLOYING, member(state=M.TASK_STARTING, restart=REPLACE)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, message="image missing"))),
     [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_FAILED")]),
    ("a member that ran and died while others deploy is replaced",
     cluster(S.DEPLOYING, REPLACEABLE, member("m1", M.TASK_STARTING, dns="m1")),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, message="exit 137"), task("m1", M.TASK_STARTING))),
     [("RecordMember", "m0"), ("Relaunch", "m0")]),
    ("delete while deploying", cluster(S.DEPLOYING, member(state=M.TASK_STARTING), delete=True),
     Observed(tasks=tasks(task(state=M.TASK_STARTING))), [("to", "DESTROYING"), ("Kill",)]),
    # --- CONFIGURING --------------------------------------------------------------------------------------
    ("configuring, Consul passes for every member: running", cluster(S.CONFIGURING, *RUNNING2, deadline=LATER),
     Observed(tasks=tasks(task("m0"), task("m1")), consul_passing=frozenset({"m0", "m1"})), [("to", "RUNNING")]),
    ("configuring, one not passing yet: look again soon", cluster(S.CONFIGURING, *RUNNING2, deadline=LATER),
     Observed(tasks=tasks(task("m0"), task("m1")), consul_passing=frozenset({"m0"})), [("Recheck",)]),
    ("configuring past its deadline: discovery unhealthy", cluster(S.CONFIGURING, *RUNNING2, deadline=EARLIER),
     Observed(tasks=tasks(task("m0"), task("m1")), consul_passing=frozenset({"m0"})),
     [("to", "FAILED", "DISCOVERY_UNHEALTHY")]),
    ("configuring, members without DNS names need no Consul", cluster(S.CONFIGURING, member(dns=None)),
     Observed(tasks=tasks(task())), [("to", "RUNNING")]),
    ("configuring, a member dies without replace: failed", cluster(S.CONFIGURING, *RUNNING2),
     Observed(tasks=tasks(task("m0", M.TASK_FAILED), task("m1"))),
     [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_FAILED")]),
    ("delete while configuring", cluster(S.CONFIGURING, member(), delete=True),
     Observed(tasks=tasks(task())), [("to", "DESTROYING"), ("Kill",)]),
    # --- RUNNING ------------------------------------------------------------------------------------------
    ("running and nothing changed: nothing", cluster(S.RUNNING, *RUNNING2),
     Observed(tasks=tasks(task("m0"), task("m1"))), []),
    ("running, a member dies with restart: replace → relaunched, degraded",
     cluster(S.RUNNING, REPLACEABLE),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, message="exit 137"))),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, a lost task (TASK_LOST) with restart: replace → relaunched",
     cluster(S.RUNNING, REPLACEABLE), Observed(tasks=tasks(task(state=M.TASK_LOST))),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, a member dies without restart: member lost",
     cluster(S.RUNNING, member()), Observed(tasks=tasks(task(state=M.TASK_FAILED))),
     [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_LOST")]),
    ("running, a member finishes on its own: lost (not replaced)",
     cluster(S.RUNNING, REPLACEABLE), Observed(tasks=tasks(task(state=M.TASK_FINISHED))),
     [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_LOST")]),
    ("running, replacement budget exhausted: failed",
     cluster(S.RUNNING, member(restart=REPLACE, replacements=MAX_REPLACEMENTS)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, launches=MAX_REPLACEMENTS + 1))),
     [("RecordMember", "m0"), ("to", "FAILED", "REPLACEMENTS_EXHAUSTED")]),
    ("running, a member dies with restart: in_place (its disks kept) → relaunched, degraded",
     cluster(S.RUNNING, member(restart=IN_PLACE)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, message="exit 137", kept=True))),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, a member's node unreachable (restart: in_place): replaced elsewhere at once",
     cluster(S.RUNNING, member(restart=IN_PLACE)), Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE))),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, in_place budget exhausted: failed",
     cluster(S.RUNNING, member(restart=IN_PLACE, replacements=MAX_REPLACEMENTS)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, launches=MAX_REPLACEMENTS + 1, kept=True))),
     [("RecordMember", "m0"), ("to", "FAILED", "REPLACEMENTS_EXHAUSTED")]),
    ("deploying, an in_place member failing to start fails the launch",
     cluster(S.DEPLOYING, member(state=M.TASK_STARTING, restart=IN_PLACE)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, kept=True))),
     [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_FAILED")]),
    ("running, the scheduler lost the task (restart: replace): relaunched",
     cluster(S.RUNNING, REPLACEABLE), Observed(tasks={}),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, the scheduler lost the task (never): lost",
     cluster(S.RUNNING, member()), Observed(tasks={}), [("RecordMember", "m0"), ("to", "FAILED", "MEMBER_LOST")]),
    ("running, a member unreachable: degraded", cluster(S.RUNNING, member()),
     Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE))), [("RecordMember", "m0"), ("to", "DEGRADED")]),
    ("running, a member's node unreachable (restart: replace): replaced elsewhere at once",
     cluster(S.RUNNING, REPLACEABLE), Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE))),
     [("RecordMember", "m0"), ("Relaunch", "m0"), ("to", "DEGRADED")]),
    ("running, unreachable but replaced too often already: waits for its node",
     cluster(S.RUNNING, member(restart=REPLACE, replacements=MAX_REPLACEMENTS)),
     Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE, launches=MAX_REPLACEMENTS + 1))),
     [("RecordMember", "m0"), ("to", "DEGRADED")]),
    ("degraded, the unreachable member's node is back: running again",
     cluster(S.DEGRADED, member(state=M.TASK_UNREACHABLE), deadline=LATER),
     Observed(tasks=tasks(task())), [("RecordMember", "m0"), ("to", "RUNNING")]),
    ("degraded, unreachable (never) past the deadline: replacement timeout",
     cluster(S.DEGRADED, member(state=M.TASK_UNREACHABLE), deadline=EARLIER),
     Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE))), [("to", "FAILED", "REPLACEMENT_TIMEOUT")]),
    ("delete while a member is unreachable: kill (the scheduler ends it for Spindle)",
     cluster(S.RUNNING, member(state=M.TASK_UNREACHABLE), delete=True),
     Observed(tasks=tasks(task(state=M.TASK_UNREACHABLE))), [("to", "DESTROYING"), ("Kill",)]),
    ("delete while running", cluster(S.RUNNING, member(), delete=True), Observed(tasks=tasks(task())),
     [("to", "DESTROYING"), ("Kill",)]),
    # --- DEGRADED -----------------------------------------------------------------------------------------
    ("degraded, the replacement is back: running",
     cluster(S.DEGRADED, member(restart=REPLACE, state=M.TASK_STARTING, replacements=1), deadline=LATER),
     Observed(tasks=tasks(task(launches=2))), [("RecordMember", "m0"), ("to", "RUNNING")]),
    ("degraded, the replacement still waits for resources: nothing",
     cluster(S.DEGRADED, member(restart=REPLACE, state=M.PENDING, replacements=1), deadline=LATER),
     Observed(tasks=tasks(task(state=M.PENDING, launches=2))), []),
    ("degraded past its deadline: replacement timeout",
     cluster(S.DEGRADED, member(restart=REPLACE, state=M.PENDING, replacements=1), deadline=EARLIER),
     Observed(tasks=tasks(task(state=M.PENDING, launches=2))), [("to", "FAILED", "REPLACEMENT_TIMEOUT")]),
    ("degraded, the replacement dies too: replaced again",
     cluster(S.DEGRADED, member(restart=REPLACE, state=M.TASK_RUNNING, replacements=1), deadline=LATER),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, launches=2))), [("RecordMember", "m0"), ("Relaunch", "m0")]),
    ("delete while degraded", cluster(S.DEGRADED, member(state=M.PENDING), delete=True),
     Observed(tasks=tasks(task(state=M.PENDING))), [("to", "DESTROYING"), ("Kill",)]),
    # --- DESTROYING ---------------------------------------------------------------------------------------
    ("destroying, tasks still live and not asked to die: kill",
     cluster(S.DESTROYING, member()), Observed(tasks=tasks(task())), [("Kill",)]),
    ("destroying, kill already asked: wait", cluster(S.DESTROYING, member()),
     Observed(tasks=tasks(task(kill_requested=True))), []),
    ("destroying, jobs still run: stop them first", cluster(S.DESTROYING, member(state=M.TASK_KILLED)),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True)), jobs_running=1), [("StopJobs",)]),
    ("destroying, every task ended: release IPs, destroyed", cluster(S.DESTROYING, member(state=M.TASK_KILLED)),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True))),
     [("ReleaseIps",), ("to", "DESTROYED")]),
    ("destroying, a task just ended: record it, then finish", cluster(S.DESTROYING, member()),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True))),
     [("RecordMember", "m0"), ("ReleaseIps",), ("to", "DESTROYED")]),
    ("destroying after the scheduler forgot the cluster", cluster(S.DESTROYING, member()), Observed(tasks={}),
     [("ReleaseIps",), ("to", "DESTROYED")]),
    ("destroyed: nothing ever again", cluster(S.DESTROYED, member(), delete=True), Observed(tasks={}), []),
    # --- resize -------------------------------------------------------------------------------------------
    ("running, a count raised: resizing, the new members added", cluster(S.RUNNING, worker(1), worker(2),
                                                                          counts={"w": 4}),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("to", "RESIZING"), ("AddMembers",)]),
    ("running, counts as they are: nothing", cluster(S.RUNNING, worker(1), counts={"w": 1}),
     Observed(tasks=tasks(task("w-1"))), []),
    ("running, a count lowered: resizing, the last members killed", cluster(S.RUNNING, worker(1), worker(2),
                                                                             counts={"w": 1}),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("to", "RESIZING"), ("RemoveMembers",)]),
    ("resizing, a removed member's kill asked: nothing but waiting",
     cluster(S.RESIZING, worker(1), worker(2), counts={"w": 1}, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2", kill_requested=True))), []),
    ("resizing, a removed member ended: its IP released, its record dropped",
     cluster(S.RESIZING, worker(1), worker(2), counts={"w": 1}, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2", M.TASK_KILLED, kill_requested=True))), [("ForgetMembers",)]),
    ("resizing, new members still starting: nothing", cluster(S.RESIZING, worker(1), worker(2, M.PENDING),
                                                            counts={"w": 2}, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2", M.PENDING))), []),
    ("resizing, every member running: peers told, running", cluster(S.RESIZING, worker(1), worker(2),
                                                                   counts={"w": 2}, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("Reconfigure",), ("to", "RUNNING")]),
    ("resizing past its deadline: failed", cluster(S.RESIZING, worker(1), worker(2, M.PENDING), counts={"w": 2},
                                                   deadline=EARLIER),
     Observed(tasks=tasks(task("w-1"), task("w-2", M.PENDING))), [("to", "FAILED", "RESIZE_TIMEOUT")]),
    ("resizing, a new member failed to start: the cluster fails", cluster(S.RESIZING, worker(1), worker(2, M.PENDING),
                                                                        counts={"w": 2}, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2", M.TASK_FAILED))),
     [("RecordMember", "w-2"), ("to", "FAILED", "MEMBER_LOST")]),
    ("a count lowered for a role that drains: drained first, not killed",
     cluster(S.RUNNING, worker(1), worker(2), counts={"w": 1}, drains=DRAINS),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("to", "RESIZING"), ("Drain",)]),
    ("resizing, a member draining: ask whether it is drained, and again soon",
     cluster(S.RESIZING, worker(1), worker(2, drain="draining", since=EARLIER), counts={"w": 1}, drains=DRAINS,
             deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("CheckDrain",), ("Recheck",)]),
    ("resizing, a drain outlasting the resize's deadline: not failed, it has its own",
     cluster(S.RESIZING, worker(1), worker(2, drain="draining", since=EARLIER), counts={"w": 1}, drains=DRAINS,
             deadline=EARLIER),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("CheckDrain",), ("Recheck",)]),
    ("resizing, the member drained: removed now", cluster(S.RESIZING, worker(1), worker(2, drain="drained"),
                                                      counts={"w": 1}, drains=DRAINS, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("RemoveMembers",)]),
    ("resizing, a drain past its timeout: removed anyway",
     cluster(S.RESIZING, worker(1), worker(2, drain="draining", since=NOW - timedelta(seconds=601)), counts={"w": 1},
             drains=DRAINS, deadline=LATER),
     Observed(tasks=tasks(task("w-1"), task("w-2"))), [("RemoveMembers",)]),
    ("resizing, stop asked: stopping", cluster(S.RESIZING, worker(1), counts={"w": 1}, stop=True),
     Observed(tasks=tasks(task("w-1"))), [("to", "STOPPING"), ("Stop",)]),
    # --- stop / start ---------------------------------------------------------------------------------------
    ("running, stop asked: stopping, its members killed keeping their disks", cluster(S.RUNNING, member(), stop=True),
     Observed(tasks=tasks(task())), [("to", "STOPPING"), ("Stop",)]),
    ("degraded, stop asked: stopping too (no replacement after)",
     cluster(S.DEGRADED, member(restart=REPLACE, state=M.TASK_FAILED), stop=True),
     Observed(tasks=tasks(task(state=M.PENDING, launches=2))), [("to", "STOPPING"), ("RecordMember", "m0"), ("Stop",)]),
    ("scheduling, stop asked: not served yet, the flag waits", cluster(S.SCHEDULING, member(state=M.PENDING),
                                                                      stop=True, deadline=LATER),
     Observed(tasks=tasks(task(state=M.PENDING))), []),
    ("stopping, kills asked, jobs run: stop the jobs", cluster(S.STOPPING, member(), stop=True),
     Observed(tasks=tasks(task(kill_requested=True)), jobs_running=1), [("StopJobs",)]),
    ("stopping, a member died meanwhile: not replaced", cluster(S.STOPPING, REPLACEABLE, stop=True),
     Observed(tasks=tasks(task(state=M.TASK_FAILED, kill_requested=True, kept=True))),
     [("RecordMember", "m0"), ("to", "STOPPED")]),
    ("stopping, every task ended: stopped", cluster(S.STOPPING, member(state=M.TASK_KILLED), stop=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True, kept=True))), [("to", "STOPPED")]),
    ("stopping, start asked meanwhile: stops first", cluster(S.STOPPING, member()),
     Observed(tasks=tasks(task(kill_requested=True))), []),
    ("stopped: nothing", cluster(S.STOPPED, member(state=M.TASK_KILLED), stop=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True, kept=True))), []),
    ("stopped, start asked: launched again, queued (no deadline)", cluster(S.STOPPED, member(state=M.TASK_KILLED)),
     Observed(), [("Start",), ("to", "QUEUED")]),
    ("stopped, deleted: its kept disks released with the IPs", cluster(S.STOPPED, member(state=M.TASK_KILLED),
                                                                      stop=True, delete=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True, kept=True))),
     [("to", "DESTROYING"), ("Kill",), ("ReleaseIps",), ("to", "DESTROYED")]),
    ("stopped, deleted keeping disks: to a dataset", cluster(S.STOPPED, member(state=M.TASK_KILLED), stop=True,
                                                             delete=True, keep=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True, kept=True))),
     [("to", "DESTROYING"), ("KeepDisks",), ("ReleaseIps",), ("to", "DESTROYED")]),
    ("running, deleted keeping disks: killed keeping them", cluster(S.RUNNING, member(), delete=True, keep=True),
     Observed(tasks=tasks(task())), [("to", "DESTROYING"), ("Stop",)]),
    ("destroying keeping disks, a member kept none: nothing to keep", cluster(S.DESTROYING, member(), keep=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True))),
     [("RecordMember", "m0"), ("ReleaseIps",), ("to", "DESTROYED")]),
    ("destroying keeping disks, handed over before a crash: the dataset recorded again, then destroyed",
     cluster(S.DESTROYING, member(state=M.TASK_KILLED), keep=True, pending=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True))),
     [("KeepDisks",), ("ReleaseIps",), ("to", "DESTROYED")]),
    # --- FAILED -------------------------------------------------------------------------------------------
    ("failed before its dataset's disks were taken over: the dataset is kept again",
     cluster(S.FAILED, member(state=M.PENDING), keep=True, pending=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True))),
     [("RecordMember", "m0"), ("KeepDisks",), ("ReleaseIps",), ("MarkCleanedUp",)]),
    ("failed with a dataset: killed keeping disks", cluster(S.FAILED, member(), keep=True),
     Observed(tasks=tasks(task())), [("Stop",)]),
    ("failed with a dataset, ended: disks back to it, then cleaned", cluster(S.FAILED, member(state=M.TASK_KILLED),
                                                                           keep=True),
     Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True, kept=True))),
     [("KeepDisks",), ("ReleaseIps",), ("MarkCleanedUp",)]),
    ("failed, not cleaned up: kill", cluster(S.FAILED, member()), Observed(tasks=tasks(task())), [("Kill",)]),
    ("failed, every task ended: release and mark cleaned", cluster(S.FAILED, member(state=M.TASK_FAILED)),
     Observed(tasks=tasks(task(state=M.TASK_FAILED))), [("ReleaseIps",), ("MarkCleanedUp",)]),
    ("failed and cleaned up: settled", cluster(S.FAILED, member(), cleaned=True), Observed(tasks={}), []),
    ("delete of a failed, cleaned cluster: destroyed", cluster(S.FAILED, member(state=M.TASK_FAILED), cleaned=True,
                                                              delete=True),
     Observed(tasks=tasks(task(state=M.TASK_FAILED))), [("to", "DESTROYING"), ("ReleaseIps",), ("to", "DESTROYED")]),
]


@pytest.mark.parametrize("desired, observed, expected", [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_reconcile(desired, observed, expected):
    assert summary(reconcile(desired, observed, NOW)) == expected


def test_every_cluster_state_is_covered_by_the_table():
    assert {row[1].state for row in TABLE} == set(S)


def test_deadlines_come_from_now_and_the_timeouts():
    [_, move] = reconcile(cluster(S.PENDING), Observed(), NOW, Timeouts(scheduling_s=30))
    assert move.deadline == NOW + timedelta(seconds=30)
    [move, _] = reconcile(cluster(S.DEPLOYING, member()), Observed(tasks=tasks(task())), NOW,
                          Timeouts(configuring_s=7))
    assert (move.state, move.deadline) == (S.CONFIGURING, NOW + timedelta(seconds=7))


def test_a_replacement_says_which_it_is_and_what_it_saw():
    actions = reconcile(cluster(S.RUNNING, member(restart=REPLACE, replacements=1)),
                        Observed(tasks=tasks(task(state=M.TASK_FAILED, message="exit 137", launches=2))), NOW)
    [relaunch] = [a for a in actions if isinstance(a, Relaunch)]
    assert (relaunch.replacement, relaunch.launches_seen) == (2, 2)
    assert relaunch.reason == "replacement 2 after TASK_FAILED: exit 137"


def test_a_restart_mid_step_derives_the_same_actions_again():
    """Level-triggered: applying nothing and asking again gives the same answer (a crash between
    deciding and applying loses nothing), and applying it settles."""
    desired = cluster(S.DESTROYING, member())
    observed = Observed(tasks=tasks(task(state=M.TASK_KILLED, kill_requested=True)))
    first = reconcile(desired, observed, NOW)
    assert reconcile(desired, observed, NOW) == first
    settled = cluster(S.DESTROYED, member(state=M.TASK_KILLED))
    assert reconcile(settled, observed, NOW) == []


def test_failure_reasons_name_the_members():
    [*_, fail] = reconcile(cluster(S.RUNNING, *RUNNING2),
                           Observed(tasks=tasks(task("m0", M.TASK_FAILED, "exit 1"), task("m1"))), NOW)
    assert fail.reason == "m0: TASK_FAILED exit 1" and fail.code == "MEMBER_LOST"


def test_only_stop_jobs_and_kill_together_while_both_run():
    actions = reconcile(cluster(S.DESTROYING, member()), Observed(tasks=tasks(task()), jobs_running=2), NOW)
    assert [type(a) for a in actions] == [StopJobs, Kill]
    assert not any(isinstance(a, (ReleaseIps, MarkCleanedUp, Launch)) for a in actions)
