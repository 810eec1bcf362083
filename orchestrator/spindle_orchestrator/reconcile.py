"""Every state decision of a cluster and its members, as one pure function (Nomad's reconciler,
a Kubernetes controller's level-triggered loop):

    reconcile(desired, observed, now, timeouts) -> [actions]

``desired`` is what the orchestrator has recorded (the user's request, the cluster's state, each
member's last known state); ``observed`` is what the other services report now (the scheduler's
tasks, Consul's passing checks, running jobs, the outcome of a launch just tried). The result says
what to do, each action with its reason; the worker (``lifecycle.py``) applies them. Because every
action is re-derived from current state, a crash between two actions is harmless: the next round
derives the rest again.

Cluster states: PENDING → SCHEDULING (or QUEUED) → DEPLOYING → CONFIGURING → RUNNING ⇄ DEGRADED;
RUNNING ⇄ RESIZING (the owner changed a role's count: members added with fresh disks and IPs,
removed ones killed and their disks wiped, then the members told their new peers);
RUNNING/DEGRADED → STOPPING → STOPPED (containers gone, disks and floating IPs kept) → QUEUED (the
members launched again on their kept disks) → … → RUNNING; any → FAILED (reason code) → cleaned up;
any → DESTROYING → DESTROYED (with ``keep_disks``, the members' disks become a dataset of the owner
instead of being wiped).
"""
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from spindle_common.contracts import (
    DIED_TASK_STATES,
    RELAUNCHED,
    TERMINAL_TASK_STATES,
    ClusterState,
    MemberState,
    RestartPolicy,
    TaskView,
)

S = ClusterState
# How often one member is launched again after dying before its cluster is left to fail.
MAX_REPLACEMENTS = 3
# States in which the cluster's members are with the scheduler and are followed.
FOLLOWED = frozenset({S.QUEUED, S.SCHEDULING, S.DEPLOYING, S.CONFIGURING, S.RUNNING, S.DEGRADED, S.RESIZING})
# States in which every member has been running (a member that dies then is "lost", not "failed").
SERVED = frozenset({S.RUNNING, S.DEGRADED, S.RESIZING})
# How often a member being drained is asked about (its product's ``done`` check).
DRAIN_POLL_S = 5.0
# Task states after which a member with ``restart: replace`` (or ``in_place``) is launched again (the
# scheduler decides where: ``in_place`` on the disks it kept when its container ended on a live node).
REPLACEABLE = DIED_TASK_STATES | {MemberState.TASK_UNREACHABLE}


# --- what goes in --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberRecord:
    """A member as the orchestrator last recorded it."""

    member_id: str
    restart: RestartPolicy = RestartPolicy.NEVER
    state: MemberState = MemberState.PENDING
    message: str = ""
    replacements: int = 0
    dns_name: str | None = None
    role: str = ""
    index: int = 0
    drain: str | None = None  # a resize removing it: "draining", then "drained"
    drain_since: datetime | None = None


@dataclass(frozen=True)
class Desired:
    """The cluster as the orchestrator keeps it."""

    cluster_id: str
    state: ClusterState
    members: tuple[MemberRecord, ...] = ()
    delete_requested: bool = False
    deadline: datetime | None = None
    cleaned_up: bool = False
    wait_for_resources: bool = False
    stop_requested: bool = False  # the owner wants it stopped (cleared again by a start)
    # How many members of each role it should have (its options); None: as many as recorded.
    counts: dict[str, int] | None = None
    # Roles whose members are drained before a resize removes them, and for how long at most (s).
    drains: dict[str, float] = field(default_factory=dict)
    keep_disks: bool = False  # its end keeps the members' disks as a dataset (a delete asked it, or a
    # failed cluster hands a dataset's disks back)
    keep_pending: bool = False  # its dataset does not hold them yet (it is KEEPING, or still ATTACHED)


@dataclass(frozen=True)
class Observed:
    """What the other services report now. ``tasks`` is None when they were not asked (the state
    needs none); an empty dict means the scheduler has no task of this cluster."""

    tasks: dict[str, TaskView] | None = None
    consul_passing: frozenset[str] = frozenset()  # member ids whose DNS name Consul answers for
    jobs_running: int = 0
    launch_error: tuple[str, str] | None = None  # (code, message) of the launch just tried
    # PENDING only: the product's images (spindle_common.images.product_state): "ready", or
    # "preparing" / "failed" with a message while deploy/up builds them in the background.
    images: dict | None = None


