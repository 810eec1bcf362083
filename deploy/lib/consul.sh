# shellcheck shell=bash
# Consul: built from its Go module (deploy/consul), run as a single-server agent on loopback.

CONSUL_BIN="$SPINDLE_BIN_DIR/consul"
export SPINDLE_CONSUL_URL="${SPINDLE_CONSUL_URL:-http://127.0.0.1:8500}"

build_consul() { build_go_program consul "Consul (first build takes several minutes)"; }

consul_ok() { curl -fs "$SPINDLE_CONSUL_URL/v1/status/leader" | grep -q ':'; }

ensure_consul() {
  build_consul
  if consul_ok; then log "Consul is running"; return 0; fi
  mkdir -p "$SPINDLE_STATE_DIR/consul"
  start_daemon consul "$CONSUL_BIN" agent -server -bootstrap-expect=1 -node=spindle-local \
    -data-dir="$SPINDLE_STATE_DIR/consul" -bind=127.0.0.1 -client=127.0.0.1 \
    -domain=spindle -dns-port=8600 -log-level=warn
  wait_for "Consul leader" 60 consul_ok
}
