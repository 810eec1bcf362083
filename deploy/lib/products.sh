# shellcheck shell=bash
# Product images: one `docker build` per catalog/<product>/<version>/Dockerfile, on top of the base
# image. The build context is the Dockerfile's directory, or the directory named (relative to it)
# in a `build-context` file next to it (the engine image builds from engine/). Idempotent: a
# build runs only when the image is missing or its Dockerfile or context changed (their hash is
# kept in the image label io.spindle.dockerfile-sha256).

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

build_product_images() {
  local dockerfile dir context image hash current name
  local -a pids=() names=()
  for dockerfile in "$SPINDLE_ROOT"/catalog/*/*/Dockerfile; do
    [[ -e "$dockerfile" ]] || continue
    dir="$(dirname "$dockerfile")"
    context="$dir"
    [[ -f "$dir/build-context" ]] && context="$(cd "$dir/$(cat "$dir/build-context")" && pwd)"
    image="$(product_image_name "$dir/manifest.json")" || die "cannot read the image name from $dir/manifest.json"
    hash="$(sha256sum "$dockerfile" | cut -d' ' -f1)"
    [[ "$context" == "$dir" ]] || hash="$(echo "$hash $(build_context_hash "$context")" | sha256sum | cut -d' ' -f1)"
    current="$(docker image inspect -f '{{ index .Config.Labels "io.spindle.dockerfile-sha256" }}' "$image" 2>/dev/null || true)"
    if [[ "$current" == "$hash" ]]; then log "product image $image is up to date"; continue; fi
    name="build-$(basename "$(dirname "$dir")")-$(basename "$dir")"
    log "building product image $image (from ${dockerfile#"$SPINDLE_ROOT"/}; log: $SPINDLE_LOG_DIR/$name.log)"
    # Every product image is FROM the base image only: they build side by side (mostly downloads).
    docker build --build-arg "BASE_IMAGE=$SPINDLE_BASE_IMAGE" \
      --label io.spindle.owned=true --label io.spindle.image=product \
      --label "io.spindle.dockerfile-sha256=$hash" -t "$image" -f "$dockerfile" "$context" \
      >"$SPINDLE_LOG_DIR/$name.log" 2>&1 &
    pids+=("$!") names+=("$image|$name")
  done
  local i failed=""
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=" ${names[$i]%%|*} (see $SPINDLE_LOG_DIR/${names[$i]##*|}.log)"
  done
  [[ -z "$failed" ]] || die "building product images failed:$failed"
  (( ${#pids[@]} == 0 )) || log "built ${#pids[@]} product image(s)"
}
