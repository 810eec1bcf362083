# shellcheck shell=bash
# Development disks: on a machine without spare disks, sparse files attached as direct-I/O loop
# devices, formatted XFS with the label spdl-N, mounted at $SPINDLE_DISK_ROOT/diskN and registered
# in disk-service as the local node's disks. Everything is found again by its file under
# $SPINDLE_STATE_DIR/dev-disks/ (losetup -j) and its label, so re-runs reuse it and removal touches
# nothing else. Needs deploy/lib/common.sh (log, die, SPINDLE_STATE_DIR).
#
# Knobs: SPINDLE_DEV_DISKS     classes, e.g. "4:hdd,2:ssd" (default) — disk N gets label spdl-N;
#                              "none" on a machine with real disks prepared for Spindle
#        SPINDLE_DEV_DISK_SIZE size of each sparse file, as truncate(1) reads it (default 4G)
#        SPINDLE_DISK_ROOT     where they are mounted (default $SPINDLE_STATE_DIR/disks)
#        SPINDLE_NODE_NAME     this machine's node name in disk-service (default: hostname -s)

SPINDLE_DEV_DISKS="${SPINDLE_DEV_DISKS:-4:hdd,2:ssd}"
SPINDLE_DEV_DISK_SIZE="${SPINDLE_DEV_DISK_SIZE:-4G}"
SPINDLE_DISK_ROOT="${SPINDLE_DISK_ROOT:-$SPINDLE_STATE_DIR/disks}"
SPINDLE_DEV_DISK_DIR="$SPINDLE_STATE_DIR/dev-disks"
SPINDLE_DISK_SERVICE_URL="${SPINDLE_DISK_SERVICE_URL:-http://127.0.0.1:8083}"

# dev_disk_classes -> one class per line, disk 1 first, from $SPINDLE_DEV_DISKS.
dev_disk_classes() {
  local spec count class
  IFS=',' read -ra spec <<< "$SPINDLE_DEV_DISKS"
  for item in "${spec[@]}"; do
    [[ "$item" =~ ^([0-9]+):(hdd|ssd|nvme)$ ]] || die "SPINDLE_DEV_DISKS: '$item' is not COUNT:hdd|ssd|nvme"
    count="${BASH_REMATCH[1]}" class="${BASH_REMATCH[2]}"
    for ((i = 0; i < count; i++)); do echo "$class"; done
  done
}

# dev_disk_loops FILE -> the loop devices FILE is attached to (none, one, or stale extras).
dev_disk_loops() { losetup -j "$1" | cut -d: -f1; }

# ensure_dev_disk N -> disk N's file, loop device, spdl-N filesystem and mount exist (idempotent).
ensure_dev_disk() {
  local n="$1" file="$SPINDLE_DEV_DISK_DIR/disk$1.img" label="spdl-$1" mnt="$SPINDLE_DISK_ROOT/disk$1" dev found
  [[ -e "$file" ]] || truncate -s "$SPINDLE_DEV_DISK_SIZE" "$file" || die "cannot create $file"
  dev="$(dev_disk_loops "$file" | head -n1)"
  [[ -n "$dev" ]] || dev="$(losetup --direct-io=on --find --show "$file")" || die "cannot attach $file to a loop device"
  found="$(blkid -p -o value -s LABEL "$dev" 2>/dev/null || true)"
  if [[ "$found" != "$label" ]]; then
    # Our own file, but it must be blank before we format it: never overwrite a foreign filesystem.
    [[ -z "$(blkid -p -o value -s TYPE "$dev" 2>/dev/null || true)" ]] \
      || die "$file ($dev) holds a filesystem labelled '${found}', not $label: remove it by hand"
    mkfs.xfs -q -L "$label" "$dev" || die "mkfs.xfs on $dev failed"
  fi
  mkdir -p "$mnt"
  if ! findmnt -rn -S "$dev" -M "$mnt" >/dev/null; then
    ! mountpoint -q "$mnt" || die "$mnt is already a mount point of something else"
    mount -o noatime,nosuid,nodev "$dev" "$mnt" || die "cannot mount $dev on $mnt"
  fi
}

