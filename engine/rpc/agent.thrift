/*
 * Driver (backend) -> engine agent, cluster mode.
 *
 * One agent runs on every host (Spindle member) of an engine cluster:
 * `python -m spindle_engine.agent --bind IP --port 7077 --work /data/1,/data/2`. It starts the
 * executor processes a driver asks for (EXECUTOR_CLI.md) on that host and runs the host's file
 * server (FETCH.md). Executors started on a connection live as long as that connection: when
 * the driver goes, the agent kills them and removes the files they wrote under the work dirs.
 * TBinaryProtocol (strict) over TBufferedTransport, like executor.thrift.
 */

namespace py spindle_agent

struct AgentInfo {
  1: required string host,              // address executors listen on (the member's IP)
  2: required string file_server,       // HOST:PORT of this host's file server
  3: required i32 cores,                // CPUs this host may use (its cpuset size)
  4: required i64 memory,               // bytes this host may use (cgroup limit or RAM)
  5: required list<string> work_dirs,   // the host's dedicated disks (spill, shuffle, DISK)
  6: required list<i32> cpus,           // the cpuset, for affinity
  7: optional string node,              // the node the host runs on (env SPINDLE_NODE): HDFS locality
}

struct ExecutorSpec {
  1: required string language,          // "python" | "cpp"
  2: required i32 id,
  3: required i32 cores,
  4: required i64 memory,
  5: optional list<i32> affinity,       // pin to these CPUs (EXECUTOR_CLI.md --affinity)
  6: required string session,           // the driver's engine id: names its work subdirs
}

exception AgentError {
  1: required string message,
}

service Agent {
  AgentInfo hello(),
  /** Start an executor; returns its port once it is READY. */
  i32 spawn(1: ExecutorSpec spec) throws (1: AgentError error),
  /** Whether the executor on `port` (started on this connection) still runs. */
  bool alive(1: i32 port),
  /** Kill the executor on `port` (started on this connection). */
  void kill(1: i32 port),
  /** Counters of this host: files_served, bytes_served (by its file server, since start). */
  map<string, i64> stats(),
}
