# shellcheck shell=bash
# Shared shell helpers for deploy/*: paths, logging, process bookkeeping.
# Everything Spindle starts is recorded under $SPINDLE_STATE_DIR so `down` stops only that.
set -euo pipefail

SPINDLE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export SPINDLE_ROOT
export SPINDLE_STATE_DIR="${SPINDLE_STATE_DIR:-/var/lib/spindle}"
export SPINDLE_LOG_DIR="${SPINDLE_LOG_DIR:-$SPINDLE_STATE_DIR/log}"
export SPINDLE_RUN_DIR="$SPINDLE_STATE_DIR/run"
export SPINDLE_VENV="${SPINDLE_VENV:-$SPINDLE_ROOT/.venv}"
export SPINDLE_BIN_DIR="$SPINDLE_STATE_DIR/bin"
mkdir -p "$SPINDLE_STATE_DIR" "$SPINDLE_LOG_DIR" "$SPINDLE_RUN_DIR" "$SPINDLE_BIN_DIR"

log() { printf '[spindle %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# proc_start PID -> the process's start time in clock ticks (field 22 of /proc/PID/stat).
proc_start() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }

# pid_alive NAME -> true when the process recorded for NAME still runs. The start time is
# recorded too, so a pid reused after a reboot or session end is not mistaken for ours; a zombie
# (ended, not reaped yet by a parent that does not reap) does not run.
pid_alive() {
  local f="$SPINDLE_RUN_DIR/$1.pid"
  [[ -s "$f" ]] || return 1
  local pid; pid="$(cat "$f")"
  [[ "$(proc_start "$pid")" == "$(cat "$SPINDLE_RUN_DIR/$1.start" 2>/dev/null)" ]] \
    && [[ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]]
}

# start_daemon NAME CMD... -> starts CMD detached (own session), logs to $SPINDLE_LOG_DIR/NAME.log,
# records its pid; does nothing when NAME already runs (idempotent `up`).
start_daemon() {
  local name="$1"; shift
  if pid_alive "$name"; then log "$name already running (pid $(cat "$SPINDLE_RUN_DIR/$name.pid"))"; return 0; fi
  setsid "$@" >>"$SPINDLE_LOG_DIR/$name.log" 2>&1 < /dev/null &
  echo $! > "$SPINDLE_RUN_DIR/$name.pid"
  proc_start $! > "$SPINDLE_RUN_DIR/$name.start"
  log "started $name (pid $!)"
}

# stop_daemon NAME -> TERM, wait up to 15 s, then KILL; removes the pid file.
stop_daemon() {
  local name="$1" f="$SPINDLE_RUN_DIR/$1.pid" pid
  [[ -s "$f" ]] || return 0
  pid="$(cat "$f")"
  if pid_alive "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    log "stopped $name (pid $pid)"
  fi
  rm -f "$f" "$SPINDLE_RUN_DIR/$name.start"
}

# wait_for DESCRIPTION SECONDS CMD... -> polls CMD every 0.2 s until it succeeds.
wait_for() {
  local what="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || die "timed out after ${secs}s waiting for $what"
    sleep 0.2
  done
}

# mark_started THING -> remembers that `up` (not someone else) started THING.
mark_started() { touch "$SPINDLE_RUN_DIR/started-$1"; }
was_started() { [[ -e "$SPINDLE_RUN_DIR/started-$1" ]]; }
unmark_started() { rm -f "$SPINDLE_RUN_DIR/started-$1"; }

# internal_call METHOD URL [JSON] -> the response body of a call to an internal Spindle service,
# made as the deploy admin (the internal token, an identity signed with SPINDLE_IDENTITY_KEY); fails
# on an HTTP error.
internal_call() {
  local identity
  identity="$(internal_identity deploy admin)" || die "cannot sign the deploy's identity"
  curl -fsS -X "$1" "$2" -H "Authorization: Bearer $SPINDLE_INTERNAL_TOKEN" -H "X-Spindle-Identity: $identity" \
    -H "Content-Type: application/json" ${3:+--data "$3"}
}

# internal_identity ACTOR ROLE -> an X-Spindle-Identity value for ACTOR in ROLE, signed with
# SPINDLE_IDENTITY_KEY (spindle_common.auth; the key goes through the environment, never argv).
internal_identity() {
  [[ -n "${SPINDLE_IDENTITY_KEY:-}" ]] || die "SPINDLE_IDENTITY_KEY is not set (source $SPINDLE_STATE_DIR/spindle.env)"
  SPINDLE_IDENTITY_KEY="$SPINDLE_IDENTITY_KEY" "$SPINDLE_VENV/bin/python" -c 'import sys, time
from spindle_common.auth import env_identity_key, sign_identity
print(sign_identity(env_identity_key(), sys.argv[1], sys.argv[2], int(time.time()) + 300))' "$1" "$2"
}

# build_go_program NAME WHAT [PACKAGE] -> $SPINDLE_BIN_DIR/NAME built from the Go module deploy/NAME
# (a tiny main, or a dependency's main PACKAGE, with a committed go.sum); skipped while that module
# is unchanged since the last build.
build_go_program() {
  local src="$SPINDLE_ROOT/deploy/$1" bin="$SPINDLE_BIN_DIR/$1" stamp="$SPINDLE_BIN_DIR/$1.src-sha" package="${3:-.}"
  local sha; sha="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-16)"
  if [[ -x "$bin" && "$(cat "$stamp" 2>/dev/null)" == "$sha" ]]; then return 0; fi
  log "building $2 from its Go module"
  if ! (cd "$src" && go build -trimpath -o "$bin.tmp" "$package"); then die "building $1 failed"; fi
  mv "$bin.tmp" "$bin"
  echo "$sha" > "$stamp"
}
