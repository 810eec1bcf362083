# shellcheck shell=bash
# Docker Engine: use the one that runs, or start Debian's dockerd (no systemd on these machines).

docker_ok() { docker info >/dev/null 2>&1; }

ensure_dockerd() {
  if docker_ok; then log "Docker Engine is running"; return 0; fi
  [[ -S /var/run/docker.sock ]] && ! pgrep -x dockerd >/dev/null && rm -f /var/run/docker.sock
  # containerd is started by dockerd itself when not already running.
  start_daemon dockerd dockerd --host unix:///var/run/docker.sock
  mark_started dockerd
  wait_for "dockerd" 60 docker_ok
}

stop_dockerd_if_ours() {
  was_started dockerd || return 0
  stop_daemon dockerd
  unmark_started dockerd
}
