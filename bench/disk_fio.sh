#!/usr/bin/env bash
# fio sequential write (1 MiB blocks, O_DIRECT, 1 GiB per run) on one dedicated dev disk: on the
# host, and inside a container that gets the disk bind-mounted at /data/1 like a Spindle member.
# One command: sudo bench/disk_fio.sh   (knobs: FIO_SIZE=1G FIO_RUNS=3 FIO_IODEPTH=16)
# The disk is a sparse file on a direct-I/O loop device, XFS labelled spdlbench (no spdl- prefix,
# so disk-service never discovers it); it is unmounted, detached and deleted on exit.
source "$(dirname "$0")/../deploy/lib/common.sh"
source "$SPINDLE_ROOT/deploy/lib/images.sh"

FIO_SIZE="${FIO_SIZE:-1G}" FIO_RUNS="${FIO_RUNS:-3}" FIO_IODEPTH="${FIO_IODEPTH:-16}"
BENCH_DIR="$SPINDLE_STATE_DIR/bench"
IMAGE_FILE="$BENCH_DIR/disk-fio.img" MOUNT="$BENCH_DIR/disk-fio" LABEL="spdlbench"
FIO_IMAGE="spindle/fio-bench:bookworm"
FIO_ARGS=(--name=seqwrite --rw=write --bs=1M --size="$FIO_SIZE" --direct=1 --ioengine=libaio
          --iodepth="$FIO_IODEPTH" --numjobs=1 --end_fsync=1 --runtime=120 --output-format=json)

[[ $EUID -eq 0 ]] || die "run as root (losetup, mount, docker)"

cleanup() {
  local dev
  for dev in $(losetup -j "$IMAGE_FILE" | cut -d: -f1); do
    umount "$MOUNT" 2>/dev/null || true
    losetup -d "$dev"
  done
  rm -f "$IMAGE_FILE"
  rmdir "$MOUNT" "$BENCH_DIR" 2>/dev/null || true
}
trap cleanup EXIT

# The fio image: the base image plus Debian's fio (plain-http mirror, so no extra CA is needed).
if ! image_exists "$FIO_IMAGE"; then
  log "building $FIO_IMAGE"
  docker build -q -t "$FIO_IMAGE" - >/dev/null <<DOCKERFILE || die "docker build of $FIO_IMAGE failed"
FROM $SPINDLE_BASE_IMAGE
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fio \
 && rm -rf /var/lib/apt/lists/*
LABEL io.spindle.owned=true io.spindle.image=fio-bench
DOCKERFILE
fi

cleanup  # what an interrupted earlier run may have left
mkdir -p "$BENCH_DIR" "$MOUNT"
truncate -s 4G "$IMAGE_FILE"
DEV="$(losetup --direct-io=on --find --show "$IMAGE_FILE")"
mkfs.xfs -q -L "$LABEL" "$DEV"
mount -o noatime "$DEV" "$MOUNT"

# bw_mib JSON -> the write bandwidth of fio's JSON report in MiB/s.
bw_mib() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["write"]["bw"] / 1024, 1))'; }

host_runs=() container_runs=()
for ((run = 1; run <= FIO_RUNS; run++)); do
  rm -f "$MOUNT/fio.dat"
  host_runs+=("$(fio "${FIO_ARGS[@]}" --filename="$MOUNT/fio.dat" | bw_mib)")
  rm -f "$MOUNT/fio.dat"
  container_runs+=("$(docker run --rm --label io.spindle.owned=true -v "$MOUNT:/data/1" "$FIO_IMAGE" \
                        fio "${FIO_ARGS[@]}" --filename=/data/1/fio.dat | bw_mib)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cat <<REPORT
| where | runs (MiB/s) | median MiB/s |
|---|---|---|
| host, $DEV (loop, direct-io) mounted XFS | ${host_runs[*]} | $(median "${host_runs[@]}") |
| container ($FIO_IMAGE), same disk at /data/1 | ${container_runs[*]} | $(median "${container_runs[@]}") |

fio $(fio --version) · ${FIO_ARGS[*]} · $(nproc) CPUs $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) · kernel $(uname -r) · backing file on $(findmnt -no SOURCE,FSTYPE --target "$BENCH_DIR" | xargs)
REPORT