@dataclass(frozen=True)
class Timeouts:
    scheduling_s: float = 120.0
    deploying_s: float = 600.0
    configuring_s: float = 120.0


# --- what comes out ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    reason: str


@dataclass(frozen=True)
class Launch(Action):
    """Hold the members' floating IPs, render their containers and hand the cluster to the scheduler."""


@dataclass(frozen=True)
class AwaitImages(Action):
    """The product's images are still being built: say so in the timeline (once per change)."""


# How often a launch waiting for its product's images looks again.
IMAGE_POLL_S = 5.0


@dataclass(frozen=True)
class RecordMember(Action):
    """A member's task changed: record what the scheduler reports (state, node, IP, disks)."""

    member_id: str = ""
    task: TaskView | None = None


@dataclass(frozen=True)
class Relaunch(Action):
    """Launch a member that died again (fresh disks, the same floating IP and DNS name)."""

    member_id: str = ""
    replacement: int = 0  # which replacement this is (1 = the first)
    launches_seen: int = 0  # the task's launch count this decision saw (a repeat is a no-op)


@dataclass(frozen=True)
class StopJobs(Action):
    """Stop the cluster's running jobs."""


@dataclass(frozen=True)
class Kill(Action):
    """Kill every task of the cluster that has not ended."""


@dataclass(frozen=True)
class AddMembers(Action):
    """Hold floating IPs for the new members (role, index), render them and hand them to the scheduler."""

    members: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Drain(Action):
    """Start draining members a resize removes (their product is told they are leaving)."""

    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckDrain(Action):
    """Ask the product whether the members being drained are drained yet."""

    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class RemoveMembers(Action):
    """Kill the tasks of members the cluster no longer has (their disks are released and wiped)."""

    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ForgetMembers(Action):
    """Removed members whose tasks ended: release their floating IPs and DNS names, drop their records."""

    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reconfigure(Action):
    """Render every member's config again with its peers as they are now and, where it changed, put it
    into the running member and run its product's reload."""


@dataclass(frozen=True)
class Stop(Action):
    """Kill every task of the cluster that has not ended, its members keeping their disks."""


@dataclass(frozen=True)
class Start(Action):
    """Launch the stopped cluster's members again, on their kept disks, with their floating IPs."""


@dataclass(frozen=True)
class KeepDisks(Action):
    """Hand the ended members' kept disks to the owner's dataset (with their data)."""


@dataclass(frozen=True)
class ReleaseIps(Action):
    """Give back every floating IP and DNS name the cluster's members hold."""


@dataclass(frozen=True)
class Transition(Action):
    state: ClusterState = S.PENDING
    code: str | None = None  # machine-readable reason (FAILED)
    deadline: datetime | None = None


@dataclass(frozen=True)
class AnnounceHealthy(Action):
    """Every member's health check just passed: let their DNS names resolve at once."""


@dataclass(frozen=True)
class Recheck(Action):
    """Look again after ``after_s`` seconds: what is awaited (Consul's first passing check) sends
    no notification of its own."""

    after_s: float = 0.2


@dataclass(frozen=True)
class MarkCleanedUp(Action):
    """A failed cluster holds nothing any more."""


@dataclass
class _Plan:
    now: datetime
    timeouts: Timeouts
    actions: list[Action] = field(default_factory=list)

    def to(self, state: ClusterState, reason: str, deadline_s: float | None = None, code: str | None = None) -> None:
        deadline = self.now + timedelta(seconds=deadline_s) if deadline_s else None
        self.actions.append(Transition(reason, state, code, deadline))


# --- the decisions -------------------------------------------------------------------------------


def reconcile(desired: Desired, observed: Observed, now: datetime, timeouts: Timeouts = Timeouts()) -> list[Action]:
    """Every action the cluster needs now, in the order they must be applied."""
    plan = _Plan(now, timeouts)
    state = desired.state
    if state == S.DESTROYED or (state == S.FAILED and desired.cleaned_up and not desired.delete_requested):
        return []
    if desired.delete_requested and state not in (S.DESTROYING, S.DESTROYED):
        plan.to(S.DESTROYING, "deletion requested")
        state = S.DESTROYING
    if state in SERVED and desired.stop_requested:
        plan.to(S.STOPPING, "stop requested")
        state = S.STOPPING
    if state in (S.DESTROYING, S.FAILED):
        _give_back(desired, observed, plan, state)
    elif state == S.PENDING:
        _launch(desired, observed, plan)
    elif state == S.STOPPING:
        _stop(desired, observed, plan)
    elif state == S.STOPPED:
        if not desired.stop_requested:
            plan.actions.append(Start("start requested"))
            plan.to(S.QUEUED, "starting: members waiting for their nodes' offers")
    elif state in FOLLOWED:
        _follow(desired, observed, plan)
    return plan.actions


