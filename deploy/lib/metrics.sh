# shellcheck shell=bash
# The time-series database: VictoriaMetrics single-node, built from its Go module
# (deploy/victoria-metrics). It scrapes every service's /metrics (bearer: the metrics token) and
# takes the members' figures that node agents push (/api/v1/import/prometheus). It listens on
# loopback and on the node fabric's address, behind HTTP basic auth (user "spindle", the password
# in $SPINDLE_STATE_DIR/metrics-token): only the platform reads or writes it.
# Knobs: SPINDLE_METRICS_RETENTION (default 15d), SPINDLE_METRICS_SCRAPE_INTERVAL (default 15s),
#        SPINDLE_METRICS_MEMORY (the caches' cap, default 256MB).

export SPINDLE_METRICS_PORT="${SPINDLE_METRICS_PORT:-8428}"
SPINDLE_METRICS_RETENTION="${SPINDLE_METRICS_RETENTION:-15d}"
SPINDLE_METRICS_SCRAPE_INTERVAL="${SPINDLE_METRICS_SCRAPE_INTERVAL:-15s}"
SPINDLE_METRICS_MEMORY="${SPINDLE_METRICS_MEMORY:-256MB}"
VM_BIN="$SPINDLE_BIN_DIR/victoria-metrics"

build_victoria_metrics() {
  build_go_program victoria-metrics "VictoriaMetrics (the time-series database)" \
    github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics
}

# start_victoria_metrics_build -> the build runs in the background (its module downloads are mostly
# network time) while `up` installs and builds the rest; ensure_victoria_metrics waits for it.
VM_BUILD_PID=""
start_victoria_metrics_build() {
  build_victoria_metrics > "$SPINDLE_LOG_DIR/victoria-metrics-build.log" 2>&1 &
  VM_BUILD_PID=$!
}

# The scrape configuration: every Spindle service on this machine and the Mesos master.
write_scrape_config() {
  local dir="$SPINDLE_STATE_DIR/victoria-metrics" s targets=""
  for s in "${SERVICES[@]}"; do targets+="'127.0.0.1:${SERVICE_PORTS[$s]}', "; done
  targets+="'127.0.0.1:$SPINDLE_MESOS_PORT', "
  (umask 077; cat > "$dir/scrape.yml" <<YML
global:
  scrape_interval: $SPINDLE_METRICS_SCRAPE_INTERVAL
scrape_configs:
  - job_name: spindle
    bearer_token_file: $SPINDLE_STATE_DIR/metrics-token
    static_configs:
      - targets: [${targets%, }]
YML
)
}

metrics_ok() { curl -fs -u "spindle:$(cat "$SPINDLE_STATE_DIR/metrics-token")" "http://$1/health" >/dev/null; }

ensure_victoria_metrics() {
  local dir="$SPINDLE_STATE_DIR/victoria-metrics" addrs="127.0.0.1:$SPINDLE_METRICS_PORT"
  [[ -n "${SPINDLE_FABRIC_ADDR:-}" ]] && addrs+=",$SPINDLE_FABRIC_ADDR:$SPINDLE_METRICS_PORT"
  if [[ -n "$VM_BUILD_PID" ]]; then
    wait "$VM_BUILD_PID" || die "building VictoriaMetrics failed, see $SPINDLE_LOG_DIR/victoria-metrics-build.log"
    VM_BUILD_PID=""
  else
    build_victoria_metrics
  fi
  mkdir -p "$dir/data"
  write_scrape_config
  start_daemon victoria-metrics "$VM_BIN" -storageDataPath="$dir/data" -retentionPeriod="$SPINDLE_METRICS_RETENTION" \
    -httpListenAddr="$addrs" -httpAuth.username=spindle -httpAuth.password="file://$SPINDLE_STATE_DIR/metrics-token" \
    -promscrape.config="$dir/scrape.yml" -promscrape.configCheckInterval=30s -search.latencyOffset=5s \
    -memory.allowedBytes="$SPINDLE_METRICS_MEMORY" -loggerLevel=WARN
  wait_for "VictoriaMetrics on 127.0.0.1:$SPINDLE_METRICS_PORT" 60 metrics_ok "127.0.0.1:$SPINDLE_METRICS_PORT"
}

# This machine's member figures (spindle-member-stats, spindle_node_agent.member_stats); each
# simulated node runs its own (deploy/lib/nodes.sh).
start_member_stats() {
  start_daemon member-stats env SPINDLE_NODE_NAME="$(hostname -s)" \
    SPINDLE_METRICS_URL="http://127.0.0.1:$SPINDLE_METRICS_PORT" "$SPINDLE_VENV/bin/spindle-member-stats"
}

stop_victoria_metrics() { stop_daemon member-stats; stop_daemon victoria-metrics; }
