"""Engine test fixtures: one engine per session, a 2-executor Python worker."""

import os

import pytest

from spindle_engine import Cluster, Engine, Properties, Worker

TESTS = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def fn():
    """Reference to a test function: fn('ops.py:AddOne') -> '<tests>/functions/ops.py:AddOne'."""
    return lambda ref: os.path.join(TESTS, "functions", ref)


@pytest.fixture(scope="session")
def engine():
    with Engine.start() as e:
        yield e


@pytest.fixture(scope="session")
def cluster(engine):
    return Cluster(Properties({"executor.instances": 2, "executor.cores": 1,
                               "executor.memory": "256MB", "test.tag": "spindle"}))


@pytest.fixture(scope="session")
def python_worker(cluster):
    return Worker(cluster, "python")
