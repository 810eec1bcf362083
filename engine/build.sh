#!/bin/sh
# Build the engine: install what it needs (idempotent), generate Thrift code, build C++ if present.
set -eu
ENGINE="$(cd "$(dirname "$0")" && pwd)"
PY="${SPINDLE_PYTHON:-$ENGINE/../.venv/bin/python}"

if ! command -v thrift >/dev/null 2>&1; then
  apt-get install -y thrift-compiler || { apt-get update && apt-get install -y thrift-compiler; }
fi
"$PY" -m pip install -q -e "$ENGINE/python"

# Regenerate only when an IDL file is newer than the last generation.
GEN="$ENGINE/python/spindle_engine/_gen"
STAMP="$GEN/.stamp"
if [ ! -f "$STAMP" ] || [ -n "$(find "$ENGINE/rpc" -name '*.thrift' -newer "$STAMP")" ]; then
  rm -rf "$GEN" && mkdir -p "$GEN"
  for idl in "$ENGINE"/rpc/*.thrift; do
    thrift --gen py -out "$GEN" "$idl"
  done
  touch "$STAMP"
fi

if [ -x "$ENGINE/cpp/build.sh" ]; then
  "$ENGINE/cpp/build.sh"
fi
