"""The master↔agent protocol: ours, small JSON calls over HTTP (real Mesos uses libprocess messages
there). It is shaped like the v1 scheduler API, so the same RecordIO framing and the same v1 JSON
objects (TaskInfo, TaskStatus, ExecutorInfo, Resource: proto field names, enums as strings) travel.

Everything is ``POST /spindle/v1/agent`` with ``{"type": T, "agent_id": {"value": …}, "<t>": {…}}``
(``<t>`` = the type in lower case); with ``Authorization: Bearer <SPINDLE_INTERNAL_TOKEN>`` when the
master has that token (401 otherwise).

``SUBSCRIBE`` (agent → master; ``agent_id`` absent on the agent's very first start) opens the
agent's event stream, like a framework's: ``200``, chunked RecordIO, header ``Mesos-Stream-Id``.
It carries everything the agent has, so the same call registers a new agent, re-registers a
returning one and rebuilds a restarted master's tables::

    {"agent_info": {"hostname", "port"}, "endpoint": "host:port", "resources": [Resource],
     "executors": [{"framework_id", "executor_info"}],
     "tasks": [{"framework_id", "task_info", "state", "status"?, "unacknowledged_update"?}]}

Events on the stream (master → agent), in order:

- ``SUBSCRIBED`` ``{"agent_id", "master_id", "heartbeat_interval_seconds"}``, always first: the
  agent stores the id in its work dir and keeps it for life;
- ``RUN_TASK`` ``{"framework_info", "task_info"}``: launch (start the task's executor if needed);
- ``KILL_TASK`` ``{"framework_id", "task_id"}``;
- ``ACKNOWLEDGED`` ``{"framework_id", "task_id", "uuid"}``: the framework acknowledged that update;
- ``SHUTDOWN_FRAMEWORK`` ``{"framework_id"}``: shut down every executor of that framework there;
- ``HEARTBEAT`` while idle (the agent re-subscribes when the stream stays silent too long).

Calls (agent → master), each answered ``202``; ``404`` when the master has no open stream of this
agent under that ``Mesos-Stream-Id`` (it restarted, or timed the agent out): the agent SUBSCRIBEs
again and the call is retried after that:

- ``HEARTBEAT`` ``{}``: every ``heartbeat_interval_seconds`` (a third of the master's agent timeout);
- ``UPDATE`` ``{"framework_id", "status"}``: a TaskStatus from an executor or the agent itself.
  The agent retries it until the master answers 202 and keeps it (checkpointed) until the
  framework's ACKNOWLEDGED comes back, re-reporting it in its next SUBSCRIBE;
- ``RESOURCES`` ``{"resources"}``: the agent's resources changed (its offers are rescinded);
- ``EXECUTOR_EXITED`` ``{"framework_id", "executor_id", "status"}``: its resources are free;
- ``UNREGISTER`` ``{}``: the agent shut down for good (SIGUSR1), having stopped its executors.
"""
import hmac

PATH = "/spindle/v1/agent"
STREAM_HEADER = "Mesos-Stream-Id"
VERSION = "1.11.0"  # the Mesos version whose v1 API the master speaks


def authorized(token: str, header: str | None) -> bool:
    """True when no internal token is configured or ``header`` carries it."""
    return not token or hmac.compare_digest(header or "", f"Bearer {token}")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
