"""api-server settings (environment variables prefixed ``SPINDLE_``)."""
from pathlib import Path

from spindle_common.settings import ServiceSettings

# The web UI's build output in this repository: <repo>/web-ui/dist (this file is <repo>/api-server/spindle_api/core/).
_REPO_WEB_UI_DIST = Path(__file__).resolve().parents[3] / "web-ui" / "dist"


class Settings(ServiceSettings):
    service_name: str = "api-server"
    port: int = 8080
    # Folder with the built web UI (`npm run build` in web-ui/), served under /ui.
    web_ui_dist: Path = _REPO_WEB_UI_DIST
