"""A framework on a real task store, with a driver that records what it would tell the master."""
from types import SimpleNamespace

import pytest

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore
from tests.support.framework import RecordingDriver


@pytest.fixture
def setup(fresh_database):
    migrations.upgrade("spindle_scheduler", fresh_database)
    store = TaskStore(session_factory(fresh_database))
    store.add([Task(task_id="m0.a", cluster_id="c1", member_id="m0", request={"cpus": 1, "mem_mb": 64},
                    state="TASK_RUNNING", hostname="spdl-n1", agent_id="agent-1", launches=1)])
    released: list[list[str]] = []
    launcher = SimpleNamespace(release_disks=lambda owners: released.append(list(owners)))
    framework = SpindleFramework(store, launcher, release=lambda task: released.append([task.member_id]))
    return framework, store, RecordingDriver(), released
