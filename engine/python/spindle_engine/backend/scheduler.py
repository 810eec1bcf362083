"""Runs a stage's tasks on a worker's slots: cache locality, per-task retry on executor loss."""

import sys
import threading
import time
from collections import deque

from ..errors import EngineError
from ..rpc import ttypes
from ..status import report_locality
from .executors import ExecutorLost
from .locality import LEVELS, NODE_LOCAL, candidates, summary
from .remote import AgentUnreachable


class OutputsLost(Exception):
    """A task could not fetch an input from `host` (FETCH.md): outputs there are gone.
    `done` maps the partitions that did complete to their results."""

    def __init__(self, host, done):
        super().__init__(f"outputs on {host} are lost")
        self.host = host
        self.done = done


class TaskSpec:
    """A task to run; `plan(attempt)` builds its thrift Task at dispatch time.

    `plan` returns (Task, preferred ExecutorProcess or None); it is called again on every
    attempt so a lost cached partition is recomputed from lineage.
    """

    def __init__(self, stage, partition, plan, functions=(), nodes=None):
        self.stage = stage
        self.partition = partition
        self.plan = plan
        self.functions = functions
        self.nodes = nodes  # nodes holding its input (HDFS block replicas), None: anywhere
        self._planned = None  # (attempt, Task, preferred, its generation)

    def planned(self, attempt):
        """plan(attempt), computed once: a slot looks at every pending task each time it takes
        one. Planned again for a new attempt, after forget_plan(), or when the executor it
        preferred is gone or was restarted (its cached partition went with it)."""
        if self._planned is not None:
            planned_attempt, task, preferred, generation = self._planned
            if planned_attempt == attempt and (preferred is None or (
                    preferred.alive() and preferred.generation == generation)):
                return task, preferred
        task, preferred = self.plan(attempt)
        self._planned = (attempt, task, preferred,
                         None if preferred is None else preferred.generation)
        return task, preferred

    def forget_plan(self):
        """Plan the next try afresh (its cached input was missing, or its host lost)."""
        self._planned = None


def _describe(spec):
    fns = ", ".join(spec.functions) if spec.functions else "no user function"
    return f"partition {spec.partition} of {spec.stage} ({fns})"


