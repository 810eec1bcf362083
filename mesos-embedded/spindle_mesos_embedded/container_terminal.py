"""An interactive shell in a member container, for the api-server's web terminal (``WebSocket
/spindle/v1/containers/{name}/terminal`` on the agent): only the platform may open one (the internal
token), only Spindle's own containers are entered (as ``container_exec``), and whether the caller may
was decided (and recorded) by the api-server.

The shell is a Docker exec with a tty and stdin, as the container's own user, never privileged,
with ``TERM=xterm-256color``: bash when the image has it, else sh. It runs in the container's
namespaces and cgroups, within the member's limits, like any exec. The WebSocket carries the
protocol of ``spindle_common.terminal``: the caller's frames are the shell's input (or a resize,
``exec_resize``), its output comes back as binary frames, and when the session ends on this side an
end frame (the exit code, why) precedes the close.

A session ends when its shell exits, when the caller goes, after ``IDLE_S`` without input, or at
``MAX_SESSION_S``; then the exec's processes are killed as ``container_exec`` kills a command
(``RunningExec.kill``: its host pid, its process group and descendants, each checked to be the
container's). Docker's calls block: they run in worker threads; the exec's socket is read and written
by the event loop (non-blocking)."""
import asyncio
import contextlib
import logging
import socket
import ssl
from typing import Any

import anyio
import docker
from docker.errors import DockerException
from starlette.websockets import WebSocket

from spindle_common.terminal import (
    CLOSE_NORMAL,
    PEER_GONE,
    Resize,
    end_frame,
    error_frame,
    first_of,
    parse_control,
)
from spindle_mesos_embedded.container_exec import RunningExec, entering
from spindle_mesos_embedded.container_logs import spindle_container

log = logging.getLogger("spindle.mesos.terminal")

# bash where the image has it (line editing, history), else the POSIX sh every image has.
SHELL = ("sh", "-c", "command -v bash >/dev/null 2>&1 && exec bash || exec sh")
ENVIRONMENT = {"TERM": "xterm-256color"}
MAX_SESSION_S = 3600
IDLE_S = 15 * 60
READ_BYTES = 64 * 1024


class Terminal:
    """A shell started in a container: its exec, and the socket of its tty (non-blocking)."""

    def __init__(self, client: docker.DockerClient, exec_id: str, container_id: str, stream: Any):
        self.client, self.exec_id, self.stream = client, exec_id, stream
        self.running = RunningExec(client.api, exec_id, container_id)
        # docker-py hands over the upgraded connection (a SocketIO over the Unix socket to dockerd).
        raw = getattr(stream, "_sock", stream)
        if not isinstance(raw, socket.socket) or isinstance(raw, ssl.SSLSocket):
            raise DockerException("the exec's stream is no plain socket (dockerd over TLS or SSH is not supported)")
        raw.setblocking(False)
        self.socket = raw

    def resize(self, size: Resize) -> None:
        try:
            self.client.api.exec_resize(self.exec_id, height=size.rows, width=size.cols)
        except DockerException as exc:  # the shell ended meanwhile: nothing to resize
            log.info("exec %s: resize to %s refused: %s", self.exec_id, size, exc)

    def close(self) -> int | None:
        """Kill what the shell left running, close its socket and the client; its exit code (None when
        Docker does not say)."""
        try:
            self.running.kill()
            with contextlib.suppress(OSError):
                self.socket.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self.stream.close()
            self.socket.close()
            return self.running.exit_code()
        finally:
            self.client.close()


def open_terminal(client: docker.DockerClient, name: str) -> Terminal:
    """Start the shell in the Spindle container ``name`` and attach to its tty; NoSuchContainer or
    ContainerNotRunning (container_exec) before anything ran. The client is the Terminal's to close."""
    with entering(client, name):
        container = spindle_container(client, name)
        exec_id = client.api.exec_create(container.id, list(SHELL), stdout=True, stderr=True, stdin=True, tty=True,
                                         privileged=False, user="", environment=dict(ENVIRONMENT))["Id"]
        stream = client.api.exec_start(exec_id, socket=True, tty=True)
        try:
            return Terminal(client, exec_id, container.id, stream)
        except DockerException:
            RunningExec(client.api, exec_id, container.id).kill()
            stream.close()
            raise


async def serve(websocket: WebSocket, terminal: Terminal) -> None:
    """Accept ``websocket`` and bridge it and the terminal until one side ends (or the time limits
    do); then the shell and what it started are killed (a caller gone before the accept too) and a
    caller still there gets the end frame and the close."""
    max_s, idle_s = MAX_SESSION_S, IDLE_S
    loop = asyncio.get_running_loop()
    started = last_input = loop.time()

    async def output() -> str:
        while True:
            try:
                data = await loop.sock_recv(terminal.socket, READ_BYTES)
            except OSError:
                return "exited"
            if not data:
                return "exited"
            try:
                await websocket.send_bytes(data)
            except PEER_GONE:
                return "closed"

    async def input_() -> str:
        nonlocal last_input
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return "closed"
            data, text = message.get("bytes"), message.get("text")
            if text is not None:
                control = parse_control(text)
                if isinstance(control, Resize):
                    await anyio.to_thread.run_sync(terminal.resize, control)
                    continue
                if isinstance(control, str):
                    try:
                        await websocket.send_text(error_frame("BAD_CONTROL", control))
                    except PEER_GONE:
                        return "closed"
                    continue
                data = text.encode()
            if data:
                last_input = loop.time()
                try:
                    await loop.sock_sendall(terminal.socket, data)
                except OSError:  # the shell is gone: its output ends too
                    return "exited"

    async def clock() -> str:
        while True:
            now = loop.time()
            if now - started >= max_s:
                return "max_duration"
            if now - last_input >= idle_s:
                return "idle"
            await anyio.sleep(min(max_s - (now - started), idle_s - (now - last_input)))

    reason = "closed"  # unless a part ends it first (else the server is stopping: the caller goes too)
    try:
        try:
            await websocket.accept()
        except PEER_GONE:
            return
        reason = await first_of(output, input_, clock)
    finally:
        with anyio.CancelScope(shield=True):  # cancelled: the shell still goes
            exit_code = await anyio.to_thread.run_sync(terminal.close)
            log.info("terminal exec %s ended: %s, exit code %s", terminal.exec_id, reason, exit_code)
            if reason != "closed":
                with contextlib.suppress(*PEER_GONE):
                    await websocket.send_text(end_frame(exit_code, reason))
                    await websocket.close(CLOSE_NORMAL)