def _launch(desired: Desired, observed: Observed, plan: _Plan) -> None:
    if observed.launch_error:
        code, message = observed.launch_error
        plan.to(S.FAILED, message, code=code)
        return
    images = observed.images or {"state": "ready"}
    if images["state"] == "failed":
        plan.to(S.FAILED, f"the product's {images['message']}", code="IMAGE_FAILED")
        return
    if images["state"] != "ready":
        plan.actions.append(AwaitImages(f"waiting for the product's {images['message']}"))
        plan.actions.append(Recheck("its images may be ready then", IMAGE_POLL_S))
        return
    plan.actions.append(Launch(f"{len(desired.members) or 'all'} members to place"))
    if desired.wait_for_resources:
        plan.to(S.QUEUED, "members queued until resources are free")
    else:
        plan.to(S.SCHEDULING, "placing members", plan.timeouts.scheduling_s)


def _leaving(desired: Desired) -> list[MemberRecord]:
    """Members of a role whose count went below their index (a resize removes them)."""
    counts = desired.counts
    return [m for m in desired.members if counts is not None and m.index > counts.get(m.role, m.index)]


def _missing(desired: Desired) -> list[tuple[str, int]]:
    """(role, index) of members the counts ask for that are not recorded yet (a resize adds them)."""
    have = {(m.role, m.index) for m in desired.members}
    return [(role, i) for role, count in sorted((desired.counts or {}).items()) for i in range(1, count + 1)
            if (role, i) not in have]


def _resize(desired: Desired, observed: Observed, plan: _Plan) -> bool:
    """A served cluster whose counts changed: add what is missing, kill what leaves, forget what left.
    True while the resize is under way (the rest of ``_follow`` then ignores the leaving members)."""
    tasks = observed.tasks or {}
    missing, leaving = _missing(desired), _leaving(desired)
    if not missing and not leaving:
        return False
    if desired.state != S.RESIZING:
        plan.to(S.RESIZING, f"resizing: {len(missing)} members to add, {len(leaving)} to remove",
                plan.timeouts.deploying_s)
    if missing:
        plan.actions.append(AddMembers(f"adding {', '.join(f'{r}-{i}' for r, i in missing)}", tuple(missing)))
    # A member of a role that drains goes once drained (or its drain timed out), the others at once.
    draining = [m for m in leaving if m.role in desired.drains and m.drain != "drained"
                and not _drain_expired(m, desired.drains[m.role], plan.now)]
    start = [m.member_id for m in draining if m.drain is None]
    if start:
        plan.actions.append(Drain(f"draining {', '.join(start)} before removing them", tuple(start)))
    waiting = [m.member_id for m in draining if m.drain == "draining"]
    if waiting:
        plan.actions.append(CheckDrain(f"are {', '.join(waiting)} drained?", tuple(waiting)))
        plan.actions.append(Recheck(f"waiting for {', '.join(waiting)} to drain", DRAIN_POLL_S))
    gone_soon = {m.member_id for m in draining}
    live = [m.member_id for m in leaving if m.member_id not in gone_soon and (t := tasks.get(m.member_id)) is not None
            and t.state not in TERMINAL_TASK_STATES and not t.kill_requested]
    if live:
        plan.actions.append(RemoveMembers(f"removing {', '.join(live)}", tuple(live)))
    gone = [m.member_id for m in leaving if (t := tasks.get(m.member_id)) is None or t.state in TERMINAL_TASK_STATES]
    if gone:
        plan.actions.append(ForgetMembers(f"{', '.join(gone)} removed; their IPs released", tuple(gone)))
    return True


def _drain_expired(member: MemberRecord, timeout_s: float, now: datetime) -> bool:
    return member.drain_since is not None and now - member.drain_since > timedelta(seconds=timeout_s)


