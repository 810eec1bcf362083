"""What ``spindle tokens`` does: list your API tokens, create one (shown once), revoke one."""
import argparse
import json
import re
import sys
from datetime import UTC, datetime

from spindle_client import models
from spindle_client.client import SpindleClient, api_json

DURATION = re.compile(r"^([1-9][0-9]{0,8})([smhd])$")
SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_s(text: str) -> int:
    """``90m``, ``12h``, ``7d``, ``3600s`` → seconds (an argparse type)."""
    match = DURATION.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"expected a duration like 30m, 12h or 7d, got {text!r}")
    return int(match[1]) * SECONDS[match[2]]


def token_state(token: models.Token, now: datetime) -> str:
    """active, expired or revoked."""
    if token.revoked_at:
        return "revoked"
    return "expired" if datetime.fromisoformat(token.expires_at.replace("Z", "+00:00")) <= now else "active"


def _usage(message: str) -> int:
    print(f"spindle: {message}", file=sys.stderr)
    return 2


def cmd_tokens(args: argparse.Namespace, client: SpindleClient, _: str) -> int:
    """``spindle tokens [list | create [--expires-in D] | revoke ID]``; with ``--user`` (admins), another
    user's tokens are listed or revoked."""
    other = args.user
    if args.action == "create":
        if other or args.token_id is not None:
            return _usage("'tokens create' makes a token of your own: it takes no id and no --user")
        created = client.create_token(args.expires_in)
        if args.json:
            print(json.dumps(api_json(created), indent=2))
        else:
            print(f"token {created.id}, works until {created.expires_at}; shown only now, keep it:\n{created.token}")
        return 0
    if args.expires_in is not None:
        return _usage("--expires-in is for 'tokens create'")
    if args.action == "revoke":
        if args.token_id is None:
            return _usage("'tokens revoke' needs the token's id (see 'spindle tokens')")
        client.revoke_token(args.token_id, other)
        if not args.json:
            print(f"revoked token {args.token_id}")
        return 0
    if args.token_id is not None:
        return _usage("'tokens' (list) takes no id")
    tokens = client.tokens(other)
    if args.json:
        print(json.dumps(api_json(tokens), indent=2))
        return 0
    now = datetime.now(UTC)
    print(f"{'ID':<8}{'PREFIX':<13}{'STATE':<9}{'CREATED':<21}{'EXPIRES':<21}REVOKED")
    for t in tokens:
        print(f"{t.id:<8}{t.prefix:<13}{token_state(t, now):<9}{t.created_at[:19]:<21}{t.expires_at[:19]:<21}"
              f"{(t.revoked_at or '-')[:19]}")
    return 0