class StageRun:
    """State of one stage while its tasks run."""

    def __init__(self, worker, specs):
        self.worker = worker
        self.specs = specs
        self.results = [None] * len(specs)
        self.attempts = [0] * len(specs)
        self.pending = deque(range(len(specs)))
        self.running = 0
        self.error = None
        self.lost_host = None
        self.cond = threading.Condition()
        self.locality = {}  # level -> tasks launched at it (tasks with a node preference)
        self.locality_wait = float(worker.properties.get("locality.wait_s", "3"))
        self.last_local = time.monotonic()

    def _take(self, slot):
        """Next task index for `slot`, with its planned Task; None when the stage is over.

        A task kept in an executor's memory goes to that executor; one that prefers nodes
        goes node-local when it can (locality.py)."""
        ex = slot.executor
        with self.cond:
            while True:
                if self.error is not None or self.lost_host is not None or ex.down \
                        or (not self.pending and self.running == 0):
                    return None, None
                order = list(self.pending)
                live = {x.node for x in self.worker.executors if x.alive()}
                waited_out = time.monotonic() - self.last_local >= self.locality_wait
                for k, level in candidates([self.specs[i].nodes for i in order], ex.node, live,
                                           waited_out):
                    i = order[k]
                    task, preferred = self.specs[i].planned(self.attempts[i])
                    if preferred is None or preferred is ex:
                        self.pending.remove(i)
                        self.running += 1
                        if level is not None:
                            self.locality[level] = self.locality.get(level, 0) + 1
                        if level == NODE_LOCAL:
                            self.last_local = time.monotonic()
                        return i, task
                self.cond.wait(0.05)

    def _finish(self, i, result=None, retry=False, error=None, lost_host=None):
        with self.cond:
            self.running -= 1
            if lost_host is not None or retry:
                self.specs[i].forget_plan()
            if lost_host is not None:
                self.lost_host = self.lost_host or lost_host
                self.pending.append(i)
            elif error is not None and self.error is None:
                self.error = error
            elif retry:
                self.pending.append(i)
            elif result is not None:
                self.results[i] = result
            self.cond.notify_all()

    def loop(self, slot):
        while True:
            i, task = self._take(slot)
            if i is None:
                return
            spec = self.specs[i]
            ex = slot.executor
            generation = ex.generation
            try:
                slot.connect(self.worker.properties)
                result = slot.run(task)
            except ttypes.TaskError as e:
                if e.kind == "CACHE_MISS":
                    self._finish(i, retry=True)
                    continue
                if e.kind == "FETCH_FAILED" and e.host:
                    self.worker.metrics["fetch_failures"] += 1
                    self._finish(i, lost_host=e.host)
                    continue
                self._finish(i, error=EngineError(
                    f"{e.kind}: function {e.function or '-'} failed on {_describe(spec)} "
                    f"on {ex.name}: {e.message}",
                    kind=e.kind, function=e.function, partition=spec.partition,
                    stage=spec.stage))
                continue
            except ExecutorLost as e:
                self.attempts[i] += 1
                self.worker.metrics["executors_lost"] += 1
                try:
                    ex.restart_if(generation)
                except AgentUnreachable as restart_error:  # its host is gone: others go on
                    if any(not x.down for x in self.worker.executors):
                        # what it held is lost with it: recompute that now rather than
                        # wait for a task's fetch from the vanished host to fail
                        self._finish(i, lost_host=ex.file_server)
                    else:
                        self._finish(i, error=restart_error)
                    continue
                except EngineError as restart_error:
                    self._finish(i, error=restart_error)
                    continue
                if self.attempts[i] >= self.worker.max_failures:
                    self._finish(i, error=EngineError(
                        f"EXECUTOR_LOST: {ex.name} was lost {self.attempts[i]} times running "
                        f"{_describe(spec)} ({e})", kind="EXECUTOR_LOST",
                        function=", ".join(spec.functions), partition=spec.partition,
                        stage=spec.stage))
                else:
                    self._finish(i, retry=True)
                continue
            except Exception as e:  # noqa: BLE001 - surface anything else as a stage failure
                self._finish(i, error=EngineError(f"{type(e).__name__}: {e} on {_describe(spec)}",
                                                  partition=spec.partition, stage=spec.stage))
                continue
            self.worker.metrics["spill_files"] += result.spill_files or 0
            self.worker.metrics["spill_bytes"] += result.spill_bytes or 0
            self.worker.metrics["tasks"] += 1
            result.executor = ex
            self._finish(i, result=result)


def run_stage(worker, specs):
    """Run `specs` on all slots of `worker`; return their TaskResults in order."""
    if not specs:
        return []
    run = StageRun(worker, specs)
    threads = [threading.Thread(target=run.loop, args=(s,), daemon=True) for s in worker.slots]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if run.locality:
        _report_locality(worker, specs[0].stage, run.locality)
    if run.error is not None:
        raise run.error
    if run.lost_host is not None:
        raise OutputsLost(run.lost_host, {specs[i].partition: r
                                          for i, r in enumerate(run.results) if r is not None})
    return run.results


def _report_locality(worker, stage, counts):
    """Print the stage's locality line, keep it in the worker's metrics and tell the cluster's
    status member (cluster mode)."""
    print(f"{stage}: {summary(counts)}", file=sys.stderr, flush=True)
    entry = {"stage": stage, **{level: counts.get(level, 0) for level in LEVELS}}
    worker.locality.append(entry)
    for level in LEVELS:
        worker.metrics[f"tasks_{level}"] = worker.metrics.get(f"tasks_{level}", 0) \
            + counts.get(level, 0)
    report_locality(worker.cluster.engine.id, entry)
