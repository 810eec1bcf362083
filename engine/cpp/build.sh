#!/bin/sh
# Build the C++ executor (engine/cpp): install what is missing (Debian), generate the Thrift
# C++ code from engine/rpc/*.thrift into build/gen, compile with make. Idempotent.
set -eu
CPP="$(cd "$(dirname "$0")" && pwd)"
RPC="$CPP/../rpc"
cd "$CPP"

missing=""
command -v thrift >/dev/null 2>&1 || missing="$missing thrift-compiler"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
command -v make >/dev/null 2>&1 || missing="$missing make"
[ -f /usr/include/thrift/Thrift.h ] || missing="$missing libthrift-dev"
[ -d /usr/include/boost ] || missing="$missing libboost-dev"
[ -f /usr/include/openssl/sha.h ] || missing="$missing libssl-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
if [ -n "$missing" ]; then
  # shellcheck disable=SC2086 # $missing is a list of Debian package names, split into arguments on purpose
  apt-get install -y $missing || { apt-get update && apt-get install -y $missing; }
fi

# Regenerate only when an IDL file is newer than the last generation.
GEN=build/gen
STAMP="$GEN/.stamp"
if [ ! -f "$STAMP" ] || [ -n "$(find "$RPC" -name '*.thrift' -newer "$STAMP")" ]; then
  rm -rf "$GEN" && mkdir -p "$GEN"
  # The C++ generator rejects identifiers it reserves (e.g. a field named `function`); such
  # fields are renamed with a trailing "_" in a copy of the IDL. Field names never travel in
  # TBinaryProtocol (only ids and types), so this stays wire-compatible. See NOTES.md.
  mkdir -p "$GEN/idl"
  for idl in "$RPC"/*.thrift; do
    sed -E 's/^([[:space:]]*[0-9]+:[^/]*[[:space:]])(function)([[:space:]]*[,;]?)/\1\2_\3/' \
      "$idl" > "$GEN/idl/$(basename "$idl")"
    thrift --gen cpp:no_skeleton -out "$GEN" "$GEN/idl/$(basename "$idl")"
  done
  rm -f "$GEN"/*skeleton.cpp
  touch "$STAMP"
fi

# Through ccache where it is installed (deploy/dev installs it on a development machine; an image
# build has none): a fresh clone (CI's) compiles the same sources again, and ccache hands back the
# objects of an earlier build of the same preprocessed code (its cache outlives the clone; the
# clone's path is left out of the hash so another clone hits too).
if command -v ccache >/dev/null 2>&1; then
  CCACHE_NOHASHDIR=true make -j"$(nproc)" CXX="ccache ${CXX:-g++}" "$@"
else
  make -j"$(nproc)" "$@"
fi
