"""Which presented tokens sign someone in: unknown, revoked and expired ones are each a 401 saying so."""
from datetime import datetime, timedelta

import pytest

from spindle_api.models import ApiToken
from spindle_api.tokens import refusal

NOW = datetime(2026, 1, 1, 12, 0, 0)


def token(expires_at: datetime, revoked_at: datetime | None = None) -> ApiToken:
    return ApiToken(id=7, user_id=1, token_hash="h" * 64, prefix="spd_abcdef", created_at=NOW - timedelta(days=1),
                    expires_at=expires_at, revoked_at=revoked_at)


@pytest.mark.parametrize("row, code", [
    (None, "UNAUTHENTICATED"),
    (token(NOW + timedelta(seconds=1)), None),
    (token(NOW + timedelta(days=30)), None),
    (token(NOW), "TOKEN_EXPIRED"),  # expires_at is the first instant it no longer works
    (token(NOW - timedelta(seconds=1)), "TOKEN_EXPIRED"),
    (token(NOW + timedelta(days=1), revoked_at=NOW - timedelta(hours=1)), "TOKEN_REVOKED"),
    (token(NOW - timedelta(days=1), revoked_at=NOW - timedelta(days=2)), "TOKEN_REVOKED"),  # revoked says more
])
def test_refusal(row, code):
    error = refusal(row, NOW)
    assert (error.code if error else None) == code
    if error:
        assert error.status == 401 and error.message
        if row is not None:
            assert error.details == {"token_id": 7} and "spd_abcdef" in error.message
