# shellcheck shell=bash
# Debian packages the platform needs; installed only when missing (no network when all present).
APT_PACKAGES=(docker.io postgresql debootstrap iproute2 xfsprogs e2fsprogs util-linux fio jq curl python3-venv
              thrift-compiler libthrift-dev libboost-dev libssl-dev zlib1g-dev g++ make chromium
              krb5-kdc krb5-admin-server krb5-user # the platform's KDC (deploy/lib/kdc.sh): krb5kdc, kadmin.local, kinit
              shellcheck clang-format ccache) # for `make lint`: the two before ccache; for engine/cpp/build.sh: ccache

install_apt_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  NEEDRESTART_MODE=a apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || die "apt-get install ${missing[*]} failed"
  # Debian starts services from postinst where it can; Spindle manages its own clusters.
}
