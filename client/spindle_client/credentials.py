"""Where the CLI keeps the API address and token: ``~/.config/spindle/credentials`` (mode 0600).
``SPINDLE_URL`` and ``SPINDLE_TOKEN`` in the environment take precedence."""
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Credentials:
    url: str
    token: str
    username: str


def credentials_path() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "spindle" / "credentials"


def save(creds: Credentials, path: Path | None = None) -> Path:
    """Write the credentials readable by their owner only (created 0600, never world-readable)."""
    path = path or credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(creds), f)
    os.chmod(path, 0o600)
    return path


def load(path: Path | None = None) -> Credentials | None:
    """The saved credentials, overridden by the environment; None when there are none."""
    path = path or credentials_path()
    saved = json.loads(path.read_text()) if path.exists() else {}
    url = os.environ.get("SPINDLE_URL") or saved.get("url")
    token = os.environ.get("SPINDLE_TOKEN") or saved.get("token")
    if not url or not token:
        return None
    return Credentials(url=url, token=token, username=saved.get("username", "") if token == saved.get("token") else "")
