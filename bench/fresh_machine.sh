#!/usr/bin/env bash
# A fresh Debian 12 machine's first start, timed: a container (all capabilities the machine has) of Spindle's own Debian 12
# base image (debootstrap minbase, nothing of Spindle installed: no Docker, PostgreSQL, Python
# packages, Node, Go, compilers) gets this commit's files and runs `deploy/up`, which installs
# everything (apt, pip, npm, go, maven) and starts the platform with its own dockerd; then a user
# launches static-web (the base image, no disk) until RUNNING. Prints the seconds of each and the
# machine. docs/TESTING.md, "A first start".
#
# One command, as root, with the platform on this machine stopped (./deploy/down) and nothing else
# running: `bench/fresh_machine.sh`. It needs spindle/base:bookworm in this machine's Docker (made
# by deploy/up). Its dockerd's data and its state sit in /var/tmp/spindle-fresh-machine (a real
# filesystem: overlay2 needs one), removed at the end with the container. No dev disks
# (SPINDLE_DEV_DISKS=none: loop devices belong to the host's kernel and its labels to this machine's
# platform); the static-web launch asks for none. deploy/up's whole log is kept in
# /var/tmp/spindle-fresh-machine.up.log, the platform's logs in /var/tmp/spindle-fresh-machine.logs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=spindle-fresh-machine
WORK=/var/tmp/$NAME
IMAGE=spindle/base:bookworm

[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 1; }
remove() {
  docker rm -f "$NAME" >/dev/null 2>&1 || true  # its dockerd, containers, mounts and networks go with it
  [[ ! -f "$WORK/state/up.log" ]] || cp "$WORK/state/up.log" "$WORK.up.log"
  [[ ! -d "$WORK/state/log" ]] || { rm -rf "$WORK.logs"; cp -r "$WORK/state/log" "$WORK.logs"; }
  rm -rf "$WORK" 2>/dev/null || true
}
# With the platform stopped no Docker Engine runs: one for this run only, stopped at the end.
dockerd_pid=""
cleanup() {
  remove
  if [[ -n "$dockerd_pid" ]]; then kill "$dockerd_pid"; wait "$dockerd_pid" || true; fi
}
trap cleanup EXIT
if ! docker info >/dev/null 2>&1; then
  dockerd --host unix:///var/run/docker.sock > "$WORK.dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
fi
docker image inspect "$IMAGE" >/dev/null || { echo "no $IMAGE: run ./deploy/up once first" >&2; exit 1; }
remove  # a run before this one's
mkdir -p "$WORK/docker" "$WORK/state"

# Its first process makes the cgroup hierarchies writable (this machine has cgroup v1; on cgroup v2,
# which wants no process in a cgroup whose controllers it hands down, everything first moves to a child
# cgroup, as Docker-in-Docker does), then deploy/up and the launch.
# shellcheck disable=SC2016 # expanded in the container
run='set -e
mount -o remount,rw /sys
for hierarchy in $(awk "\$2 ~ \"^/sys/fs/cgroup\" && \$3 ~ \"^cgroup\" {print \$2}" /proc/self/mounts); do
  mount -o remount,bind,rw "$hierarchy"
done
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  mkdir -p /sys/fs/cgroup/init
  xargs -rn1 < /sys/fs/cgroup/cgroup.procs > /sys/fs/cgroup/init/cgroup.procs || true
  sed -e "s/ / +/g" -e "s/^/+/" < /sys/fs/cgroup/cgroup.controllers > /sys/fs/cgroup/cgroup.subtree_control
fi
ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/bin/npm
ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/bin/npx
export PATH=$PATH:/usr/local/go/bin
cd /root/spindle
start=$(date +%s)
SPINDLE_DEV_DISKS=none ./deploy/up > /var/lib/spindle/up.log 2>&1 || { tail -n 40 /var/lib/spindle/up.log; exit 1; }
echo "deploy/up answered after $(($(date +%s) - start)) s"
.venv/bin/python bench/first_start.py --static-web-only || { tail -n 30 /var/lib/spindle/log/orchestrator.log; exit 1; }
echo "static-web RUNNING and deleted $(($(date +%s) - start)) s after the start"'
env_args=()  # pip's settings in this machine's environment, as the farm provisions them
while read -r var; do env_args+=(-e "$var"); done < <(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p')
# Not --privileged: that asks for every capability the kernel knows, and this machine's own bounding set
# lacks CAP_SYS_RESOURCE (runc: "unable to apply caps"). Every other one, no seccomp/AppArmor profile,
# every device, and /proc, /sys and the cgroup tree writable (remounted in the container) stand in for it.
docker create --name "$NAME" --hostname fresh --label io.spindle.owned=true "${env_args[@]}" \
  --cap-add ALL --cap-drop SYS_RESOURCE --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
  --security-opt systempaths=unconfined --device-cgroup-rule 'a *:* rwm' --cgroupns private \
  -v /usr/local/go:/usr/local/go:ro -v /usr/bin/node:/usr/bin/node:ro -v /usr/lib/node_modules:/usr/lib/node_modules:ro \
  -v "$WORK/docker:/var/lib/docker" -v "$WORK/state:/var/lib/spindle" "$IMAGE" bash -c "$run" >/dev/null
git -C "$ROOT" archive --prefix=spindle/ HEAD | docker cp - "$NAME:/root"
# What this farm provisions on every machine besides its CA certificates (already in the base
# image): pip's and npm's settings, when this machine has them; its Go and Node.js 20 (Debian 12's
# are too old for Consul's build and the web UI's) are this machine's, mounted read-only above.
for provisioned in /etc/pip.conf /root/.npmrc; do
  [[ ! -f "$provisioned" ]] || docker cp "$provisioned" "$NAME:$provisioned"
done
echo "machine: $(nproc) cpus, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
  "$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"'); commit $(git -C "$ROOT" rev-parse --short HEAD); $(date -u +%FT%TZ)"
docker start -a "$NAME"
