# shellcheck shell=bash
# Spindle's own services: migrations, start, stop. Ports are fixed for single-machine mode.

declare -A SERVICE_PORTS=([api-server]=8080 [orchestrator]=8081 [scheduler]=8082 [disk-service]=8083 [network-service]=8084)
declare -A SERVICE_PACKAGES=([api-server]=spindle_api [orchestrator]=spindle_orchestrator [scheduler]=spindle_scheduler
                             [disk-service]=spindle_disk [network-service]=spindle_network)
SERVICES=(disk-service network-service scheduler orchestrator api-server)

# Environment shared by every service process and by the CLI/tests (holds the DB password: 0600).
write_env_file() {
  local f="$SPINDLE_STATE_DIR/spindle.env" token_file="$SPINDLE_STATE_DIR/internal-token"
  local identity_file="$SPINDLE_STATE_DIR/identity-key" node_identity_file="$SPINDLE_STATE_DIR/node-identity-key" k
  local metrics_file="$SPINDLE_STATE_DIR/metrics-token"
  # The internal token; the key that signs callers' identities between services (spindle_common.auth),
  # apart from the token; the nodes' key, which signs role "node" only (nodes get no other); the
  # token GET /metrics asks of the scraper (spindle_common.metrics).
  for k in "$token_file" "$identity_file" "$node_identity_file" "$metrics_file"; do
    [[ -s "$k" ]] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '/+=' > "$k")
  done
  write_mesos_credentials
  (umask 077; cat > "$f" <<ENV
SPINDLE_DATABASE_URL=$SPINDLE_DATABASE_URL
SPINDLE_CONSUL_URL=$SPINDLE_CONSUL_URL
SPINDLE_CONSUL_TOKEN=$(cat "$CONSUL_SERVICES_TOKEN_FILE")
SPINDLE_BASE_IMAGE=$SPINDLE_BASE_IMAGE
SPINDLE_STATE_DIR=$SPINDLE_STATE_DIR
SPINDLE_INTERNAL_TOKEN=$(cat "$token_file")
SPINDLE_IDENTITY_KEY=$(cat "$identity_file")
SPINDLE_NODE_IDENTITY_KEY=$(cat "$node_identity_file")
SPINDLE_METRICS_TOKEN=$(cat "$metrics_file")
SPINDLE_MESOS_MASTER=127.0.0.1:$SPINDLE_MESOS_PORT
SPINDLE_MESOS_PRINCIPAL=spindle
SPINDLE_MESOS_SECRET=$(cat "$SPINDLE_STATE_DIR/mesos-secret")
SPINDLE_EXECUTOR_COMMAND=$SPINDLE_VENV/bin/spindle-mesos-executor
SPINDLE_EXTRA_HOSTS=${SPINDLE_FABRIC_ADDR:-}
SPINDLE_KDC_ADDRESS=${SPINDLE_FABRIC_ADDR:-}
ENV
)
}

# The scheduler's Mesos credential (principal "spindle", a random secret kept across runs) and the
# master's credentials file (Mesos' --credentials format): the master authenticates frameworks and
# operator calls with it. Both 0600.
write_mesos_credentials() {
  local secret_file="$SPINDLE_STATE_DIR/mesos-secret"
  [[ -s "$secret_file" ]] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '/+=' > "$secret_file")
  mkdir -p "$SPINDLE_STATE_DIR/mesos"
  (umask 077; printf '{"credentials": [{"principal": "spindle", "secret": "%s"}]}\n' "$(cat "$secret_file")" \
    > "$SPINDLE_STATE_DIR/mesos/credentials.json")
}

# What tenants' containers see or leave behind lies on its own nosuid,nodev mount, so a setuid
# binary or a device node put there is inert for the machine's other accounts: the agent's work dir
# (sandboxes: a job's files and /job/output, members' config files) and the orchestrator's kept job
# files and outputs (also noexec). Each folder is bound onto itself; idempotent. (Dedicated disks are
# mounted nosuid,nodev by disk-service and node-agent; the executor checks every path it binds.)
ensure_tenant_mounts() {
  local entry dir opts
  for entry in "$SPINDLE_STATE_DIR/mesos-agent:nosuid,nodev" "$SPINDLE_STATE_DIR/jobs:nosuid,nodev,noexec"; do
    dir="${entry%:*}" opts="${entry##*:}"
    mkdir -p "$dir"
    mountpoint -q "$dir" || mount --bind "$dir" "$dir" || die "cannot bind $dir onto itself"
    mount -o "remount,bind,$opts" "$dir" || die "cannot remount $dir $opts"
  done
  log "tenant folders mounted nosuid,nodev"
}

run_migrations() {
  for s in "${SERVICES[@]}"; do
    "$SPINDLE_VENV/bin/python" -m spindle_common.migrations "${SERVICE_PACKAGES[$s]}" upgrade >>"$SPINDLE_LOG_DIR/migrations.log" 2>&1 \
      || die "migrations of $s failed, see $SPINDLE_LOG_DIR/migrations.log"
  done
  log "database migrations applied"
}

start_service() { start_daemon "$1" env SPINDLE_PORT="${SERVICE_PORTS[$1]}" "$SPINDLE_VENV/bin/spindle-$1"; }

start_services() {
  pid_alive mesos-agent || remember_agent_offer # (only for an agent this start starts)
  start_mesos_master
  for s in "${SERVICES[@]}"; do start_service "$s"; done
}

