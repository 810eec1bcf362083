#!/bin/sh
# Build engine/cpp and run its C++ unit and end-to-end tests (no Python needed).
# Exits non-zero on any failure. Extra arguments: FORMAT fixture files written by another
# language (partition files; an optional NAME.expected.json beside each), decoded by test-codec.
set -eu
CPP="$(cd "$(dirname "$0")" && pwd)"
"$CPP/build.sh"
# Fixtures written by the Python side, if any (engine/tests/fixtures/*.bin), plus arguments.
set -- $(ls "$CPP"/../tests/fixtures/*.bin 2>/dev/null || true) "$@"
"$CPP/build/test-codec" "$@"
timeout 300 "$CPP/build/test-executor" "$CPP/build" 2>"$CPP/build/test-executor.log" || {
  status=$?
  tail -20 "$CPP/build/test-executor.log" >&2
  exit "$status"
}
echo "engine/cpp: all tests passed"