def _follow(desired: Desired, observed: Observed, plan: _Plan) -> None:
    tasks = observed.tasks or {}
    state = desired.state
    expired = desired.deadline is not None and plan.now > desired.deadline
    resizing = state in SERVED and _resize(desired, observed, plan)
    leaving = {m.member_id for m in _leaving(desired)} if resizing else set()
    current: dict[str, MemberState] = {}
    dead: list[tuple[MemberRecord, TaskView]] = []
    relaunched: list[str] = []
    for member in desired.members:
        if member.member_id in leaving:  # being removed: its end is expected (then ForgetMembers drops it)
            task = tasks.get(member.member_id)
            if task is not None and task.state not in TERMINAL_TASK_STATES and \
                    (task.state, task.message) != (member.state, member.message):
                plan.actions.append(RecordMember(f"task {task.state}", member.member_id, task))
            continue
        task = tasks.get(member.member_id)
        if task is None:  # the scheduler does not know it (its state was lost): the member is lost
            task = TaskView(task_id="", cluster_id=desired.cluster_id, member_id=member.member_id,
                            state=MemberState.TASK_LOST, message="the scheduler has no task for this member",
                            launches=member.replacements + 1)
        if (task.state, task.message) != (member.state, member.message):
            plan.actions.append(RecordMember(f"task {task.state}", member.member_id, task))
        current[member.member_id] = task.state
        if task.state == MemberState.TASK_UNREACHABLE and not task.kill_requested:
            # Its node stopped answering: a member that may be replaced runs elsewhere now (same IP and
            # name; the scheduler kills the old task if the node returns); any other waits for its node.
            if _replaceable(member, task, state):
                plan.actions.append(Relaunch(f"replacement {task.launches} while {task.message}",
                                             member.member_id, task.launches, task.launches))
                relaunched.append(member.member_id)
        elif task.state in TERMINAL_TASK_STATES and not task.kill_requested:
            if _replaceable(member, task, state):
                replacement = task.launches  # launches so far = replacements so far + 1
                plan.actions.append(Relaunch(f"replacement {replacement} after {task.state}: {task.message}",
                                             member.member_id, replacement, task.launches))
                relaunched.append(member.member_id)
            else:
                dead.append((member, task))
    if dead:
        served = state in SERVED
        exhausted = [m for m, t in dead if m.restart in RELAUNCHED and t.launches > MAX_REPLACEMENTS]
        code = "REPLACEMENTS_EXHAUSTED" if exhausted and served else ("MEMBER_LOST" if served else "MEMBER_FAILED")
        plan.to(S.FAILED, "; ".join(f"{m.member_id}: {t.state} {t.message}".strip() for m, t in dead)
                + (f" (replaced {MAX_REPLACEMENTS} times already)" if code == "REPLACEMENTS_EXHAUSTED" else ""),
                code=code)
        return
    running = all(s == MemberState.TASK_RUNNING for s in current.values()) and bool(current)
    if resizing:
        # A drain under way has its own timeout (the product's drain.timeout_s), not the resize's deadline.
        if expired and not any(m.drain == "draining" for m in _leaving(desired)):
            slow = [m for m, s in current.items() if s != MemberState.TASK_RUNNING]
            plan.to(S.FAILED, f"resize not done within {plan.timeouts.deploying_s:.0f} s (members "
                    f"{', '.join(slow) or 'removed'} not settled)", code="RESIZE_TIMEOUT")
        return
    if state == S.RESIZING:
        if running:
            plan.actions.append(Reconfigure("every member running: tell them their peers"))
            plan.to(S.RUNNING, "resized: every member running")
        elif expired:
            slow = [m for m, s in current.items() if s != MemberState.TASK_RUNNING]
            plan.to(S.FAILED, f"members {', '.join(slow)} not running within {plan.timeouts.deploying_s:.0f} s",
                    code="RESIZE_TIMEOUT")
        return
    if state in SERVED:
        if relaunched or not running:
            if state == S.RUNNING:
                if relaunched:
                    why = f"members {', '.join(relaunched)} being replaced"
                else:
                    why = "members " + ", ".join(f"{m} {s.value}" for m, s in current.items()
                                                 if s != MemberState.TASK_RUNNING)
                plan.to(S.DEGRADED, why, plan.timeouts.deploying_s)
            elif expired:
                slow = [m for m, s in current.items() if s != MemberState.TASK_RUNNING]
                plan.to(S.FAILED, f"members {', '.join(slow)} not back within {plan.timeouts.deploying_s:.0f} s",
                        code="REPLACEMENT_TIMEOUT")
        elif state == S.DEGRADED:
            plan.to(S.RUNNING, "every member running again")
        return
    if state == S.CONFIGURING:
        if not running:  # a member stopped running before discovery was confirmed
            plan.to(S.DEPLOYING, "members restarting", plan.timeouts.deploying_s)
            return
        waiting = [m.member_id for m in desired.members if m.dns_name and m.member_id not in observed.consul_passing]
        if not waiting:
            plan.to(S.RUNNING, "every member healthy and resolvable")
        elif expired:
            plan.to(S.FAILED, f"not passing in Consul: {', '.join(waiting)}", code="DISCOVERY_UNHEALTHY")
        else:
            plan.actions.append(Recheck(f"waiting for Consul to pass {', '.join(waiting)}"))
        return
    if running:
        plan.to(S.CONFIGURING, "all members healthy", plan.timeouts.configuring_s)
        plan.actions.append(AnnounceHealthy("every member's executor found it healthy"))
    elif any(s != MemberState.PENDING for s in current.values()) and state != S.DEPLOYING:
        plan.to(S.DEPLOYING, "members placed, starting containers", plan.timeouts.deploying_s)
    elif expired and state == S.SCHEDULING:
        why = next((t.message for t in tasks.values() if t.message), "no offer fitted")
        plan.to(S.FAILED, why, code="UNPLACEABLE")
    elif expired and state == S.DEPLOYING:
        slow = [m for m, s in current.items() if s != MemberState.TASK_RUNNING]
        plan.to(S.FAILED, f"members {', '.join(slow)} not healthy within {plan.timeouts.deploying_s:.0f} s",
                code="DEPLOY_TIMEOUT")


