"""Which ended tasks are replaced: members of products that ask for it, that were running and died
(not killed on purpose, not failing to start), at most MAX_REPLACEMENTS times."""
from types import SimpleNamespace

import pytest

from spindle_scheduler.mesos.framework import MAX_REPLACEMENTS, replaceable


def task(state="TASK_RUNNING", restart="replace", replacements=0, kill_requested=False):
    return SimpleNamespace(state=state, kill_requested=kill_requested,
                           request={"restart": restart, "replacements": replacements})


@pytest.mark.parametrize("ended", ["TASK_FAILED", "TASK_LOST", "TASK_GONE"])
def test_a_running_member_that_dies_is_replaced(ended):
    assert replaceable(task(), ended)


@pytest.mark.parametrize("member, ended", [
    (task(restart="never"), "TASK_FAILED"),                       # the product does not ask for it
    (task(), "TASK_FINISHED"),                                    # it ended on its own
    (task(), "TASK_KILLED"),                                      # killed
    (task(kill_requested=True), "TASK_FAILED"),                   # its cluster is going away
    (task(state="TASK_STARTING"), "TASK_FAILED"),                 # it never ran: a broken image loops
    (task(replacements=MAX_REPLACEMENTS), "TASK_FAILED"),         # enough
])
def test_others_are_not(member, ended):
    assert not replaceable(member, ended)
