"""orchestrator settings (environment variables prefixed ``SPINDLE_``)."""
from pathlib import Path

from spindle_common.settings import ServiceSettings

_REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"


class Settings(ServiceSettings):
    service_name: str = "orchestrator"
    port: int = 8081
    scheduler_url: str = "http://127.0.0.1:8082"
    disk_service_url: str = "http://127.0.0.1:8083"
    network_service_url: str = "http://127.0.0.1:8084"
    catalog_root: Path = _REPO_CATALOG
    # IP pool the members' floating IPs come from; empty = no floating IPs.
    network_pool: str = "default"
    # Deadlines per step (seconds); past one, the launch fails with a reason and cleans up.
    scheduling_timeout_s: float = 120.0
    deploying_timeout_s: float = 600.0
    configuring_timeout_s: float = 120.0
    poll_interval_s: float = 0.25
