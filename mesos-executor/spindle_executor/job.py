"""A job's driver on this node: its files come from the orchestrator, its result goes back there.

Nothing of a job needs the orchestrator's host: the executor fetches the job's files
(``GET <orchestrator>/internal/jobs/<job>/files``, an uncompressed tar of plain files) into the
task's sandbox (``$MESOS_SANDBOX/job/``, mounted read-only at ``/job``, with ``output/`` writable at
``/job/output``), and when the driver has exited it puts the result back
(``PUT <orchestrator>/internal/jobs/<job>/result``) before the task ends. The result is an
uncompressed tar of:

- ``result.json``: ``{"exit_code": int | null, "note": str}`` (null: the container was gone);
- ``stdout`` and ``stderr``: the end of the driver's logs (at most the orchestrator's
  ``X-Spindle-Log-Max-Bytes`` each, UTF-8, after a marker line when cut), read from Docker as a
  stream that only its end is kept of: a driver printing gigabytes costs no memory here;
- ``output/…``: what the driver wrote to ``/job/output``, streamed from disk (left out, with a
  note that ends up in the job's message, when it is over the orchestrator's
  ``X-Spindle-Output-Max-Bytes`` or the orchestrator refuses it as too large).

Both calls carry the platform's internal token (``SPINDLE_INTERNAL_TOKEN``, which the Mesos agent
passes to its executors) with role ``service``."""
import io
import json
import logging
import os
import shutil
import tarfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import httpx

from spindle_common.clients import InternalAuth
from spindle_common.tls import default_tls
from spindle_executor.task_spec import TaskContainer

log = logging.getLogger("spindle.executor.job")

TOKEN_ENV = "SPINDLE_INTERNAL_TOKEN"
SANDBOX_ENV = "MESOS_SANDBOX"
# The orchestrator keeps at most this many characters of each log (its jobs.MAX_LOG_CHARS).
MAX_LOG_CHARS = 1_000_000
# What the orchestrator takes back unless its answer with the files says otherwise (its defaults).
DEFAULT_OUTPUT_MAX_BYTES = 256 * 2**20
# Waits between tries of a call the orchestrator did not answer (it may be restarting).
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0, 15.0)
CHUNK = 1 << 20


class JobTransferFailed(Exception):
    """The job's files could not be fetched, or its result not put back; the message says why."""


def sandbox() -> Path:
    """The task's sandbox: the agent's MESOS_SANDBOX (it also starts the executor in it)."""
    return Path(os.environ.get(SANDBOX_ENV) or os.getcwd())


def tail(text: str, limit: int = MAX_LOG_CHARS) -> str:
    return text[-limit:] if len(text) > limit else text


@dataclass(frozen=True)
class JobLimits:
    """What the orchestrator keeps of a job's result (it says so with the job's files)."""

    log_bytes: int = MAX_LOG_CHARS
    output_bytes: int = DEFAULT_OUTPUT_MAX_BYTES

    @classmethod
    def of(cls, headers: httpx.Headers) -> "JobLimits":
        def number(name: str, default: int) -> int:
            value = headers.get(name, "")
            return int(value) if value.isdigit() and int(value) > 0 else default
        return cls(number("x-spindle-log-max-bytes", cls.log_bytes),
                   number("x-spindle-output-max-bytes", cls.output_bytes))


def cut_marker(stream: str, limit: int) -> str:
    """The line a log starts with when only its end is kept (the orchestrator's jobs.cut_marker)."""
    return f"[spindle: the driver's {stream} is longer than {limit} bytes; only its end is kept]\n"


def log_tail(chunks: Iterable[bytes], stream: str, limit: int) -> str:
    """The end of a log read as a stream (Docker's): its last ``limit`` bytes, after a marker if it
    was longer. At most twice ``limit`` (and a chunk) is held at any time."""
    kept, cut = bytearray(), False
    for chunk in chunks:
        kept += chunk
        if len(kept) > 2 * limit:
            del kept[:-limit]
            cut = True
    if len(kept) > limit:
        del kept[:-limit]
        cut = True
    return (cut_marker(stream, limit) if cut else "") + kept.decode(errors="replace")


