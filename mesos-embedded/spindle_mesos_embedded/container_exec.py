"""A command run in a member container, for the api-server (``POST /spindle/v1/containers/{name}/exec``
on the agent): only the platform may ask (the internal token), only Spindle's own containers are
entered (``spindle-…`` with the ``io.spindle.owned`` label), and whether the caller may was decided
(and recorded) by the api-server.

The command is an argv list run by Docker's exec: no shell unless the argv names one, no tty, never
privileged, as the container's own user unless ``user`` (numeric) says otherwise. It runs in the
container's namespaces and cgroups, so the member's limits bound it as they bound the member: its
capabilities (most roles keep none), no-new-privileges, its pids limit, memory and CPU.

Its output comes back as NDJSON, one line per chunk as Docker passes it on,
``{"stream": "stdout"|"stderr", "data": "<text>"}`` (UTF-8; a character split between chunks is
whole in the later one, bytes that are not UTF-8 become U+FFFD), then one last line
``{"exit_code": N}``, with ``"timed_out": true`` when it was killed at ``timeout_s`` and
``"truncated": true`` when it was killed for writing more than ``MAX_OUTPUT_BYTES``; ``exit_code`` is
null when Docker does not know it (the command could not be killed and still runs).

Killing it: the agent runs as root in the host's pid namespace beside its dockerd (single-machine
mode and every simulated node), so it SIGKILLs the exec's process (its host pid, ``exec_inspect``)
with its process group and every descendant, read from this host's /proc, each checked to be in
the container's cgroup first. That needs nothing of the image (no ``kill``, no ``timeout``) and also
ends children a shell put in the background. A process that left both the group and the tree (a
double fork into its own session) is not found; it lives on in the member, under its limits."""
import codecs
import contextlib
import json
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, DockerException, NotFound

from spindle_mesos_embedded.container_logs import NAME, NoSuchContainer, spindle_container

log = logging.getLogger("spindle.mesos.exec")

MAX_ARGS = 64
MAX_ARG_CHARS = 4096
MIN_TIMEOUT_S, MAX_TIMEOUT_S, DEFAULT_TIMEOUT_S = 1, 3600, 300
MAX_OUTPUT_BYTES = 16 * 2**20
USER = re.compile(r"^[0-9]{1,10}(:[0-9]{1,10})?$")  # as a role's security.user: numeric uid[:gid]
FIELDS = frozenset({"argv", "user", "timeout_s"})
# After a kill, how long the output may take to end before the agent stops reading it anyway.
CLOSE_GRACE_S = 2.0
# How long Docker may take to mark an ended exec as ended (its exit code).
EXIT_WAIT_S = 5.0
PROC = Path("/proc")


class ContainerNotRunning(Exception):
    pass


@dataclass(frozen=True)
class ExecRequest:
    argv: tuple[str, ...]
    user: str | None
    timeout_s: int


def parse_request(name: str, body: Any) -> ExecRequest | str:
    """The exec asked for, or why it is refused (a 400)."""
    if not NAME.match(name):
        return f"{name!r} is not a Spindle container name"
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if set(body) - FIELDS:
        return f"unknown fields {sorted(set(body) - FIELDS)}; an exec takes {sorted(FIELDS)}"
    argv = body.get("argv")
    if not isinstance(argv, list) or not 1 <= len(argv) <= MAX_ARGS:
        return f"argv must be a list of 1 … {MAX_ARGS} strings"
    for index, arg in enumerate(argv):
        if not isinstance(arg, str):
            return f"argv[{index}] is not a string"
        if len(arg) > MAX_ARG_CHARS:
            return f"argv[{index}] is longer than {MAX_ARG_CHARS} characters"
        if "\x00" in arg:
            return f"argv[{index}] holds a NUL character"
    if not argv[0]:
        return "argv[0], the program, is empty"
    user = body.get("user")
    if user is not None and not (isinstance(user, str) and USER.match(user)):
        return "user must be a numeric uid or uid:gid"
    timeout_s = body.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int) or \
            not MIN_TIMEOUT_S <= timeout_s <= MAX_TIMEOUT_S:
        return f"timeout_s must be a whole number of seconds, {MIN_TIMEOUT_S} … {MAX_TIMEOUT_S}"
    return ExecRequest(tuple(argv), user, timeout_s)


