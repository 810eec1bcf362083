"""Run as a Spindle job of an engine cluster: the driver (which got the cluster secret from
Spindle) connects to every agent, its executors run a pickled function and a shuffle, and read
the driver's parallelized data from its file server — every connection authenticated.
Prints one line: RESULT {"sum": …, "groups": …, "hosts": […]}."""
import json
import os

from spindle_engine import Cluster, Engine, Properties, Worker

assert os.environ.get("SPINDLE_CLUSTER_SECRET"), "Spindle gives the driver its cluster's secret"
with Engine.start():
    cluster = Cluster(Properties({}))
    python = Worker(cluster, "python")
    numbers = python.parallelize(list(range(10_000)), 8)
    groups = dict(numbers.map(lambda x: (x % 7, x)).reduceByKey(lambda a, b: a + b).collect())
    print("RESULT " + json.dumps({"sum": sum(groups.values()), "groups": len(groups),
                                  "hosts": sorted({ex.host for ex in python.executors})}), flush=True)
