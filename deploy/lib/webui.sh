# shellcheck shell=bash
# Web UI build: web-ui/ (React + Vite) -> web-ui/dist, which api-server serves under /ui.

WEB_UI_DIR="$SPINDLE_ROOT/web-ui"

# web_ui_sources_hash -> one hash over every source file (paths and contents) and package-lock.json.
web_ui_sources_hash() {
  (cd "$WEB_UI_DIR" && find . \( -path ./node_modules -o -path ./dist -o -path ./test-output \) -prune -o -type f -print0 \
    | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# build_web_ui -> `npm ci && npm run build`, skipped when nothing changed since the last good build.
build_web_ui() {
  local stamp="$SPINDLE_STATE_DIR/web-ui.stamp" build_log="$SPINDLE_LOG_DIR/web-ui-build.log" sha
  command -v npm >/dev/null || die "npm not found: the web UI needs Node.js >= 20.19 with npm"
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
    || die "Node.js $(node --version) is too old for the web UI: it needs >= 20.19"
  sha="$(web_ui_sources_hash)"
  if [[ -f "$WEB_UI_DIR/dist/index.html" && "$(cat "$stamp" 2>/dev/null)" == "$sha" ]]; then return 0; fi
  log "building the web UI (npm ci && npm run build, log: $build_log)"
  # npm trusts the system's CA certificates too (a TLS-inspecting proxy's among them), not only Node's own.
  local system_cas=/etc/ssl/certs/ca-certificates.crt
  [[ -n "${NODE_EXTRA_CA_CERTS:-}" || ! -f "$system_cas" ]] || export NODE_EXTRA_CA_CERTS="$system_cas"
  (cd "$WEB_UI_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund && npm run build) >>"$build_log" 2>&1 \
    || die "web UI build failed, see $build_log"
  echo "$sha" > "$stamp"
  log "web UI built into $WEB_UI_DIR/dist"
}