def event(**fields: Any) -> bytes:
    """One NDJSON line."""
    return json.dumps(fields).encode() + b"\n"


class OutputFramer:
    """The exec's stdout and stderr chunks as NDJSON lines, decoded as UTF-8 across chunk boundaries,
    at most ``limit`` bytes in all (``truncated`` once more came)."""

    def __init__(self, limit: int = MAX_OUTPUT_BYTES):
        self.left = limit
        self.truncated = False
        self.decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace") for name in ("stdout", "stderr")}

    def add(self, stream: str, data: bytes) -> bytes:
        """The line for ``data`` of ``stream`` (nothing when it ends in the middle of a character)."""
        if len(data) > self.left:
            data, self.truncated = data[:self.left], True
        self.left -= len(data)
        text = self.decoders[stream].decode(data, final=self.truncated)
        return event(stream=stream, data=text) if text else b""

    def flush(self) -> bytes:
        """The lines for what is left of a character cut at the end of either stream."""
        return b"".join(event(stream=name, data=text) for name, decoder in self.decoders.items()
                        if (text := decoder.decode(b"", final=True)))


# --- killing an exec ----------------------------------------------------------------------------


def _stat(proc: Path, pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of a process; None when it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the name (in parentheses) may hold spaces
    return fields[0], int(fields[1]), int(fields[2])


def exec_processes(root: int, proc: Path = PROC) -> set[int]:
    """The live processes of the exec whose first process is ``root``: it, its descendants and its
    process group (a background child whose parent ended is in it still); zombies left out."""
    children: dict[int, list[int]] = {}
    found: set[int] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(proc, int(entry.name))
        if stat is None or stat[0] in "ZX":
            continue
        pid, (_, parent, group) = int(entry.name), stat
        children.setdefault(parent, []).append(pid)
        if pid == root or group == root:
            found.add(pid)
    frontier = list(found)
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def kill_processes(root: int, belongs: Callable[[int], bool], proc: Path = PROC, rounds: int = 3) -> int:
    """SIGKILL the exec's processes (``exec_processes``) that ``belongs`` says are the container's,
    ``root`` first (a shell that outlived its children by a moment would run on: its ``wait`` returns);
    again while some are left (one may have forked meanwhile). How many signals were sent."""
    sent = 0
    for _ in range(rounds):
        targets = sorted((pid for pid in exec_processes(root, proc) if belongs(pid)), key=lambda pid: pid != root)
        if not targets:
            break
        for pid in targets:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                sent += 1
        time.sleep(0.05)
    return sent


def in_cgroup_of(container_id: str, proc: Path = PROC) -> Callable[[int], bool]:
    """Whether a host pid is a process of the container (its id is in the process's cgroup path, as
    Docker names cgroups with either driver)."""
    def belongs(pid: int) -> bool:
        try:
            return container_id in (proc / str(pid) / "cgroup").read_text()
        except OSError:
            return False
    return belongs


class RunningExec:
    """One exec of a container, as Docker knows it."""

    def __init__(self, api: docker.APIClient, exec_id: str, container_id: str):
        self.api, self.exec_id, self.container_id = api, exec_id, container_id

    def kill(self) -> bool:
        """SIGKILL the exec's processes; whether it was still running."""
        try:
            info = self.api.exec_inspect(self.exec_id)
        except DockerException:
            return False
        if not info.get("Running"):
            return False
        pid = int(info.get("Pid") or 0)
        try:
            if pid > 1 and not kill_processes(pid, in_cgroup_of(self.container_id)):
                log.warning("exec %s of %s: none of its processes (host pid %s) found to kill", self.exec_id,
                            self.container_id[:12], pid)
        except PermissionError:
            log.warning("exec %s of %s: not allowed to kill host pid %s (the agent is not root?)", self.exec_id,
                        self.container_id[:12], pid)
        return True

    def exit_code(self) -> int | None:
        """The exit code once Docker has it (it may take a moment after the output ended); None when it
        still runs."""
        deadline = time.monotonic() + EXIT_WAIT_S
        while True:
            try:
                info = self.api.exec_inspect(self.exec_id)
            except DockerException:
                return None
            if not info.get("Running"):
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)


