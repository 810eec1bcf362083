# shellcheck shell=bash
# The Spindle engine (engine/): Thrift code generated from engine/rpc/*.thrift into the package,
# the package installed into the venv, and the C++ executor and examples built (engine/build.sh).
build_engine() {
  local build_log="$SPINDLE_LOG_DIR/engine-build.log"
  log "building the engine (Thrift code, C++ executor; log: $build_log)"
  SPINDLE_PYTHON="$SPINDLE_VENV/bin/python" "$SPINDLE_ROOT/engine/build.sh" >>"$build_log" 2>&1 \
    || die "engine build failed, see $build_log"
}