def job_end(exit_code: int | None, killed: bool, upload_problem: str = "",
            result_note: str = "") -> tuple[str, str, str | None]:
    """The final Mesos state, message and reason of a driver that ended (``exit_code`` None: its
    container was gone), was killed by the framework, or whose result could not be put back
    (``upload_problem``) or went back without part of it (``result_note``)."""
    note = f"; its result was not put back: {upload_problem}" if upload_problem else ""
    note += f"; {result_note}" if result_note and not upload_problem else ""
    if killed:
        ended = f" (exit code {exit_code})" if exit_code is not None else ""
        return "TASK_KILLED", f"killed by the framework{ended}{note}", None
    if exit_code == 0:
        return "TASK_FINISHED", f"the driver exited with 0{note}", None
    if exit_code is None:
        return "TASK_FAILED", f"the driver's container is gone{note}", "REASON_CONTAINER_LIMITATION"
    return "TASK_FAILED", f"the driver exited with {exit_code}{note}", "REASON_COMMAND_EXECUTOR_FAILED"


# --- files in ----------------------------------------------------------------------------------


def extract_files(archive: bytes, folder: Path) -> list[str]:
    """The job's files (plain names, regular files only) into ``folder``, with an empty writable
    ``output/``; returns their names. Anything else in the archive is refused."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "output").mkdir(parents=True)
    (folder / "output").chmod(0o777)  # the driver's image may not run as root
    names = []
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if not member.isfile() or "/" in name or name in ("", ".", "..", "output"):
                    raise JobTransferFailed(f"the job's files hold {member.name!r}, not a plain file")
                source = tar.extractfile(member)
                assert source is not None  # a regular file
                with open(folder / name, "wb") as target:
                    shutil.copyfileobj(source, target)
                (folder / name).chmod(0o644)
                names.append(name)
    except tarfile.TarError as exc:
        raise JobTransferFailed(f"the job's files are not a tar archive: {exc}") from exc
    return names


def _client(spec: TaskContainer, token: str) -> httpx.Client:
    assert spec.orchestrator_url is not None  # TaskData: a job's task has one
    return httpx.Client(base_url=spec.orchestrator_url.rstrip("/"), timeout=httpx.Timeout(60.0, connect=5.0),
                        verify=default_tls(),
                        auth=InternalAuth(token, f"executor of {spec.task_id}", "node"))  # the nodes' key


def _answer_problem(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        return f"{response.status_code} {error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        return f"{response.status_code}: {response.text[:300]}"


def _with_retries(call: Callable[[], httpx.Response], what: str,
                  delays: tuple[float, ...] = RETRY_DELAYS_S) -> httpx.Response:
    """The answer of ``call``, tried again while the orchestrator is unreachable or answers 5xx."""
    problem = ""
    for delay in (*delays, None):
        try:
            response = call()
            if response.status_code < 500:
                return response
            problem = _answer_problem(response)
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if delay is None:
            break
        log.warning("%s failed (%s); trying again in %.0f s", what, problem, delay)
        time.sleep(delay)
    raise JobTransferFailed(f"{what} failed: {problem}")


def fetch_files(spec: TaskContainer, folder: Path, token: str,
                delays: tuple[float, ...] = RETRY_DELAYS_S) -> tuple[list[str], JobLimits]:
    """Download the job's files from the orchestrator into ``folder`` (see ``extract_files``);
    with them, what it keeps of the result."""
    if not token:
        raise JobTransferFailed(f"{TOKEN_ENV} is not set: the executor cannot fetch the job's files")
    with _client(spec, token) as http:
        response = _with_retries(lambda: http.get(f"/internal/jobs/{spec.job_id}/files"),
                                 f"fetching job {spec.job_id}'s files", delays)
    if not response.is_success:
        raise JobTransferFailed(f"the orchestrator refused job {spec.job_id}'s files: {_answer_problem(response)}")
    return extract_files(response.content, folder), JobLimits.of(response.headers)


# --- the result out ----------------------------------------------------------------------------


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
    tar.addfile(info, io.BytesIO(data))


def _output_entries(output: Path) -> Iterator[tuple[Path, str]]:
    """The regular files and folders of ``output`` (links and the like are left out), with their
    names in the result."""
    for root, dirs, files in os.walk(output):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            full = Path(root) / name
            if full.is_symlink() or not (full.is_file() or full.is_dir()):
                continue
            yield full, str(PurePosixPath("output") / full.relative_to(output).as_posix())


def output_size(output: Path | None) -> int:
    """The bytes of the regular files ``write_result`` would send of ``output``."""
    if output is None or not output.is_dir():
        return 0
    return sum(full.stat().st_size for full, _ in _output_entries(output) if full.is_file())


def write_result(path: Path, exit_code: int | None, stdout: str, stderr: str, output: Path | None,
                 note: str = "", log_limit: int = MAX_LOG_CHARS) -> int:
    """The result archive (see the module's doc) at ``path``, written from disk file by file;
    returns its size in bytes."""
    with tarfile.open(path, mode="w") as tar:
        _add_bytes(tar, "result.json", json.dumps({"exit_code": exit_code, "note": note}).encode())
        for stream, text in (("stdout", stdout), ("stderr", stderr)):
            data = text.encode()
            if len(data) > log_limit:
                data = cut_marker(stream, log_limit).encode() + data[-log_limit:]
            _add_bytes(tar, stream, data)
        if output is not None and output.is_dir():
            tar.add(output, arcname="output", recursive=False)
            for full, arcname in _output_entries(output):
                tar.add(full, arcname=arcname, recursive=False)
    return path.stat().st_size


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def put_result(spec: TaskContainer, token: str, work: Path, exit_code: int | None, stdout: str, stderr: str,
               output: Path | None, delays: tuple[float, ...] = RETRY_DELAYS_S,
               limits: JobLimits = JobLimits()) -> tuple[str, str]:
    """Put the result back to the orchestrator: ("", note) once it has it, else (what went wrong,
    note). An output over ``limits.output_bytes``, or that the orchestrator refuses as too large
    (413), is left out and the rest sent (again); the note says so."""
    if not token:
        return f"{TOKEN_ENV} is not set", ""
    archive = work / "result.tar"
    note = ""
    size = output_size(output)
    if size > limits.output_bytes:
        note = (f"the output was not kept: its {size} bytes are over the limit of {limits.output_bytes} bytes "
                "(SPINDLE_JOB_OUTPUT_MAX_MB)")
        log.warning("job %s: %s", spec.job_id, note)
    try:
        with _client(spec, token) as http:
            for attempt in ("with output", "without output"):
                if attempt == "with output" and note:
                    continue
                size = write_result(archive, exit_code, stdout, stderr, output if not note else None, note,
                                    limits.log_bytes)

                def put(size: int = size) -> httpx.Response:
                    return http.put(f"/internal/jobs/{spec.job_id}/result", content=_chunks(archive),
                                    headers={"Content-Type": "application/x-tar", "Content-Length": str(size)})

                response = _with_retries(put, f"putting job {spec.job_id}'s result back", delays)
                if response.is_success:
                    return "", note
                if response.status_code == 413 and attempt == "with output":
                    note = f"the output was not kept: {_answer_problem(response)}"
                    log.warning("job %s: %s", spec.job_id, note)
                    continue
                return f"the orchestrator refused it: {_answer_problem(response)}", note
    except (JobTransferFailed, OSError) as exc:
        return str(exc), note
    finally:
        archive.unlink(missing_ok=True)
    return "the orchestrator refused it", note