def _replaceable(member: MemberRecord, task: TaskView, state: ClusterState) -> bool:
    """A member whose product asks for it, that had been running and died (not finished, not
    killed by us), with replacements left."""
    was_running = state in SERVED or member.state == MemberState.TASK_RUNNING
    return (member.restart in RELAUNCHED and was_running and task.state in REPLACEABLE
            and task.launches <= MAX_REPLACEMENTS)


def _end_tasks(desired: Desired, observed: Observed, plan: _Plan, keep_disks: bool) -> bool:
    """Record what changed, stop the jobs, kill the tasks not ended (keeping their members' disks, or
    not); True once every task and job has ended."""
    tasks = observed.tasks or {}
    for member in desired.members:
        task = tasks.get(member.member_id)
        if task is not None and (task.state, task.message) != (member.state, member.message):
            plan.actions.append(RecordMember(f"task {task.state}", member.member_id, task))
    if observed.jobs_running:
        plan.actions.append(StopJobs(f"{observed.jobs_running} jobs still run"))
    live = [t for t in tasks.values() if t.state not in TERMINAL_TASK_STATES]
    if live and not all(t.kill_requested for t in live):
        plan.actions.append(Stop(f"{len(live)} tasks still live; their disks kept") if keep_disks
                            else Kill(f"{len(live)} tasks still live"))
    return not live and not observed.jobs_running


def _stop(desired: Desired, observed: Observed, plan: _Plan) -> None:
    """STOPPING: jobs stopped and members killed keeping their disks; then STOPPED (IPs kept too)."""
    if _end_tasks(desired, observed, plan, keep_disks=True):
        plan.to(S.STOPPED, "every container stopped; disks and floating IPs kept")


def _give_back(desired: Desired, observed: Observed, plan: _Plan, state: ClusterState) -> None:
    """DESTROYING, or FAILED not yet cleaned up: stop jobs, kill tasks; once every task has ended,
    hand kept disks to the dataset (``keep_disks``) or have them released, free the IPs and finish."""
    if state == S.FAILED and desired.cleaned_up:
        return
    if not _end_tasks(desired, observed, plan, keep_disks=desired.keep_disks):
        return
    kept = ", ".join(sorted(t.member_id for t in (observed.tasks or {}).values() if t.disks_kept))
    if desired.keep_disks and (kept or desired.keep_pending):  # to the owner's dataset
        plan.actions.append(KeepDisks(f"members {kept or 'none'} keep their disks as a dataset"))
    elif kept:  # disks stopped members kept: released now like the others'
        plan.actions.append(Kill(f"members {kept} release the disks they kept"))
    plan.actions.append(ReleaseIps("every task has ended"))
    if state == S.DESTROYING:
        plan.to(S.DESTROYED, "every container removed, disks wiped, IPs freed")
    else:
        plan.actions.append(MarkCleanedUp("resources of the failed launch released"))
