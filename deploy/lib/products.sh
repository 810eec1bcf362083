# Product images: one `docker build` per catalog/<product>/<version>/Dockerfile, on top of the base
# image. Idempotent: a build runs only when the image is missing or its Dockerfile changed (the
# Dockerfile's hash is kept in the image label io.spindle.dockerfile-sha256).

# product_image_name MANIFEST -> the "image" field of a product manifest.
product_image_name() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image"])' "$1"
}

build_product_images() {
  local dockerfile dir image hash current
  for dockerfile in "$SPINDLE_ROOT"/catalog/*/*/Dockerfile; do
    [[ -e "$dockerfile" ]] || continue
    dir="$(dirname "$dockerfile")"
    image="$(product_image_name "$dir/manifest.json")" || die "cannot read the image name from $dir/manifest.json"
    hash="$(sha256sum "$dockerfile" | cut -d' ' -f1)"
    current="$(docker image inspect -f '{{ index .Config.Labels "io.spindle.dockerfile-sha256" }}' "$image" 2>/dev/null || true)"
    if [[ "$current" == "$hash" ]]; then log "product image $image is up to date"; continue; fi
    log "building product image $image (from ${dockerfile#"$SPINDLE_ROOT"/})"
    docker build --build-arg "BASE_IMAGE=$SPINDLE_BASE_IMAGE" \
      --label io.spindle.owned=true --label io.spindle.image=product \
      --label "io.spindle.dockerfile-sha256=$hash" -t "$image" "$dir" \
      >"$SPINDLE_LOG_DIR/build-$(basename "$(dirname "$dir")")-$(basename "$dir").log" 2>&1 \
      || die "building $image failed, see $SPINDLE_LOG_DIR/build-$(basename "$(dirname "$dir")")-$(basename "$dir").log"
  done
}
