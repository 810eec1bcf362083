# shellcheck shell=bash
# Simulated nodes on one machine, really separate: each node NAME has its own network namespace
# (spdl-NAME), its own dockerd (own data root, exec root, socket, bridge and cgroup parent), its own
# loop-backed disks (its node agent mounts them below its own disk root), its own Mesos agent and its
# own node agent, all reaching the control plane only over the node fabric. The fabric is one Linux bridge (spdl-fabric,
# $SPINDLE_FABRIC_ADDR/24 on the host) that every node joins with a veth; floating IPs of the pool
# `fabric` are macvlan addresses on it, so the same address can follow a member to any node.
#
# Killing a node (kill_node) freezes and SIGKILLs every process of it at once (daemons, executors,
# container shims and the containers themselves: everything runs in the node's cgroups) and unplugs
# its fabric link; its disks stay (a dead machine keeps its disks) and start_node brings it back.
#
# Everything is found again by name: netns spdl-NAME, host veth sp-NAME, cgroups spdl-node-NAME,
# state under $SPINDLE_NODES_DIR/NAME, runtime files under /run/spdl/NAME. Needs common.sh.

export SPINDLE_FABRIC_BRIDGE="${SPINDLE_FABRIC_BRIDGE:-spdl-fabric}"
export SPINDLE_FABRIC_ADDR="${SPINDLE_FABRIC_ADDR:-172.31.250.1}"
SPINDLE_FABRIC_PREFIX="${SPINDLE_FABRIC_ADDR%.*}" # the fabric is a /24: node i gets .(10+i)
SPINDLE_NODES_DIR="$SPINDLE_STATE_DIR/nodes"
SPINDLE_NODES_RUN="/run/spdl"
NODE_CGROUP_CONTROLLERS=(pids freezer cpu cpuacct memory devices blkio cpuset)
# The fabric's floating-IP pool: members' addresses (.128/25) and Docker's own range (.64/26) kept
# apart from the host (.1) and the nodes (.11 … .60).
FABRIC_POOL=fabric

node_netns() { echo "spdl-$1"; }
node_socket() { echo "$SPINDLE_NODES_RUN/$1/docker.sock"; }
node_docker() { docker -H "unix://$(node_socket "$1")" "${@:2}"; }
node_cgroup() { echo "spdl-node-$1"; }
node_index() { cat "$SPINDLE_NODES_DIR/$1/index"; }
node_address() { echo "$SPINDLE_FABRIC_PREFIX.$((10 + $(node_index "$1")))"; }

# ensure_fabric -> the fabric bridge with the host's fabric address, forwarding its own traffic
# (Docker sets FORWARD to DROP with bridge netfilter on). Idempotent; called by `up` before the
# services start, since they also listen on the fabric address (SPINDLE_EXTRA_HOSTS).
ensure_fabric() {
  if ! ip link show "$SPINDLE_FABRIC_BRIDGE" >/dev/null 2>&1; then
    ip link add "$SPINDLE_FABRIC_BRIDGE" type bridge || die "cannot create the fabric bridge $SPINDLE_FABRIC_BRIDGE"
    log "created the node fabric $SPINDLE_FABRIC_BRIDGE ($SPINDLE_FABRIC_ADDR/24)"
  fi
  ip addr replace "$SPINDLE_FABRIC_ADDR/24" dev "$SPINDLE_FABRIC_BRIDGE"
  ip link set "$SPINDLE_FABRIC_BRIDGE" up
  iptables -C FORWARD -i "$SPINDLE_FABRIC_BRIDGE" -o "$SPINDLE_FABRIC_BRIDGE" -m comment --comment spindle-fabric -j ACCEPT \
    2>/dev/null || iptables -I FORWARD -i "$SPINDLE_FABRIC_BRIDGE" -o "$SPINDLE_FABRIC_BRIDGE" \
    -m comment --comment spindle-fabric -j ACCEPT
}

