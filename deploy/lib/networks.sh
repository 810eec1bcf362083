# Floating-IP pools: the default pool (a Docker bridge) for single-machine mode.

export SPINDLE_DEFAULT_POOL_CIDR="${SPINDLE_DEFAULT_POOL_CIDR:-172.31.200.0/24}"

ensure_default_pool() {
  [[ "$SPINDLE_DEFAULT_POOL_CIDR" == none ]] && return 0
  internal_call POST http://127.0.0.1:8084/pools "{\"name\": \"default\", \"cidr\": \"$SPINDLE_DEFAULT_POOL_CIDR\"}" >/dev/null \
    || die "could not create the default IP pool $SPINDLE_DEFAULT_POOL_CIDR (see $SPINDLE_LOG_DIR/network-service.log)"
  log "IP pool 'default' ($SPINDLE_DEFAULT_POOL_CIDR) ready"
}

# remove_spindle_networks -> for a purge: Docker networks Spindle created that no container uses.
remove_spindle_networks() {
  local net
  for net in $(docker network ls -q --filter label=io.spindle.owned=true); do
    [[ "$(docker network inspect -f '{{len .Containers}}' "$net")" == 0 ]] && docker network rm "$net" >/dev/null
  done
  return 0
}