# The embedded Mesos-API master and this machine's agent, two daemons. The agent offers this
# machine's cpus/mem and the disks disk-service exports for this node (re-read every second). Either
# restarts without losing running tasks: the agent leaves its executors running on SIGTERM and
# recovers them from its work dir; agents re-register with a restarted master.
export SPINDLE_MESOS_PORT="${SPINDLE_MESOS_PORT:-5050}"
export SPINDLE_MESOS_AGENT_PORT="${SPINDLE_MESOS_AGENT_PORT:-5051}"
start_mesos_master() {
  # Without the agent settings (SPINDLE_AGENT_CPUS may be set for the agent): given them, the master
  # would also run a local agent of its own.
  # Frameworks authenticate once ./deploy/up has written the credentials (and the scheduler's secret).
  local credentials="$SPINDLE_STATE_DIR/mesos/credentials.json"
  [[ -s "$credentials" && -n "${SPINDLE_MESOS_SECRET:-}" ]] || credentials=""
  start_daemon mesos-master env -u SPINDLE_MESOS_RESOURCES -u SPINDLE_AGENT_CPUS -u SPINDLE_AGENT_MEM_MB \
    SPINDLE_MESOS_WORK_DIR="$SPINDLE_STATE_DIR/mesos" SPINDLE_MESOS_CREDENTIALS="$credentials" \
    "$SPINDLE_VENV/bin/spindle-mesos-embedded"
  wait_for "the embedded Mesos master" 30 curl -fs "http://127.0.0.1:$SPINDLE_MESOS_PORT/health"
  start_mesos_agent
}

mesos_agent_registered() { curl -fs "http://127.0.0.1:$SPINDLE_MESOS_AGENT_PORT/health" | grep -q '"registered":true'; }

# The offer `up` started this machine's agent with (SPINDLE_AGENT_CPUS, SPINDLE_AGENT_MEM_MB; "-": the
# machine's own), kept so that an agent started again later (deploy/restart, the tests' simulated
# nodes giving the machine back) offers the same unless its caller sets them. (Before, a restart
# without them offered the machine's 2 cpus where `make test` had started it with 4.)
remember_agent_offer() {
  printf '%s %s\n' "${SPINDLE_AGENT_CPUS:--}" "${SPINDLE_AGENT_MEM_MB:--}" > "$SPINDLE_STATE_DIR/agent-offer"
}

start_mesos_agent() {
  local node cpus="${SPINDLE_AGENT_CPUS:-}" mem="${SPINDLE_AGENT_MEM_MB:-}" kept_cpus=- kept_mem=-
  node="$(hostname -s)"
  if [[ -s "$SPINDLE_STATE_DIR/agent-offer" ]]; then read -r kept_cpus kept_mem < "$SPINDLE_STATE_DIR/agent-offer"; fi
  [[ -n "$cpus" || "$kept_cpus" == - ]] || cpus="$kept_cpus"
  [[ -n "$mem" || "$kept_mem" == - ]] || mem="$kept_mem"
  start_daemon mesos-agent env SPINDLE_AGENT_CPUS="$cpus" SPINDLE_AGENT_MEM_MB="$mem" \
    SPINDLE_MESOS_MASTER="127.0.0.1:$SPINDLE_MESOS_PORT" SPINDLE_AGENT_HOST=127.0.0.1 \
    SPINDLE_AGENT_PORT="$SPINDLE_MESOS_AGENT_PORT" SPINDLE_MESOS_WORK_DIR="$SPINDLE_STATE_DIR/mesos-agent" \
    SPINDLE_MESOS_RESOURCES="http://127.0.0.1:${SERVICE_PORTS[disk-service]}/nodes/$node/mesos-resources" \
    SPINDLE_NODE_NAME="$node" "$SPINDLE_VENV/bin/spindle-mesos-agent"
  wait_for "the Mesos agent registered with the master" 30 mesos_agent_registered
}

# stop_mesos_agent -> the agent's explicit shutdown (SIGUSR1): its executors stop their tasks'
# containers and the agent unregisters, as `down` stops everything `up` started. (A plain
# stop_daemon, SIGTERM, leaves the executors running for the next agent to recover.)
stop_mesos_agent() {
  local pid
  if pid_alive mesos-agent; then
    pid="$(cat "$SPINDLE_RUN_DIR/mesos-agent.pid")"
    kill -USR1 "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    log "shut down mesos-agent and its executors (pid $pid)"
  fi
  stop_daemon mesos-agent
  # With every executor gone, what one of them bound in its sandbox and never unbound (it was
  # killed: a job's /job) is unused, and so is the work dir's own nosuid,nodev bind (`up` binds it
  # again). Rounds: a sandbox bind made before the work dir was bound lies under that bind,
  # reachable only once it is gone.
  local round
  for round in 1 2 3; do
    findmnt -rn -o TARGET | awk -v d="$SPINDLE_STATE_DIR/mesos-agent" '$0 == d || index($0, d "/") == 1' \
      | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    findmnt -rn -o TARGET | grep -q "^$SPINDLE_STATE_DIR/mesos-agent" || break
  done
  log "unmounted the agent's work dir and what its executors left bound (round $round)"
}

all_services_passing() { "$SPINDLE_VENV/bin/spindle" status >/dev/null; }

stop_services() {
  local i
  for ((i=${#SERVICES[@]}-1; i>=0; i--)); do stop_daemon "${SERVICES[$i]}"; done
  stop_mesos_agent
  stop_daemon mesos-master
}

bootstrap_admin() {
  local token
  token="$("$SPINDLE_VENV/bin/spindle-bootstrap-admin" --username admin 2>/dev/null)" || die "could not create the admin user"
  [[ -z "$token" ]] && return 0
  log "created admin user 'admin'. Its API token is shown ONCE, keep it:"
  echo "    $token" >&2
}
