"""Request bodies are bounded: a body larger than its route's limit is a 413 ``REQUEST_TOO_LARGE``
in the error envelope naming the limit, read no further: ``Content-Length`` is checked before
anything is read, and a body without one (chunked) is counted as it arrives."""
import re

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Launch options, users, inventory changes: small JSON.
DEFAULT_MAX_BYTES = 1024 * 1024
# A job's files: at most 64 MiB decoded (the orchestrator's limit), about 86 MiB as base64 in JSON.
JOB_MAX_BYTES = 96 * 2**20
LIMITS: list[tuple[str, re.Pattern[str], int]] = [
    ("POST", re.compile(r"^/clusters/[^/]+/[^/]+/[^/]+/[^/]+/jobs/?$"), JOB_MAX_BYTES),
]


def limit_for(method: str, path: str) -> int:
    return next((limit for m, pattern, limit in LIMITS if m == method and pattern.match(path)), DEFAULT_MAX_BYTES)


class BodyLimit:
    """ASGI middleware: the route reading a body over its limit gets an ``HTTPException(413)``
    (the one exception FastAPI lets through from reading a body), which the app's error handlers
    answer in the envelope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = limit_for(scope["method"], scope["path"])
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        received = 0

        def too_large() -> HTTPException:
            return HTTPException(413, f"the request body is larger than {limit} bytes, the most this route takes")

        async def limited() -> Message:
            nonlocal received
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise too_large()
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise too_large()
            return message

        await self.app(scope, limited, send)
