# shellcheck shell=bash
# Python workspace: one venv with every Spindle package installed editable, plus test tools.

PYTHON_PACKAGES=(common client api-server orchestrator scheduler disk-service network-service mesos-executor mesos-embedded node-agent engine/python)
PYTHON_BIN="${PYTHON_BIN:-python3.11}"
UV_VERSION=0.13.9
command -v "$PYTHON_BIN" >/dev/null || PYTHON_BIN=python3

ensure_python_env() {
  local stamp="$SPINDLE_VENV/.spindle-stamp" sha p inputs=(requirements-dev.txt)
  for p in "${PYTHON_PACKAGES[@]}"; do inputs+=("$p/pyproject.toml"); done
  sha="$(cd "$SPINDLE_ROOT" && cat "${inputs[@]}" | sha256sum | cut -c1-16)"
  if [[ -x "$SPINDLE_VENV/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "$sha" ]]; then
    compile_python_sources
    return 0
  fi
  log "installing Python packages into $SPINDLE_VENV"
  [[ -x "$SPINDLE_VENV/bin/python" ]] || "$PYTHON_BIN" -m venv "$SPINDLE_VENV"
  local args=()
  for p in "${PYTHON_PACKAGES[@]}"; do args+=(-e "$SPINDLE_ROOT/$p"); done
  install_pymesos
  # uv resolves and installs the same pins as pip in a sixth of the time (8 s against 48 on a fresh
  # clone, CI's case), from its own cache of downloaded wheels. It trusts the system's CA certificates
  # (a TLS-inspecting proxy's among them, as pip does here): its own roots refused PyPI on a fresh machine.
  "$SPINDLE_VENV/bin/pip" install -q "uv==$UV_VERSION"
  "$SPINDLE_VENV/bin/uv" pip install -q --system-certs --compile-bytecode --python "$SPINDLE_VENV/bin/python" \
    -r "$SPINDLE_ROOT/requirements-dev.txt" "${args[@]}"
  compile_python_sources
  echo "$sha" > "$stamp"
  ln -sf "$SPINDLE_VENV/bin/spindle" /usr/local/bin/spindle
}

# Bytecode for Spindle's own packages (uv compiles the installed ones: --compile-bytecode). Where
# PYTHONDONTWRITEBYTECODE is set (CI machines, this one) Python never caches it, so every process
# compiled every module it imports again: spindle-bootstrap-admin took 6.6 s, 4.9 s of it compiling,
# 1.8 s with the bytecode written. compileall rewrites only what changed.
compile_python_sources() {
  local p dirs=()
  for p in "${PYTHON_PACKAGES[@]}"; do dirs+=("$SPINDLE_ROOT/$p"); done
  "$SPINDLE_VENV/bin/python" -m compileall -q -j 0 "${dirs[@]}" >/dev/null
}

# pymesos 0.3.15 requires http-parser, whose C extension does not build on Python >= 3.11. The
# extension is optional (http_parser.http falls back to its pure-Python parser), so build
# http-parser's own PyPI sdist as a pure-Python wheel: its setup.py adds the extension only when
# not on PyPy. Nothing third-party is copied into this repository. See docs/PYMESOS.md.
HTTP_PARSER_VERSION=0.9.0
PYMESOS_VERSION=0.3.15

install_pymesos() {
  "$SPINDLE_VENV/bin/python" -c "import pymesos, http_parser.http" 2>/dev/null && return 0
  local tmp; tmp="$(mktemp -d)"
  "$SPINDLE_VENV/bin/pip" install -q wheel setuptools
  "$SPINDLE_VENV/bin/pip" download -q --no-deps --no-binary :all: "http-parser==$HTTP_PARSER_VERSION" -d "$tmp"
  tar -xzf "$tmp/http-parser-$HTTP_PARSER_VERSION.tar.gz" -C "$tmp"
  (cd "$tmp/http-parser-$HTTP_PARSER_VERSION" && "$SPINDLE_VENV/bin/python" - "$tmp/wheel" <<'PY'
import sys
sys.pypy_version_info = (7, 3, 0)  # tells http-parser's setup.py to skip its optional C extension
sys.argv = ["setup.py", "-q", "bdist_wheel", "-d", sys.argv[1]]
exec(compile(open("setup.py").read(), "setup.py", "exec"))
PY
  ) >/dev/null 2>&1 || die "building http-parser $HTTP_PARSER_VERSION as a pure-Python wheel failed"
  "$SPINDLE_VENV/bin/pip" install -q "$tmp"/wheel/http_parser-*.whl "pymesos==$PYMESOS_VERSION"
  rm -rf "$tmp"
}
