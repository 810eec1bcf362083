"""Settings every service reads from the environment (prefix ``SPINDLE_``)."""
from pydantic_settings import BaseSettings, SettingsConfigDict

from spindle_common.auth import DEV_IDENTITY_KEY, DEV_NODE_IDENTITY_KEY
from spindle_common.metrics import DEV_METRICS_TOKEN


class ServiceSettings(BaseSettings):
    """Base settings; each service subclasses it to set its name and port."""

    model_config = SettingsConfigDict(env_prefix="SPINDLE_", extra="ignore")

    service_name: str = "spindle"
    host: str = "127.0.0.1"
    port: int = 8080
    # More addresses to listen on besides ``host``, comma-separated (e.g. the node fabric's 10.77.0.1,
    # so simulated or real nodes reach disk-service while local callers keep using loopback).
    extra_hosts: str = ""
    # Address Consul's health check uses to reach this service.
    advertise_host: str = "127.0.0.1"
    database_url: str = "postgresql+psycopg://spindle@127.0.0.1:5432/spindle"
    consul_url: str = "http://127.0.0.1:8500"
    # Seconds a start-up dependency check may take before the service gives up.
    dependency_timeout: float = 5.0
    log_level: str = "info"
    # Shared secret that internal services require from their callers (see spindle_common.auth).
    internal_token: str = "dev-insecure-internal-token"
    # Key that signs the callers' identities (actor, role) between services, apart from the token.
    identity_key: str = DEV_IDENTITY_KEY
    # Key with which nodes (node agents, Mesos agents, executors) sign role "node", and only that.
    node_identity_key: str = DEV_NODE_IDENTITY_KEY
    # Bearer token the time-series database's scraper presents for GET /metrics.
    metrics_token: str = DEV_METRICS_TOKEN
