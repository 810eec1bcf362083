"""``spindle tokens``: its command lines, durations and what a token's state reads as."""
from datetime import UTC, datetime

import pytest

from spindle_client import models
from spindle_client.cli import build_parser
from spindle_client.token_commands import duration_s, token_state

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800),
                                           (" 1d ", 86400)])
def test_durations(text, seconds):
    assert duration_s(text) == seconds


@pytest.mark.parametrize("argv, expected", [
    (["tokens"], ("list", None, None, None)),
    (["tokens", "list", "--json"], ("list", None, None, None)),
    (["tokens", "create", "--expires-in", "7d"], ("create", None, 604800, None)),
    (["tokens", "create"], ("create", None, None, None)),
    (["tokens", "revoke", "12"], ("revoke", 12, None, None)),
    (["tokens", "revoke", "12", "--user", "bob"], ("revoke", 12, None, "bob")),
    (["tokens", "--user", "bob"], ("list", None, None, "bob")),
])
def test_command_lines(argv, expected):
    args = build_parser().parse_args(argv)
    assert (args.action, args.token_id, args.expires_in, args.user) == expected


@pytest.mark.parametrize("argv", [["tokens", "create", "--expires-in", "7"], ["tokens", "create", "--expires-in", "0d"],
                                  ["tokens", "create", "--expires-in", "1w"], ["tokens", "revoke", "x"],
                                  ["tokens", "drop"]])
def test_bad_command_lines_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2 and capsys.readouterr().err


def token(expires_at: str, revoked_at: str | None = None) -> models.Token:
    return models.Token.model_validate({"id": 1, "prefix": "spd_abc", "created_at": "2025-12-01T00:00:00Z",
                                        "expires_at": expires_at, "revoked_at": revoked_at})


@pytest.mark.parametrize("row, state", [
    (token("2026-01-01T12:00:01Z"), "active"),
    (token("2026-01-01T12:00:00Z"), "expired"),
    (token("2025-12-31T00:00:00Z"), "expired"),
    (token("2026-02-01T00:00:00Z", revoked_at="2026-01-01T00:00:00Z"), "revoked"),
    (token("2025-12-02T00:00:00Z", revoked_at="2025-12-01T00:00:00Z"), "revoked"),
])
def test_token_state(row, state):
    assert token_state(row, NOW) == state