# --- running one ----------------------------------------------------------------------------------


@contextlib.contextmanager
def entering(client: docker.DockerClient, name: str) -> Iterator[None]:
    """Around the Docker calls that start an exec in the container ``name``: Docker's refusals as
    NoSuchContainer or ContainerNotRunning, and the client closed when anything is raised."""
    try:
        yield
    except NotFound as exc:
        client.close()
        raise NoSuchContainer(name) from exc
    except APIError as exc:
        client.close()
        if exc.status_code == 409:  # stopped, paused or restarting
            raise ContainerNotRunning(name) from exc
        raise
    except BaseException:
        client.close()
        raise


def start_exec(client: docker.DockerClient, name: str, request: ExecRequest) -> Iterator[bytes]:
    """Start ``request.argv`` in the Spindle container ``name``; its NDJSON lines (the module's
    docstring). NoSuchContainer or ContainerNotRunning before anything ran. The client is closed
    when the lines end."""
    with entering(client, name):
        container = spindle_container(client, name)
        exec_id = client.api.exec_create(container.id, list(request.argv), stdout=True, stderr=True, stdin=False,
                                         tty=False, privileged=False, user=request.user or "")["Id"]
        output = client.api.exec_start(exec_id, stream=True, demux=True)
    return relay(RunningExec(client.api, exec_id, container.id), output, request.timeout_s, client.close)


def relay(running: RunningExec, output: Any, timeout_s: float, on_end: Callable[[], None] = lambda: None,
          limit: int = MAX_OUTPUT_BYTES) -> Iterator[bytes]:
    """The exec's ``output`` (docker-py's demuxed stream: (stdout, stderr) pairs) as NDJSON lines,
    then its end. At ``timeout_s`` a timer kills it (and stops reading after CLOSE_GRACE_S); past
    ``limit`` bytes it is killed; a caller who goes away (the generator closed early) kills it too."""
    framer = OutputFramer(limit)
    ended, timed_out = threading.Event(), threading.Event()

    def close_output() -> None:
        with contextlib.suppress(Exception):  # already closed, or closing as we read
            output.close()

    # The kill at the timeout and the reading of its outcome, one at a time: the output ends as soon
    # as the kill lands, and the end line must already know it was a timeout.
    expiring = threading.Lock()

    def expire() -> None:
        with expiring:
            timed_out.set()
            if not running.kill():  # it had ended on its own meanwhile
                timed_out.clear()
        if not ended.wait(CLOSE_GRACE_S):
            close_output()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    finished = False
    try:
        for frame in _frames(output):
            for stream, data in zip(("stdout", "stderr"), frame, strict=True):
                if data and (line := framer.add(stream, data)):
                    yield line
            if framer.truncated:
                break
        ended.set()
        timer.cancel()
        with expiring:  # a kill under way at the timeout has finished (and said so)
            pass
        if flushed := framer.flush():
            yield flushed
        if framer.truncated:
            running.kill()
        close_output()
        end: dict[str, Any] = {"exit_code": running.exit_code()}
        if timed_out.is_set():
            end["timed_out"] = True
        if framer.truncated:
            end["truncated"] = True
        finished = True
        yield event(**end)
    finally:
        ended.set()
        timer.cancel()
        if not finished:  # the caller went away: the command goes too
            running.kill()
            close_output()
        on_end()


def _frames(output: Any) -> Iterator[tuple[bytes | None, bytes | None]]:
    """The (stdout, stderr) pairs until the output ends, is closed under us, or breaks."""
    while True:
        try:
            yield next(output)
        except StopIteration:
            return
        except (DockerException, OSError, ValueError) as exc:  # ValueError: a frame of no known stream
            log.warning("exec output broke: %s", exc)
            return
