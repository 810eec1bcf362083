# shellcheck shell=bash
# The nodes' image registry: CNCF Distribution built from its Go module (deploy/registry), two
# processes over one storage folder. The one on loopback (127.0.0.1:SPINDLE_REGISTRY_PORT, which
# Docker trusts without TLS) is where this machine pushes every Spindle image; the read-only one on
# the node fabric's address (SPINDLE_FABRIC_ADDR:SPINDLE_REGISTRY_PORT) is where nodes pull them
# (their dockerd trusts it as an insecure registry; a member container on the fabric can pull but
# never push). Real clusters run one registry the same way (docs/MULTINODE.md).

REGISTRY_BIN="$SPINDLE_BIN_DIR/registry"
export SPINDLE_REGISTRY_PORT="${SPINDLE_REGISTRY_PORT:-5000}"

build_registry() { build_go_program registry "the image registry (CNCF Distribution)"; }

# registry_config NAME ADDR READONLY -> the config file of one registry process (the read-only one
# never purges: uploads are the writer's).
registry_config() {
  local dir="$SPINDLE_STATE_DIR/registry"
  (umask 077; cat > "$dir/$1.yml" <<YML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $dir/data
  maintenance:
    uploadpurging:
      enabled: $([[ $3 == true ]] && echo false || echo true)
      age: 168h
      interval: 24h
      dryrun: false
    readonly:
      enabled: $3
http:
  addr: $2
  secret: $(cat "$dir/http-secret")
YML
)
  echo "$dir/$1.yml"
}

registry_ok() { curl -fs "http://$1/v2/" >/dev/null; }

ensure_registry() {
  local dir="$SPINDLE_STATE_DIR/registry" local_addr="127.0.0.1:$SPINDLE_REGISTRY_PORT"
  local fabric_addr="$SPINDLE_FABRIC_ADDR:$SPINDLE_REGISTRY_PORT"
  build_registry
  mkdir -p "$dir/data"
  [[ -s "$dir/http-secret" ]] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '/+=' > "$dir/http-secret")
  # (OTEL_TRACES_EXPORTER=none: Distribution would otherwise keep sending traces to localhost:4318.)
  start_daemon registry env OTEL_TRACES_EXPORTER=none "$REGISTRY_BIN" serve \
    "$(registry_config registry "$local_addr" false)"
  start_daemon registry-fabric env OTEL_TRACES_EXPORTER=none "$REGISTRY_BIN" serve \
    "$(registry_config registry-fabric "$fabric_addr" true)"
  wait_for "the image registry on $local_addr" 30 registry_ok "$local_addr"
  wait_for "the nodes' (read-only) image registry on $fabric_addr" 30 registry_ok "$fabric_addr"
}

# push_image IMAGE -> IMAGE into the registry (unchanged layers are not sent again).
push_image() {
  docker tag "$1" "127.0.0.1:$SPINDLE_REGISTRY_PORT/$1"
  docker push -q "127.0.0.1:$SPINDLE_REGISTRY_PORT/$1" >/dev/null || { docker rmi "127.0.0.1:$SPINDLE_REGISTRY_PORT/$1" >/dev/null; return 1; }
  docker rmi "127.0.0.1:$SPINDLE_REGISTRY_PORT/$1" >/dev/null # the tag only; the image stays
}

# push_base_image -> the base image, which static-web and every job image are (product images are
# pushed by deploy/build-images as each is built).
push_base_image() {
  push_image "$SPINDLE_BASE_IMAGE" || die "pushing $SPINDLE_BASE_IMAGE to the registry failed"
  log "base image in the registry (nodes pull from $SPINDLE_FABRIC_ADDR:$SPINDLE_REGISTRY_PORT)"
}

stop_registry() { stop_daemon registry-fabric; stop_daemon registry; }
