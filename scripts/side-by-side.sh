# shellcheck shell=bash
# Parts of a script run side by side, each into its own log, each part's output printed whole once
# it ends, in the order the script asks for them (scripts/lint, scripts/test-unit). Sourced.
SIDE_BY_SIDE_LOGS="$(mktemp -d)"
trap 'rm -rf "$SIDE_BY_SIDE_LOGS"' EXIT
declare -A SIDE_BY_SIDE_PIDS

# start_part NAME CMD... -> CMD (a command or a function) in the background, its output into NAME's log.
start_part() {
  local name="$1"; shift
  "$@" > "$SIDE_BY_SIDE_LOGS/$name" 2>&1 &
  SIDE_BY_SIDE_PIDS[$name]=$!
}

# finish_part NAME -> waits for NAME's part and prints its output; the part's exit status.
finish_part() {
  local status=0
  wait "${SIDE_BY_SIDE_PIDS[$1]}" || status=$?
  cat "$SIDE_BY_SIDE_LOGS/$1"
  return "$status"
}
