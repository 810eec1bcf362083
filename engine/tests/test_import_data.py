"""importData hands a dataset to another worker; cross-worker operations need it."""

import pytest

from spindle_engine import Worker


@pytest.fixture(scope="module")
def second_worker(cluster):
    return Worker(cluster, "python")


def test_import_between_python_workers(python_worker, second_worker, fn):
    lines = python_worker.parallelize(["a b", "b c é", "", "é é"], 3)
    words = lines.flatMap(fn("wordcount.py:Split"))
    imported = second_worker.importData(words)
    assert imported.worker is second_worker
    assert sorted(imported.reduceByKey(fn("wordcount.py:Join")).collect()) == \
        [("a", 1), ("b", 2), ("c", 1), ("é", 3)]
    assert python_worker.importData(words) is words


def test_cross_worker_join_needs_import(python_worker, second_worker):
    a = python_worker.parallelize([(1, 2)])
    b = second_worker.parallelize([(1, 3)])
    with pytest.raises(ValueError, match="importData"):
        a.join(b)
    assert a.join(python_worker.importData(b)).collect() == [(1, (2, 3))]


def test_user_code_printing_does_not_block(python_worker):
    def noisy(x):
        print("x" * 1000)
        return x
    assert python_worker.parallelize(range(500), 2).map(noisy).count() == 500
