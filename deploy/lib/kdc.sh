# shellcheck shell=bash
# The platform's Kerberos KDC (MIT krb5kdc, Debian's krb5-kdc), realm SPINDLE: Hadoop's own way to
# authenticate its daemons and clients. Its database, master-key stash and configuration live under
# $SPINDLE_STATE_DIR/kdc (never /etc/krb5kdc or /etc/krb5.conf: a Kerberos of the machine's own is
# left alone); every kadmin.local and krb5kdc call is given these files by KRB5_CONFIG and
# KRB5_KDC_PROFILE. The orchestrator makes each cluster's principals in it
# (spindle_orchestrator/kerberos.py). It listens on port 88 (UDP and TCP) of every address: members
# reach the platform's addresses only on that port (spindle_common/isolation.py), and every principal
# needs pre-authentication, so an AS request for one yields nothing to guess a key from.

SPINDLE_KDC_DIR="$SPINDLE_STATE_DIR/kdc"
SPINDLE_KDC_REALM=SPINDLE

write_kdc_config() {
  mkdir -p "$SPINDLE_KDC_DIR"
  chmod 700 "$SPINDLE_KDC_DIR"
  cat > "$SPINDLE_KDC_DIR/kdc.conf" <<CONF
[kdcdefaults]
    kdc_listen = 88
    kdc_tcp_listen = 88

[realms]
    $SPINDLE_KDC_REALM = {
        database_name = $SPINDLE_KDC_DIR/principal
        key_stash_file = $SPINDLE_KDC_DIR/stash
        acl_file = $SPINDLE_KDC_DIR/kadm5.acl
        max_life = 24h 0m 0s
        max_renewable_life = 7d 0h 0m 0s
        master_key_type = aes256-cts-hmac-sha1-96
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
        default_principal_flags = +preauth
    }

[logging]
    kdc = FILE:$SPINDLE_LOG_DIR/kdc.log
CONF
  cat > "$SPINDLE_KDC_DIR/krb5.conf" <<CONF
[libdefaults]
    default_realm = $SPINDLE_KDC_REALM
    dns_lookup_kdc = false
    dns_lookup_realm = false
    rdns = false
    udp_preference_limit = 1

[realms]
    $SPINDLE_KDC_REALM = {
        kdc = 127.0.0.1:88
    }
CONF
  : > "$SPINDLE_KDC_DIR/kadm5.acl" # no kadmind: principals are made on this machine with kadmin.local
}

kdc_env() { env KRB5_CONFIG="$SPINDLE_KDC_DIR/krb5.conf" KRB5_KDC_PROFILE="$SPINDLE_KDC_DIR/kdc.conf" "$@"; }

# The KDC answers when an AS request for a principal that does not exist is refused as such.
kdc_ok() {
  local answer
  answer="$(kdc_env kinit -k -t /dev/null "nobody@$SPINDLE_KDC_REALM" 2>&1)" || true
  [[ "$answer" == *"not found in Kerberos database"* ]]
}

ensure_kdc() {
  write_kdc_config
  if [[ ! -e "$SPINDLE_KDC_DIR/principal" ]]; then
    # The master key's password is random and forgotten: the stash file alone opens the database.
    kdc_env kdb5_util create -s -r "$SPINDLE_KDC_REALM" -P "$(head -c 32 /dev/urandom | base64)" \
      >> "$SPINDLE_LOG_DIR/kdc.log" 2>&1 || die "creating the KDC's database failed, see $SPINDLE_LOG_DIR/kdc.log"
    log "KDC database of realm $SPINDLE_KDC_REALM created"
  fi
  start_daemon kdc env KRB5_CONFIG="$SPINDLE_KDC_DIR/krb5.conf" KRB5_KDC_PROFILE="$SPINDLE_KDC_DIR/kdc.conf" \
    krb5kdc -n -r "$SPINDLE_KDC_REALM"
  wait_for "the KDC (see $SPINDLE_LOG_DIR/kdc.log)" 30 kdc_ok
}

stop_kdc() { stop_daemon kdc; }
