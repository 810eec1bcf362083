# shellcheck shell=bash
# Floating-IP pools: the default pool (a Docker bridge) for single-machine mode.

export SPINDLE_DEFAULT_POOL_CIDR="${SPINDLE_DEFAULT_POOL_CIDR:-172.31.200.0/24}"

ensure_default_pool() {
  [[ "$SPINDLE_DEFAULT_POOL_CIDR" == none ]] && return 0
  local pool
  pool="$(internal_call POST http://127.0.0.1:8084/pools "{\"name\": \"default\", \"cidr\": \"$SPINDLE_DEFAULT_POOL_CIDR\"}")" \
    || die "could not create the default IP pool $SPINDLE_DEFAULT_POOL_CIDR (see $SPINDLE_LOG_DIR/network-service.log)"
  ensure_pool_network "$pool"
  log "IP pool 'default' ($SPINDLE_DEFAULT_POOL_CIDR) ready"
}

# ensure_pool_network POOL_JSON -> the Docker network of a pool network-service already had, created
# again when it is missing (`down --purge` removes Spindle's networks; network-service creates a
# pool's network only with the pool). Same driver, subnet, gateway, IP range and labels as
# network-service gives it (spindle_network/docker_networks.py), so it adopts the network as its own.
ensure_pool_network() {
  local name network driver cidr gateway auto parent
  IFS=$'\t' read -r name network driver cidr gateway auto parent < <(jq -r \
    '[.name, .docker_network, .driver, .cidr, .gateway, .auto_cidr, (.parent // "")] | @tsv' <<< "$1") \
    || die "unexpected answer from network-service for a pool: $1"
  docker network inspect "$network" >/dev/null 2>&1 && return 0
  docker network create --driver "$driver" --subnet "$cidr" --gateway "$gateway" --ip-range "$auto" \
    ${parent:+--opt "parent=$parent"} --label io.spindle.owned=true --label "io.spindle.pool=$name" "$network" >/dev/null \
    || die "could not create the Docker network $network of IP pool $name"
  log "created the missing Docker network $network of IP pool $name"
}

# Spindle's Docker objects carry the label io.spindle.owned=true; the containers it launches (cluster
# members and job drivers) also io.spindle.cluster=<id>. Every function below calls Docker, so
# `deploy/down` runs them while Docker still answers, before it may stop dockerd.
SPINDLE_OWNED_FILTER=(--filter label=io.spindle.owned=true)

# The Linux bridges of Spindle's bridge networks (one interface name a line, e.g. br-268684a0f805),
# recorded while Docker runs: a bridge outlives its network when dockerd stops before the network is
# removed, and once dockerd is stopped Docker can no longer say which bridge was Spindle's.
SPINDLE_BRIDGES_FILE="$SPINDLE_RUN_DIR/docker-bridges"

# record_spindle_bridges -> (re)writes $SPINDLE_BRIDGES_FILE from Docker's Spindle networks.
record_spindle_bridges() {
  local net id driver name tmp="$SPINDLE_BRIDGES_FILE.tmp"
  : > "$tmp"
  for net in $(docker network ls -q "${SPINDLE_OWNED_FILTER[@]}"); do
    read -r id driver name < <(docker network inspect \
      -f '{{.Id}} {{.Driver}} {{index .Options "com.docker.network.bridge.name"}}' "$net" 2>/dev/null) || continue
    [[ "$driver" == bridge ]] || continue # macvlan pools have no bridge of their own
    [[ -n "$name" && "$name" != "<no value>" ]] || name="br-${id:0:12}" # Docker's default bridge name
    echo "$name" >> "$tmp"
  done
  mv "$tmp" "$SPINDLE_BRIDGES_FILE"
}

# remove_spindle_containers -> for a purge: the containers Spindle launched (members, job drivers).
remove_spindle_containers() {
  local ids
  mapfile -t ids < <(docker ps -aq "${SPINDLE_OWNED_FILTER[@]}" --filter label=io.spindle.cluster)
  ((${#ids[@]})) || return 0
  if docker rm -f "${ids[@]}" >/dev/null; then
    log "removed ${#ids[@]} Spindle container(s)"
  else
    log "could not remove every Spindle container (${ids[*]}): their networks stay"
  fi
}

# remove_spindle_networks -> for a purge: Docker networks Spindle created that no container uses
# (Docker deletes a bridge network's Linux bridge with it).
remove_spindle_networks() {
  local net users
  for net in $(docker network ls -q "${SPINDLE_OWNED_FILTER[@]}"); do
    users="$(docker network inspect -f '{{len .Containers}}' "$net" 2>/dev/null)" || continue
    if [[ "$users" == 0 ]]; then
      docker network rm "$net" >/dev/null && log "removed Docker network $net"
    else
      log "kept Docker network $net: $users container(s) not launched by Spindle use it"
    fi
  done
  return 0
}

# remove_leftover_bridges -> for a purge, once no dockerd runs: deletes the recorded bridges that are
# still there (their network was not removed before dockerd stopped) and no interface is attached to.
remove_leftover_bridges() {
  local bridge
  [[ -s "$SPINDLE_BRIDGES_FILE" ]] || { rm -f "$SPINDLE_BRIDGES_FILE"; return 0; }
  while read -r bridge; do
    [[ -n "$bridge" && -d "/sys/class/net/$bridge/bridge" ]] || continue # gone, or not a bridge
    if [[ -n "$(ls -A "/sys/class/net/$bridge/brif")" ]]; then
      log "kept bridge $bridge: interfaces are still attached to it"
      continue
    fi
    if ip link delete dev "$bridge" type bridge; then
      log "deleted bridge $bridge, left by a Spindle Docker network"
    else
      log "could not delete bridge $bridge"
    fi
  done < "$SPINDLE_BRIDGES_FILE"
  rm -f "$SPINDLE_BRIDGES_FILE"
}
