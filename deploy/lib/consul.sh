# shellcheck shell=bash
# Consul: built from its Go module (deploy/consul), run as a single-server agent on loopback, with
# ACLs: nothing is written without a token. Spindle's services hold a token that may register and
# deregister services (SPINDLE_CONSUL_TOKEN in spindle.env); anyone may read services and nodes
# (DNS, health, `spindle status`); the management token stays in the state folder (0600).
export SPINDLE_CONSUL_URL="${SPINDLE_CONSUL_URL:-http://127.0.0.1:8500}"
CONSUL_BIN="$SPINDLE_BIN_DIR/consul"
CONSUL_MGMT_TOKEN_FILE="$SPINDLE_STATE_DIR/consul-management-token"
CONSUL_SERVICES_TOKEN_FILE="$SPINDLE_STATE_DIR/consul-services-token"
CONSUL_CONFIG="$SPINDLE_STATE_DIR/consul-acl.hcl"
CONSUL_ANONYMOUS=00000000-0000-0000-0000-000000000002

# build_consul -> $CONSUL_BIN, built from deploy/consul (Consul's Go module), unless it is there.
build_consul() { build_go_program consul "Consul (first build takes several minutes)"; }

consul_ok() { curl -fs "$SPINDLE_CONSUL_URL/v1/status/leader" | grep -q ':'; }

# consul_call METHOD PATH [BODY] -> Consul's answer, as the management token.
consul_call() {
  curl -fsS -X "$1" "$SPINDLE_CONSUL_URL$2" -H "X-Consul-Token: $(cat "$CONSUL_MGMT_TOKEN_FILE")" ${3:+--data "$3"}
}

# consul_acl_ok -> true when Consul enforces ACLs and knows our management token.
consul_acl_ok() { consul_call GET /v1/acl/token/self >/dev/null 2>&1; }

# A Consul token is a UUID; each is made once and kept (0600).
ensure_consul_tokens() {
  local f
  for f in "$CONSUL_MGMT_TOKEN_FILE" "$CONSUL_SERVICES_TOKEN_FILE"; do
    [[ -s "$f" ]] || (umask 077; cat /proc/sys/kernel/random/uuid > "$f")
  done
  (umask 077; cat > "$CONSUL_CONFIG" <<HCL
acl {
  enabled = true
  default_policy = "deny"
  down_policy = "extend-cache"
  tokens {
    initial_management = "$(cat "$CONSUL_MGMT_TOKEN_FILE")"
    agent = "$(cat "$CONSUL_MGMT_TOKEN_FILE")"
  }
}
HCL
)
}

# consul_policy NAME RULES -> the policy, created or brought up to date.
consul_policy() {
  local body id
  body="$(jq -cn --arg name "$1" --arg rules "$2" '{Name: $name, Rules: $rules}')"
  id="$(consul_call GET "/v1/acl/policy/name/$1" 2>/dev/null | jq -r '.ID // empty')" || true
  if [[ -n "$id" ]]; then consul_call PUT "/v1/acl/policy/$id" "$body" >/dev/null
  else consul_call PUT /v1/acl/policy "$body" >/dev/null; fi
}

# The policies and tokens: anonymous reads services and nodes; Spindle's services write services.
ensure_consul_acls() {
  local services_token
  consul_policy spindle-read 'service_prefix "" { policy = "read" } node_prefix "" { policy = "read" }'
  consul_policy spindle-services 'service_prefix "" { policy = "write" } node_prefix "" { policy = "read" } agent_prefix "" { policy = "read" }'
  consul_call PUT "/v1/acl/token/$CONSUL_ANONYMOUS" \
    '{"Description": "anonymous: reads services and nodes (DNS, health)", "Policies": [{"Name": "spindle-read"}]}' >/dev/null \
    || die "could not give Consul's anonymous token its read policy"
  services_token="$(cat "$CONSUL_SERVICES_TOKEN_FILE")"
  if ! curl -fs "$SPINDLE_CONSUL_URL/v1/acl/token/self" -H "X-Consul-Token: $services_token" >/dev/null; then
    consul_call PUT /v1/acl/token "$(jq -cn --arg s "$services_token" \
      '{Description: "spindle services: register and deregister services", SecretID: $s, Policies: [{Name: "spindle-services"}]}')" \
      >/dev/null || die "could not create Consul's token for Spindle's services"
  fi
}

ensure_consul() {
  build_consul
  ensure_consul_tokens
  if consul_ok && consul_acl_ok; then
    log "Consul is running"
  else
    if consul_ok; then stop_daemon consul; log "Consul restarts with ACLs"; fi
    mkdir -p "$SPINDLE_STATE_DIR/consul"
    start_daemon consul "$CONSUL_BIN" agent -server -bootstrap-expect=1 -node=spindle-local \
      -data-dir="$SPINDLE_STATE_DIR/consul" -bind=127.0.0.1 -client=127.0.0.1 \
      -domain=spindle -dns-port=8600 -log-level=warn -config-file="$CONSUL_CONFIG"
    wait_for "Consul leader" 60 consul_ok
    wait_for "Consul's ACLs" 60 consul_acl_ok
  fi
  ensure_consul_acls
}
