#!/bin/sh
# Build engine/cpp and run its C++ unit and end-to-end tests. Python is needed only for the
# cluster-mode tests (test-remote fetches from spindle_engine.fileserver); they are skipped
# with a message when no Python can import it (SPINDLE_PYTHON picks the interpreter).
# Exits non-zero on any failure. Extra arguments: FORMAT fixture files written by another
# language (partition files; an optional NAME.expected.json beside each), decoded by test-codec.
set -eu
CPP="$(cd "$(dirname "$0")" && pwd)"
"$CPP/build.sh"
# Fixtures written by the Python side, if any (engine/tests/fixtures/*.bin), plus arguments:
# the fixtures are appended, then the original arguments moved behind them.
nargs=$#
for fixture in "$CPP"/../tests/fixtures/*.bin; do
  if [ -e "$fixture" ]; then set -- "$@" "$fixture"; fi
done
while [ "$nargs" -gt 0 ]; do set -- "$@" "$1"; shift; nargs=$((nargs - 1)); done
"$CPP/build/test-codec" "$@"
timeout 300 "$CPP/build/test-executor" "$CPP/build" 2>"$CPP/build/test-executor.log" || {
  status=$?
  tail -20 "$CPP/build/test-executor.log" >&2
  exit "$status"
}
PY="${SPINDLE_PYTHON:-$CPP/../../.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3 || true)"
if [ -n "$PY" ] && PYTHONPATH="$CPP/../python" "$PY" -c 'import spindle_engine.fileserver' 2>/dev/null; then
  timeout 300 "$CPP/build/test-remote" "$CPP/build" "$PY" "$CPP/../python" 2>"$CPP/build/test-remote.log" || {
    status=$?
    tail -20 "$CPP/build/test-remote.log" >&2
    exit "$status"
  }
else
  echo "engine/cpp: SKIPPED test-remote (no Python importing spindle_engine.fileserver)" >&2
fi
echo "engine/cpp: all tests passed"
