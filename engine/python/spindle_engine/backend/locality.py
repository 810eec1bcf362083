"""Which pending task a free slot takes, by data locality (HDFS blocks, engine/README.md).

A task may prefer nodes (those holding a replica of its block). A slot whose executor runs on
one of them takes it NODE_LOCAL. Otherwise the task waits for such a slot (delay scheduling,
like Spark's `spark.locality.wait`) unless no live executor is on any of its nodes, or no task
has been launched node-local for `locality.wait_s`: then any slot takes it (ANY).
"""

NODE_LOCAL = "node_local"
ANY = "any"
LEVELS = (NODE_LOCAL, ANY)


def candidates(pending, node, live_nodes, waited_out):
    """The tasks a slot on `node` may take, best first: (index into `pending`, level).

    `pending`: the nodes each pending task prefers (a frozenset, or None for no preference),
    in queue order; `live_nodes`: the nodes of the worker's live executors; `waited_out`: the
    locality wait is over. Level is None for a task without preference. A task preferring
    other nodes where executors live is not offered while the wait lasts. Lazy: the caller
    usually takes the first."""
    for i, nodes in enumerate(pending):
        if nodes and node in nodes:
            yield i, NODE_LOCAL
    for i, nodes in enumerate(pending):
        if not nodes:
            yield i, None
    for i, nodes in enumerate(pending):
        if nodes and node not in nodes and (waited_out or not (nodes & live_nodes)):
            yield i, ANY


def choose(pending, node, live_nodes, waited_out):
    """The first of `candidates(...)`, or None: the slot waits."""
    return next(candidates(pending, node, live_nodes, waited_out), None)


def summary(counts):
    """The line a driver prints for a stage: `locality: node_local=N any=M`."""
    return "locality: " + " ".join(f"{level}={counts.get(level, 0)}" for level in LEVELS)
