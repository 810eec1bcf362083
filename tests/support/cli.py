"""The ``spindle`` command line run in-process, its API calls going to a stand-in client (unit tests
of the CLI's commands: what they send, print and exit with)."""
from typing import Any

import pytest

from spindle_client import cli


def run_cli(monkeypatch: pytest.MonkeyPatch, argv: list[str], client: Any, username: str = "alice") -> int:
    """``spindle <argv>`` signed in as ``username`` with ``client`` for SpindleClient; its exit code."""
    monkeypatch.setattr(cli, "api_command", lambda func: lambda args: func(args, client, username))
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    return exited.value.code
