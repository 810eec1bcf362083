# shellcheck shell=bash
# Local images: no registry is reachable, so the base image is debootstrap + `docker import`.
# Product images are `docker build`s on top of it. Extra CA certificates (for pip/Maven inside
# builds behind a TLS-inspecting proxy) come from $SPINDLE_EXTRA_CA_DIR and are never committed.

export SPINDLE_BASE_IMAGE="${SPINDLE_BASE_IMAGE:-spindle/base:bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Default: the host's locally added CAs, when it has any.
if [[ -z "${SPINDLE_EXTRA_CA_DIR+x}" ]] && compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  export SPINDLE_EXTRA_CA_DIR=/usr/local/share/ca-certificates
fi

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

build_base_image() {
  if image_exists "$SPINDLE_BASE_IMAGE"; then log "base image $SPINDLE_BASE_IMAGE exists"; return 0; fi
  local rootfs="$SPINDLE_STATE_DIR/build/base-rootfs"
  log "building $SPINDLE_BASE_IMAGE with debootstrap (a few minutes)"
  rm -rf "$rootfs"; mkdir -p "$rootfs"
  debootstrap --variant=minbase --include=ca-certificates,iproute2,procps,python3 \
    bookworm "$rootfs" "$DEBIAN_MIRROR" >"$SPINDLE_LOG_DIR/debootstrap.log" 2>&1 \
    || die "debootstrap failed, see $SPINDLE_LOG_DIR/debootstrap.log"
  install_extra_cas "$rootfs"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    --change 'LABEL io.spindle.owned=true io.spindle.image=base' \
    --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$SPINDLE_BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  log "imported $SPINDLE_BASE_IMAGE"
}

# install_extra_cas ROOTFS -> copies $SPINDLE_EXTRA_CA_DIR/*.crt into the image and trusts them.
install_extra_cas() {
  [[ -n "${SPINDLE_EXTRA_CA_DIR:-}" ]] || return 0
  compgen -G "$SPINDLE_EXTRA_CA_DIR/*.crt" >/dev/null || die "SPINDLE_EXTRA_CA_DIR=$SPINDLE_EXTRA_CA_DIR has no *.crt"
  cp "$SPINDLE_EXTRA_CA_DIR"/*.crt "$1/usr/local/share/ca-certificates/"
  chroot "$1" update-ca-certificates >/dev/null
}
