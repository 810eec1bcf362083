"""The worker's own logic, without services: wake-ups that come together are one round each
cluster, rounds go on while they move a cluster on (bounded), a failed round is retried after 1 s."""
from types import SimpleNamespace

from spindle_orchestrator.worker import MAX_ROUNDS, Worker


class Lifecycle:
    """Moves a cluster on ``moves`` times, then not; raises on the rounds listed in ``fail_on``."""

    def __init__(self, moves: int = 0, fail_on: tuple[int, ...] = ()):
        self.moves, self.fail_on, self.calls = moves, fail_on, 0
        self.settings = SimpleNamespace()

    def advance(self, cluster_id: str) -> bool:
        self.calls += 1
        if self.calls in self.fail_on:
            raise RuntimeError("scheduler unreachable")
        return self.calls <= self.moves


def worker_with(lifecycle: Lifecycle) -> tuple[Worker, list[tuple[str, float]]]:
    worker = Worker(lifecycle)  # type: ignore[arg-type]
    later: list[tuple[str, float]] = []
    worker.wake_after = lambda cluster_id, seconds: later.append((cluster_id, seconds))  # type: ignore[method-assign]
    return worker, later


def test_wake_ups_that_come_together_are_one_round_each():
    worker, _ = worker_with(Lifecycle())
    for cluster_id in ("c1", "c2", "c1", "c1"):
        worker.wake(cluster_id)
    assert worker._due(0.1) == {"c1", "c2"}
    assert worker._due(0.01) == set()


def test_rounds_go_on_while_they_move_the_cluster_on():
    lifecycle = Lifecycle(moves=2)
    worker, later = worker_with(lifecycle)
    worker.advance("c1")
    assert (lifecycle.calls, worker.rounds, later) == (3, 3, [])  # moved, moved, settled


def test_rounds_are_bounded():
    lifecycle = Lifecycle(moves=100)
    worker, _ = worker_with(lifecycle)
    worker.advance("c1")
    assert lifecycle.calls == MAX_ROUNDS


def test_a_failed_round_is_tried_again_after_a_second_and_forgotten_once_it_works():
    lifecycle = Lifecycle(fail_on=(1,))
    worker, later = worker_with(lifecycle)
    worker.advance("c1")
    assert later == [("c1", 1.0)] and "c1" in worker.failing
    worker.advance("c1")  # the retry works
    assert worker.failing == {}
