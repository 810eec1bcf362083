"""An embedded single-node Mesos-API master + agent.

Apache Mesos is retired and cannot be installed here, so single-machine Spindle runs this: it
speaks the Mesos v1 scheduler, executor and (part of the) operator HTTP APIs as in the Mesos
protobuf definitions, so the same pymesos framework and executor code run against it and against a
real Mesos master.
"""