# disk_service_call METHOD PATH [JSON] -> the response body; dies on an HTTP error.
disk_service_call() {
  internal_call "$1" "$SPINDLE_DISK_SERVICE_URL$2" "${3:-}" || die "disk-service: $1 $2 failed"
}

# register_this_node -> this machine as a node (its agent offers its cpus and memory, disks or not).
register_this_node() {
  local mem_mb
  mem_mb=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
  disk_service_call POST /nodes "{\"name\": \"${SPINDLE_NODE_NAME:-$(hostname -s)}\", \"address\": \"127.0.0.1\", \"disk_root\": \"$SPINDLE_DISK_ROOT\", \"cpus\": $(nproc), \"mem_mb\": $mem_mb}" >/dev/null
}

# register_dev_disks CLASSES_JSON -> this machine as a node, and its Spindle disks discovered.
register_dev_disks() {
  local node="${SPINDLE_NODE_NAME:-$(hostname -s)}" result
  register_this_node
  result="$(disk_service_call POST "/nodes/$node/discover" "{\"classes\": $1}")"
  log "disk-service: node $node: $(python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["registered"]), "disks registered,", len(r["updated"]), "already known")' <<< "$result")"
}

# ensure_dev_disks -> all dev disks of $SPINDLE_DEV_DISKS exist, are mounted and registered.
ensure_dev_disks() {
  [[ -n "${SPINDLE_INTERNAL_TOKEN:-}" ]] || die "SPINDLE_INTERNAL_TOKEN is not set (source $SPINDLE_STATE_DIR/spindle.env)"
  if [[ "$SPINDLE_DEV_DISKS" == none ]]; then
    # still a node: without it its agent offered nothing, and a fresh machine's first static-web
    # launch (no disk) failed after 120 s (bench/fresh_machine.sh)
    register_this_node
    log "dev disks: none (SPINDLE_DEV_DISKS=none)"
    return 0
  fi
  [[ $EUID -eq 0 ]] || die "dev disks need root (losetup, mkfs, mount)"
  mkdir -p "$SPINDLE_DEV_DISK_DIR" "$SPINDLE_DISK_ROOT"
  local n=0 classes="" class wanted
  wanted="$(dev_disk_classes)" || exit 1
  while read -r class; do
    [[ -n "$class" ]] || continue
    n=$((n + 1))
    ensure_dev_disk "$n"
    classes+="${classes:+, }\"spdl-$n\": \"$class\""
  done <<< "$wanted"
  ((n > 0)) || die "SPINDLE_DEV_DISKS='$SPINDLE_DEV_DISKS' asks for no disks"
  log "dev disks: $n × $SPINDLE_DEV_DISK_SIZE mounted under $SPINDLE_DISK_ROOT ($SPINDLE_DEV_DISKS)"
  register_dev_disks "{$classes}"
}

# remove_dev_disks -> unmount, detach and delete the dev disks this file created, nothing else.
remove_dev_disks() {
  local file dev mnt
  for file in "$SPINDLE_DEV_DISK_DIR"/disk*.img; do
    [[ -e "$file" ]] || continue
    for dev in $(dev_disk_loops "$file"); do
      for mnt in $(findmnt -rn -S "$dev" -o TARGET); do umount "$mnt" || die "cannot unmount $mnt (busy?)"; done
      losetup -d "$dev" || die "cannot detach $dev"
    done
    rm -f "$file"
    mnt="$SPINDLE_DISK_ROOT/$(basename "$file" .img)"
    if [[ -d "$mnt" ]] && ! mountpoint -q "$mnt"; then rmdir "$mnt" 2>/dev/null || true; fi
  done
  rmdir "$SPINDLE_DEV_DISK_DIR" "$SPINDLE_DISK_ROOT" 2>/dev/null || true
  log "dev disks removed"
}
