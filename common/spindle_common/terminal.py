"""The member terminal's WebSocket protocol, the same on both hops (the browser ↔ the api-server's
``…/members/{member}/terminal``, the api-server ↔ the node's agent's ``/spindle/v1/containers/{name}
/terminal``), and the refusal of a WebSocket before it is accepted.

From the caller: a binary frame is input (the shell's stdin, as it is); a text frame is input too
(UTF-8), unless it is a control message, a JSON object ``{"resize": [cols, rows]}`` (whole numbers,
``MIN_SIZE`` … ``MAX_SIZE``): the terminal's size. A bad control message is answered with an error
frame and changes nothing.

To the caller: binary frames are the terminal's output (bytes as the shell wrote them: a tty's, so
stdout and stderr together); text frames are JSON: ``{"error": {"code", "message"}}`` (the session goes
on unless it is then closed), and last ``{"exit_code": N | null, "reason": …}`` when the session ended
on the agent's side (``END_REASONS``), before the close."""
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

MIN_SIZE, MAX_SIZE = 1, 1000
# Why a session ended on the agent's side: its shell exited, no input for the idle time, the longest
# a session may last.
END_REASONS = ("exited", "idle", "max_duration")
# WebSocket close codes: a normal end; the other side failed.
CLOSE_NORMAL, CLOSE_FAILED = 1000, 1011
# What a peer gone (or going) looks like when a server's WebSocket is written to or closed.
PEER_GONE = (WebSocketDisconnect, OSError, RuntimeError)

T = TypeVar("T")


@dataclass(frozen=True)
class Resize:
    cols: int
    rows: int


def parse_control(text: str) -> Resize | str | None:
    """What a text frame from the caller asks: a resize, why a control message is refused (a str), or
    None when it is no control message (the text is input)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "resize" not in data:
        return None
    if set(data) != {"resize"}:
        return f"a control message is {{\"resize\": [cols, rows]}} alone, not {sorted(data)}"
    size = data["resize"]
    if not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(n, int) and not isinstance(n, bool) and MIN_SIZE <= n <= MAX_SIZE for n in size)):
        return f"resize takes [cols, rows], two whole numbers {MIN_SIZE} … {MAX_SIZE}"
    return Resize(cols=size[0], rows=size[1])


def end_frame(exit_code: int | None, reason: str) -> str:
    """The last text frame of a session the agent ended."""
    return json.dumps({"exit_code": exit_code, "reason": reason})


def error_frame(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}})


def parse_end(text: str) -> dict[str, Any] | None:
    """The end frame's fields (``exit_code``: an int or None, ``reason``), or None for any other frame."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "exit_code" not in data or data.get("reason") not in END_REASONS:
        return None
    code = data["exit_code"]
    return {"exit_code": code if isinstance(code, int) and not isinstance(code, bool) else None,
            "reason": data["reason"]}


async def deny(websocket: WebSocket, response: Response) -> None:
    """Refuse the WebSocket before accepting it, with an HTTP ``response`` (the WebSocket Denial
    Response extension; uvicorn with websockets has it); a server without it only closes (1008)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(response)
    else:
        await websocket.close(code=1008)


async def first_of(*parts: Callable[[], Awaitable[T]]) -> T:
    """Run ``parts`` (the two directions of a bridge, a clock) together until one returns, cancel the
    others; what it returned."""
    results: list[T] = []
    async with anyio.create_task_group() as tasks:
        async def run(part: Callable[[], Awaitable[T]]) -> None:
            results.append(await part())
            tasks.cancel_scope.cancel()

        for part in parts:
            tasks.start_soon(run, part)
    return results[0]
