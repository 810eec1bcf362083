"""api-server settings (environment variables prefixed ``SPINDLE_``)."""
from pathlib import Path

from spindle_common.settings import ServiceSettings

# The web UI's build output in this repository: <repo>/web-ui/dist (this file is <repo>/api-server/spindle_api/core/).
_REPO = Path(__file__).resolve().parents[3]
_REPO_WEB_UI_DIST = _REPO / "web-ui" / "dist"


class Settings(ServiceSettings):
    service_name: str = "api-server"
    port: int = 8080
    # Folder with the built web UI (`npm run build` in web-ui/), served under /ui.
    web_ui_dist: Path = _REPO_WEB_UI_DIST
    # Product manifests: <catalog_root>/<product>/<version>/manifest.json.
    catalog_root: Path = _REPO / "catalog"
    # deploy/up's state; <state_dir>/images/ says which product images are still being built
    # (spindle_common.images).
    state_dir: Path = Path("/var/lib/spindle")
    # Internal services the public API fronts (loopback; they trust the internal token).
    orchestrator_url: str = "http://127.0.0.1:8081"
    scheduler_url: str = "http://127.0.0.1:8082"
    disk_service_url: str = "http://127.0.0.1:8083"
    network_service_url: str = "http://127.0.0.1:8084"
    # Port of every node's Mesos agent (it serves its members' logs and runs commands in them for the api-server).
    mesos_agent_port: int = 5051
    # The time-series database (VictoriaMetrics; basic auth "spindle" with the metrics token).
    metrics_url: str = "http://127.0.0.1:8428"
    # Live event streams (SSE) one user may have open at once; more are 429 TOO_MANY_STREAMS.
    max_streams_per_user: int = 128
    # How long an API token works (a user may ask for less, never more); then 401 TOKEN_EXPIRED.
    token_lifetime_days: int = 30