remove_fabric() {
  while iptables -D FORWARD -i "$SPINDLE_FABRIC_BRIDGE" -o "$SPINDLE_FABRIC_BRIDGE" -m comment \
    --comment spindle-fabric -j ACCEPT 2>/dev/null; do :; done
  if ip link show "$SPINDLE_FABRIC_BRIDGE" >/dev/null 2>&1; then
    ip link del "$SPINDLE_FABRIC_BRIDGE" && log "removed the node fabric $SPINDLE_FABRIC_BRIDGE"
  fi
}

# ensure_fabric_pool -> network-service's pool `fabric` (macvlan on the fabric; every node's agent
# creates its Docker network on its own side) — the pool of a platform whose members run on nodes.
ensure_fabric_pool() {
  internal_call GET "http://127.0.0.1:8084/pools/$FABRIC_POOL" >/dev/null 2>&1 && return 0
  internal_call POST http://127.0.0.1:8084/pools "{\"name\": \"$FABRIC_POOL\", \"cidr\": \"$SPINDLE_FABRIC_PREFIX.0/24\",
    \"gateway\": \"$SPINDLE_FABRIC_ADDR\", \"floating_cidr\": \"$SPINDLE_FABRIC_PREFIX.128/25\",
    \"auto_cidr\": \"$SPINDLE_FABRIC_PREFIX.64/26\", \"driver\": \"macvlan\", \"parent\": \"$SPINDLE_FABRIC_BRIDGE\"}" >/dev/null \
    || die "could not create the IP pool $FABRIC_POOL (see $SPINDLE_LOG_DIR/network-service.log)"
  log "IP pool '$FABRIC_POOL' ($SPINDLE_FABRIC_PREFIX.0/24 on $SPINDLE_FABRIC_BRIDGE) ready"
}

# node_cgroups_enter NAME -> moves this shell into the node's cgroups (created when missing), so
# whatever it starts is the node's.
node_cgroups_enter() {
  local c dir
  for c in "${NODE_CGROUP_CONTROLLERS[@]}"; do
    dir="/sys/fs/cgroup/$c/$(node_cgroup "$1")"
    [[ -d "/sys/fs/cgroup/$c" ]] || continue
    mkdir -p "$dir"
    if [[ "$c" == cpuset && ! -s "$dir/cpuset.cpus" ]]; then
      cat "/sys/fs/cgroup/cpuset/cpuset.cpus" > "$dir/cpuset.cpus"
      cat "/sys/fs/cgroup/cpuset/cpuset.mems" > "$dir/cpuset.mems"
    fi
    echo "$BASHPID" > "$dir/cgroup.procs"
  done
}

