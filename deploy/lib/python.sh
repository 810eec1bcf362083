# Python workspace: one venv with every Spindle package installed editable, plus test tools.

PYTHON_PACKAGES=(common client api-server orchestrator scheduler disk-service network-service mesos-executor)
PYTHON_BIN="${PYTHON_BIN:-python3.11}"
command -v "$PYTHON_BIN" >/dev/null || PYTHON_BIN=python3

ensure_python_env() {
  local stamp="$SPINDLE_VENV/.spindle-stamp" sha
  sha="$(cd "$SPINDLE_ROOT" && cat requirements-dev.txt $(printf '%s/pyproject.toml ' "${PYTHON_PACKAGES[@]}") | sha256sum | cut -c1-16)"
  if [[ -x "$SPINDLE_VENV/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "$sha" ]]; then return 0; fi
  log "installing Python packages into $SPINDLE_VENV"
  [[ -x "$SPINDLE_VENV/bin/python" ]] || "$PYTHON_BIN" -m venv "$SPINDLE_VENV"
  local args=()
  for p in "${PYTHON_PACKAGES[@]}"; do args+=(-e "$SPINDLE_ROOT/$p"); done
  "$SPINDLE_VENV/bin/pip" install -q -r "$SPINDLE_ROOT/requirements-dev.txt" "${args[@]}"
  echo "$sha" > "$stamp"
  ln -sf "$SPINDLE_VENV/bin/spindle" /usr/local/bin/spindle
}
