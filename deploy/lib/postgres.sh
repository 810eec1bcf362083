# shellcheck shell=bash
# PostgreSQL (Debian package): start the cluster if needed, create Spindle's role and database.

PG_VERSION="${PG_VERSION:-15}"
export SPINDLE_DB_NAME="${SPINDLE_DB_NAME:-spindle}"
export SPINDLE_DB_USER="${SPINDLE_DB_USER:-spindle}"

pg_ok() { pg_isready -q -h 127.0.0.1 -p 5432; }

ensure_postgres() {
  if ! pg_lsclusters -h 2>/dev/null | grep -q "^$PG_VERSION main"; then
    pg_createcluster "$PG_VERSION" main >/dev/null
  fi
  if pg_lsclusters -h | grep -q "^$PG_VERSION main .* online"; then
    log "PostgreSQL $PG_VERSION is running"
  else
    pg_ctlcluster "$PG_VERSION" main start
    mark_started postgresql
    log "started PostgreSQL $PG_VERSION"
  fi
  wait_for "PostgreSQL" 60 pg_ok
  local pw_file="$SPINDLE_STATE_DIR/db-password"
  [[ -s "$pw_file" ]] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$pw_file")
  local pw; pw="$(cat "$pw_file")"
  runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$SPINDLE_DB_USER') THEN
    CREATE ROLE $SPINDLE_DB_USER LOGIN;
  END IF;
END \$\$;
ALTER ROLE $SPINDLE_DB_USER PASSWORD '$pw' CREATEDB;
-- Tests and benchmarks drop their scratch databases WITH (FORCE), which must also stop autovacuum.
GRANT pg_signal_backend TO $SPINDLE_DB_USER;
SQL
  if ! runuser -u postgres -- psql -tAc "SELECT 1 FROM pg_database WHERE datname='$SPINDLE_DB_NAME'" | grep -q 1; then
    runuser -u postgres -- createdb -O "$SPINDLE_DB_USER" "$SPINDLE_DB_NAME"
  fi
  export SPINDLE_DATABASE_URL="postgresql+psycopg://$SPINDLE_DB_USER:$pw@127.0.0.1:5432/$SPINDLE_DB_NAME"
}

stop_postgres_if_ours() {
  was_started postgresql || return 0
  pg_ctlcluster "$PG_VERSION" main stop || true
  unmark_started postgresql
  log "stopped PostgreSQL $PG_VERSION"
}
