# shellcheck shell=bash
# Product images: one `docker build` per catalog/<product>/<version>/Dockerfile, on top of the base
# image. The build context is the Dockerfile's directory, or the directory named (relative to it)
# in a `build-context` file next to it (the engine image builds from engine/). Idempotent: a
# build runs only when the image is missing or its Dockerfile or context changed (their hash is
# kept in the image label io.spindle.dockerfile-sha256). They build after the platform answers, in
# the background (deploy/build-images), each image's progress in a state file the catalog shows.

# product_image_name MANIFEST -> the "image" field of a product manifest.
product_image_name() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$1"
}

# build_context_hash DIR -> hash of the files a build of DIR would send (minus .dockerignore'd
# build outputs and caches).
build_context_hash() {
  (cd "$1" && find . -type f -not -path './cpp/build/*' -not -path '*/_gen/*' \
      -not -path '*/__pycache__/*' -not -path '*.egg-info/*' -not -path './tests/*' -not -name '*.so' \
      -not -path './python/build/*' -print0 \
    | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# product_images -> one line per product image, IMAGE|DOCKERFILE|CONTEXT|HASH|NAME: its Dockerfile,
# build context, the hash of both (kept in the image label io.spindle.dockerfile-sha256) and the
# name of its build log.
product_images() {
  local dockerfile dir context image hash
  for dockerfile in "$SPINDLE_ROOT"/catalog/*/*/Dockerfile; do
    [[ -e "$dockerfile" ]] || continue
    dir="$(dirname "$dockerfile")"
    context="$dir"
    [[ -f "$dir/build-context" ]] && context="$(cd "$dir/$(cat "$dir/build-context")" && pwd)"
    image="$(product_image_name "$dir/manifest.json")" || die "cannot read the image name from $dir/manifest.json"
    hash="$(sha256sum "$dockerfile" | cut -d' ' -f1)"
    [[ "$context" == "$dir" ]] || hash="$(echo "$hash $(build_context_hash "$context")" | sha256sum | cut -d' ' -f1)"
    echo "$image|$dockerfile|$context|$hash|build-$(basename "$(dirname "$dir")")-$(basename "$dir")"
  done
}

IMAGE_STATES="$SPINDLE_STATE_DIR/images"

# image_state_file IMAGE -> its state file (spindle_common.images.file_name: spindle/kafka:4.0 ->
# spindle_kafka_4.0.json).
image_state_file() { echo "$IMAGE_STATES/$(echo "$1" | tr '/:' '__').json"; }

# write_image_state IMAGE STATE [STEP STEPS MESSAGE] -> the state file the catalog and the
# orchestrator read (common/spindle_common/images.py), replaced whole (rename).
write_image_state() {
  local file
  file="$(image_state_file "$1")"
  python3 -c 'import json, sys, time
image, state, step, steps, message = sys.argv[1:6]
print(json.dumps({"image": image, "state": state, "step": int(step) if step else None,
                  "steps": int(steps) if steps else None, "message": message or None,
                  "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))' \
    "$1" "$2" "${3:-}" "${4:-}" "${5:-}" > "$file.tmp" && mv "$file.tmp" "$file"
}

# image_state IMAGE -> its state in the background build (ready when it has no state file).
image_state() {
  local file
  file="$(image_state_file "$1")"
  [[ -e "$file" ]] || { echo ready; return; }
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["state"])' "$file" 2>/dev/null || echo queued
}

# wait_image_ready IMAGE [SECONDS] -> returns once IMAGE is in the registry; fails when its build
# failed or after SECONDS (default 1800).
wait_image_ready() {
  local deadline=$((SECONDS + ${2:-1800})) state
  while state="$(image_state "$1")"; [[ "$state" != ready ]]; do
    [[ "$state" != failed ]] || { log "image $1 failed to build (see $SPINDLE_LOG_DIR/image-builder.log)"; return 1; }
    (( SECONDS < deadline )) || { log "image $1 still $state after ${2:-1800} s"; return 1; }
    sleep 1
  done
}

# image_up_to_date IMAGE HASH -> the local IMAGE was built from the Dockerfile and context of HASH.
image_up_to_date() {
  [[ "$(docker image inspect -f '{{ index .Config.Labels "io.spindle.dockerfile-sha256" }}' "$1" 2>/dev/null)" == "$2" ]]
}

# in_registry IMAGE -> the registry (loopback side) has IMAGE's tag.
in_registry() {
  curl -fsI -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://127.0.0.1:$SPINDLE_REGISTRY_PORT/v2/${1%:*}/manifests/${1##*:}" >/dev/null 2>&1
}

# start_product_image_builds -> every product image not ready (not built from its current
# Dockerfile and context, not pushed, or its last build failed or was cut short) queued, and
# deploy/build-images started in the background to build and push them one at a time: the platform
# answers before they are. A builder still at work is left to it; with nothing queued none starts.
start_product_image_builds() {
  if pid_alive image-builder; then log "image-builder already running (pid $(cat "$SPINDLE_RUN_DIR/image-builder.pid"))"; return 0; fi
  mkdir -p "$IMAGE_STATES"
  local image dockerfile context hash name queued=0
  while IFS='|' read -r image dockerfile context hash name; do
    if image_up_to_date "$image" "$hash" && [[ "$(image_state "$image")" == ready ]] && in_registry "$image"; then
      continue
    fi
    write_image_state "$image" queued
    queued=$((queued + 1))
  done < <(product_images)
  if (( queued == 0 )); then log "product images up to date and in the registry"; return 0; fi
  log "$queued product image(s) to build or push, in the background (log: $SPINDLE_LOG_DIR/image-builder.log)"
  start_daemon image-builder nice -n 10 "$SPINDLE_ROOT/deploy/build-images"
}

# stop_image_builds -> the background builder and the build it runs (its process group).
stop_image_builds() {
  if pid_alive image-builder; then kill -TERM -- "-$(cat "$SPINDLE_RUN_DIR/image-builder.pid")" 2>/dev/null || true; fi
  stop_daemon image-builder
}

# build_product_image IMAGE DOCKERFILE CONTEXT HASH NAME -> builds IMAGE unless it is up to date,
# with a low CPU share (build_cgroup); its state says the step it is at. Fails with the build's exit code.
build_product_image() {
  local image="$1" dockerfile="$2" context="$3" hash="$4" name="$5" line
  if image_up_to_date "$image" "$hash"; then log "product image $image is up to date"; return 0; fi
  log "building product image $image (from ${dockerfile#"$SPINDLE_ROOT"/}; log: $SPINDLE_LOG_DIR/$name.log)"
  write_image_state "$image" building
  docker build --force-rm --build-arg "BASE_IMAGE=$SPINDLE_BASE_IMAGE" --cgroup-parent "$(build_cgroup)" \
    --label io.spindle.owned=true --label io.spindle.image=product \
    --label "io.spindle.dockerfile-sha256=$hash" -t "$image" -f "$dockerfile" "$context" 2>&1 \
    | tee "$SPINDLE_LOG_DIR/$name.log" | while IFS= read -r line; do
        if [[ "$line" =~ ^Step\ ([0-9]+)/([0-9]+) ]]; then
          write_image_state "$image" building "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
        fi
      done
  return "${PIPESTATUS[0]}"
}

# build_cgroup -> the cgroup the builds' containers run in (Docker's --cgroup-parent), made with a
# low CPU share so that members and tests on this machine come first; "" (Docker's default) when
# it cannot be made.
build_cgroup() {
  local v1=/sys/fs/cgroup/cpu/spindle-build v2=/sys/fs/cgroup/spindle-build
  if [[ -d /sys/fs/cgroup/cpu ]]; then
    mkdir -p "$v1" 2>/dev/null && echo 128 > "$v1/cpu.shares" 2>/dev/null && { echo /spindle-build; return; }
  elif [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    mkdir -p "$v2" 2>/dev/null && echo 20 > "$v2/cpu.weight" 2>/dev/null && { echo /spindle-build; return; }
  fi
  echo ""
}
