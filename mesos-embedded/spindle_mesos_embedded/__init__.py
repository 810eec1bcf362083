"""An embedded Mesos-API master and its agents.

Apache Mesos is retired and cannot be installed here, so Spindle runs this: a master
(``spindle-mesos-embedded``) that speaks the Mesos v1 scheduler and (part of the) operator HTTP
APIs, and agents (``spindle-mesos-agent``, one per node, each its own process) that speak the v1
executor API, as in the Mesos protobuf definitions, so the same pymesos framework and executor code
run against it and against a real Mesos master. Master and agents talk over ``protocol.py``.
"""