# node_pids NAME -> every process in the node's cgroups (its own and its containers' sub-cgroups).
node_pids() {
  local dir
  dir="/sys/fs/cgroup/pids/$(node_cgroup "$1")"
  [[ -d "$dir" ]] || return 0
  find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

# node_start_daemon NAME DAEMON CMD... -> CMD in the node's netns and cgroups, recorded as
# node-NAME-DAEMON like every daemon `up` starts.
node_start_daemon() {
  local node="$1" daemon="$2"; shift 2
  # shellcheck disable=SC2016 # expanded by the inner bash
  start_daemon "node-$node-$daemon" bash -c 'source "$1/deploy/lib/common.sh"; source "$1/deploy/lib/nodes.sh"
    node_cgroups_enter "$2"; shift 2; exec nsenter --net="/run/netns/$(node_netns "$0")" "$@"' \
    "$node" "$SPINDLE_ROOT" "$node" "$@"
}

# add_node NAME INDEX DISKS CPUS MEM_MB -> a new node (or the existing one started again). Nodes may be
# added side by side (pulling their images is most of the time): what they share (the fabric's IP
# pool, other nodes' indexes, loop devices) is set up one node at a time, under a lock.
add_node() {
  local node="$1" index="$2" disks="$3" cpus="$4" mem="$5" dir="$SPINDLE_NODES_DIR/$1" lock other
  [[ "$node" =~ ^[a-z][a-z0-9]{0,5}$ ]] || die "node name '$node': 1-6 lowercase letters and digits, a letter first"
  if ! [[ "$index" =~ ^[0-9]+$ ]] || ((index < 1 || index > 50)); then die "node index must be 1 … 50"; fi
  mkdir -p "$dir"
  exec {lock}> "$SPINDLE_NODES_DIR/.add.lock"
  flock "$lock"
  if [[ -s "$dir/index" && "$(cat "$dir/index")" != "$index" ]]; then die "node $node exists with index $(cat "$dir/index")"; fi
  for other in $(node_names); do
    [[ "$other" != "$node" && -s "$SPINDLE_NODES_DIR/$other/index" && "$(node_index "$other")" == "$index" ]] &&
      die "index $index is node $other's"
  done
  echo "$index" > "$dir/index"
  printf '%s\n' "$disks" > "$dir/disk-spec"
  printf '%s %s\n' "$cpus" "$mem" > "$dir/resources"
  ensure_fabric_pool
  ensure_node_network "$node"
  ensure_node_disks "$node"
  flock -u "$lock"
  exec {lock}>&-
  start_node "$node"
}

# ensure_node_network NAME -> netns, veth to the fabric (host side sp-NAME, node side fab0), and the
# node's address on a macvlan of fab0 (fabn): a macvlan parent cannot reach its own macvlan children,
# so the node's daemons talk through a sibling of the members' interfaces.
ensure_node_network() {
  local node="$1" ns; ns="$(node_netns "$1")"
  ensure_fabric
  [[ -e "/run/netns/$ns" ]] || ip netns add "$ns"
  if ! ip link show "sp-$node" >/dev/null 2>&1; then
    ip link add "sp-$node" type veth peer name fab0 netns "$ns"
    ip link set "sp-$node" master "$SPINDLE_FABRIC_BRIDGE"
  fi
  ip link set "sp-$node" up
  ip -n "$ns" link set lo up
  ip -n "$ns" link set fab0 up
  ip -n "$ns" link show fabn >/dev/null 2>&1 || ip -n "$ns" link add fabn link fab0 type macvlan mode bridge
  ip -n "$ns" addr replace "$(node_address "$node")/24" dev fabn
  ip -n "$ns" link set fabn up
}

# ensure_node_disks NAME -> the node's loop disks (DISKS like 2:hdd): files attached to direct-I/O
# loop devices, XFS labelled spdl-NAME-N. Its node agent mounts them (below its own disk root, by
# label) and registers them; their classes go to it in SPINDLE_NODE_DISK_CLASSES.
ensure_node_disks() {
  local node="$1" dir="$SPINDLE_NODES_DIR/$1" n=0 class count item spec file dev label
  IFS=',' read -ra spec <<< "$(cat "$dir/disk-spec")"
  mkdir -p "$dir/dev-disks" "$dir/disks" "$dir/classes"
  for item in "${spec[@]}"; do
    [[ "$item" =~ ^([0-9]+):(hdd|ssd|nvme)$ ]] || die "disks: '$item' is not COUNT:hdd|ssd|nvme"
    count="${BASH_REMATCH[1]}" class="${BASH_REMATCH[2]}"
    for ((i = 0; i < count; i++)); do
      n=$((n + 1)) file="$dir/dev-disks/disk$n.img" label="spdl-$node-$n"
      [[ -e "$file" ]] || truncate -s "${SPINDLE_NODE_DISK_SIZE:-2G}" "$file"
      dev="$(losetup -j "$file" | cut -d: -f1 | head -n1)"
      [[ -n "$dev" ]] || dev="$(losetup --direct-io=on --find --show "$file")" || die "cannot attach $file"
      [[ "$(blkid -p -o value -s LABEL "$dev" 2>/dev/null || true)" == "$label" ]] || mkfs.xfs -q -f -L "$label" "$dev"
      echo "\"$label\": \"$class\"" > "$dir/classes/$label"
    done
  done
}

node_docker_ok() { node_docker "$1" info >/dev/null 2>&1; }

# start_node NAME -> dockerd, the Mesos agent and the node agent of the node (after kill_node too).
start_node() {
  local node="$1" dir="$SPINDLE_NODES_DIR/$1" run="$SPINDLE_NODES_RUN/$1" cpus mem addr index
  read -r cpus mem < "$dir/resources"
  addr="$(node_address "$node")" index="$(node_index "$node")"
  ip link set "sp-$node" up
  mkdir -p "$run" "$dir/docker" "$dir/mesos-agent"
  node_start_daemon "$node" dockerd dockerd --data-root "$dir/docker" --exec-root "$run/exec" \
    -H "unix://$run/docker.sock" --pidfile "$run/docker.pid" --bip "172.29.$index.1/24" \
    --cgroup-parent "/$(node_cgroup "$node")" --userland-proxy=false --log-level warn \
    --insecure-registry "$(node_registry)"
  wait_for "node $node's dockerd" 60 node_docker_ok "$node"
  load_node_images "$node"
  # A node gets the internal token and the nodes' identity key: it signs as a node, never as an
  # admin, a service or a user (spindle_common.auth).
  local token identity; token="$(cat "$SPINDLE_STATE_DIR/internal-token")"
  identity="$(cat "$SPINDLE_STATE_DIR/node-identity-key")"
  node_start_daemon "$node" node-agent env SPINDLE_NODE_NAME="$node" SPINDLE_NODE_ADDRESS="$addr" \
    SPINDLE_NODE_DISK_ROOT="$dir/disks" SPINDLE_NODE_FABRIC_IFACE=fab0 SPINDLE_INTERNAL_TOKEN="$token" \
    SPINDLE_NODE_IDENTITY_KEY="$identity" \
    SPINDLE_NODE_CPUS="$cpus" SPINDLE_NODE_MEM_MB="$mem" SPINDLE_NODE_DISK_CLASSES="{$(cat "$dir"/classes/* | paste -sd,)}" \
    SPINDLE_NODE_DISK_LABEL_PREFIX="spdl-$node-" \
    SPINDLE_DISK_SERVICE_URL="http://$SPINDLE_FABRIC_ADDR:8083" SPINDLE_NETWORK_SERVICE_URL="http://$SPINDLE_FABRIC_ADDR:8084" \
    DOCKER_HOST="unix://$run/docker.sock" "$SPINDLE_VENV/bin/spindle-node-agent"
  node_start_daemon "$node" member-stats env SPINDLE_NODE_NAME="$node" \
    SPINDLE_METRICS_URL="http://$SPINDLE_FABRIC_ADDR:${SPINDLE_METRICS_PORT:-8428}" \
    SPINDLE_METRICS_TOKEN="$(cat "$SPINDLE_STATE_DIR/metrics-token")" \
    DOCKER_HOST="unix://$run/docker.sock" "$SPINDLE_VENV/bin/spindle-member-stats"
  node_start_daemon "$node" mesos-agent env SPINDLE_MESOS_MASTER="$SPINDLE_FABRIC_ADDR:${SPINDLE_MESOS_PORT:-5050}" \
    SPINDLE_AGENT_HOST="$addr" SPINDLE_AGENT_PORT=5051 SPINDLE_MESOS_WORK_DIR="$dir/mesos-agent" \
    SPINDLE_MESOS_RESOURCES="http://$SPINDLE_FABRIC_ADDR:8083/nodes/$node/mesos-resources" SPINDLE_NODE_NAME="$node" \
    SPINDLE_AGENT_CPUS="$cpus" SPINDLE_AGENT_MEM_MB="$mem" SPINDLE_INTERNAL_TOKEN="$token" \
    SPINDLE_NODE_IDENTITY_KEY="$identity" SPINDLE_REGISTRY="$(node_registry)" DOCKER_HOST="unix://$run/docker.sock" "$SPINDLE_VENV/bin/spindle-mesos-agent"
  log "node $node up at $addr ($cpus cpus, $mem MB)"
}

# The nodes' (read-only) image registry, on the fabric (deploy/lib/registry.sh).
node_registry() { echo "$SPINDLE_FABRIC_ADDR:${SPINDLE_REGISTRY_PORT:-5000}"; }

# load_node_images NAME -> the images SPINDLE_NODE_IMAGES, pulled (or brought up to date) ahead
# from the nodes' registry over the fabric, as a real node does; any other image a task needs is
# pulled by its executor at launch (SPINDLE_REGISTRY).
load_node_images() {
  local node="$1" image registry; registry="$(node_registry)"
  for image in ${SPINDLE_NODE_IMAGES:-spindle/base:bookworm}; do
    wait_image_ready "$image" || die "node $node cannot pull $image: it is not in the registry"
    node_docker "$node" pull -q "$registry/$image" >/dev/null || die "node $node could not pull $image from $registry"
    node_docker "$node" tag "$registry/$image" "$image" # (the registry's name stays: it keeps the digest)
  done
}

# kill_node NAME -> the node dies at once: every process frozen, then SIGKILLed; its fabric link
# unplugged; dockerd's mounts (overlays, container netns) unmounted. Disks and state stay.
kill_node() {
  local node="$1" c freezer pid
  freezer="/sys/fs/cgroup/freezer/$(node_cgroup "$node")"
  ip link set "sp-$node" down 2>/dev/null || true
  [[ -d "$freezer" ]] && echo FROZEN > "$freezer/freezer.state"
  for _ in 1 2 3; do
    for pid in $(node_pids "$node"); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  [[ -d "$freezer" ]] && echo THAWED > "$freezer/freezer.state"
  for _ in $(seq 50); do [[ -z "$(node_pids "$node")" ]] && break; sleep 0.1; done
  unmount_below "$SPINDLE_NODES_RUN/$node"
  unmount_below "$SPINDLE_NODES_DIR/$node/docker"
  unmount_below "$SPINDLE_NODES_DIR/$node/mesos-agent" # sandboxes the executors bound nosuid,nodev
  rm -f "$SPINDLE_RUN_DIR/node-$node-"*.{pid,start} # every daemon the node ran, whatever it was
  log "node $node killed"
}

# unmount_below DIR -> lazily unmounts DIR and every mount point below it, deepest first (dockerd
# bind-mounts its data root onto itself, then overlays and container namespaces below).
unmount_below() {
  local m
  findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r \
    | while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

# retire_node_disks NODE -> every disk of NODE in disk-service's inventory not failed yet is marked
# failed ("node removed"): a removed node's disks must not look free to the scheduler, an admin or a
# test that picks a free disk. A wipe cut short by the node's death ends failed too. With disk-service
# down (the platform stopped) it says so and leaves the inventory as it is.
retire_node_disks() {
  local node="$1" ids id
  if ! ids="$(internal_call GET "http://127.0.0.1:8083/disks?node=$node&page_size=500" 2>/dev/null \
      | "$SPINDLE_VENV/bin/python" -c 'import json, sys
print(" ".join(str(d["id"]) for d in json.load(sys.stdin)["items"] if d["state"] != "failed"))')"; then
    log "disk-service did not answer: the disks of $node stay in its inventory as they are"
    return 0
  fi
  for id in $ids; do
    internal_call POST "http://127.0.0.1:8083/disks/$id/fail" '{"reason": "simulated node removed"}' >/dev/null \
      || log "could not mark disk $id of node $node failed"
  done
}

# remove_node NAME -> kill it, then remove its disks, network, cgroups and state.
remove_node() {
  local node="$1" dir="$SPINDLE_NODES_DIR/$1" f dev c
  kill_node "$node"
  retire_node_disks "$node"
  for f in "$dir"/dev-disks/*.img; do
    [[ -e "$f" ]] || continue
    for dev in $(losetup -j "$f" | cut -d: -f1); do
      findmnt -rn -S "$dev" -o TARGET | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
      # just unmounted, the device may still be busy for a moment
      for _ in $(seq 50); do losetup -d "$dev" 2>/dev/null && break; sleep 0.2; done
      losetup -j "$f" | grep -q . && die "cannot detach $dev ($f): it is still busy"
    done
  done
  ip link del "sp-$node" 2>/dev/null || true
  ip netns del "$(node_netns "$node")" 2>/dev/null || true
  for c in "${NODE_CGROUP_CONTROLLERS[@]}"; do
    find "/sys/fs/cgroup/$c/$(node_cgroup "$node")" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  rm -rf "$dir" "${SPINDLE_NODES_RUN:?}/$node"
  log "node $node removed"
}

node_names() { [[ -d "$SPINDLE_NODES_DIR" ]] && find "$SPINDLE_NODES_DIR" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort; }
