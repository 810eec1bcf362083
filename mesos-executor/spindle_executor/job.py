"""A job's driver on this node: its files come from the orchestrator, its result goes back there.

Nothing of a job needs the orchestrator's host: the executor fetches the job's files
(``GET <orchestrator>/internal/jobs/<job>/files``, an uncompressed tar of plain files) into the
task's sandbox (``$MESOS_SANDBOX/job/``, mounted read-only at ``/job``, with ``output/`` writable at
``/job/output``), and when the driver has exited it puts the result back
(``PUT <orchestrator>/internal/jobs/<job>/result``) before the task ends. The result is an
uncompressed tar of:

- ``result.json``: ``{"exit_code": int | null, "note": str}`` (null: the container was gone);
- ``stdout`` and ``stderr``: the end of the driver's logs (at most ``MAX_LOG_CHARS`` each, UTF-8);
- ``output/…``: what the driver wrote to ``/job/output`` (left out, with a note, when the
  orchestrator refuses it as too large).

Both calls carry the platform's internal token (``SPINDLE_INTERNAL_TOKEN``, which the Mesos agent
passes to its executors) with role ``service``."""
import io
import json
import logging
import os
import shutil
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

import httpx

from spindle_common.auth import internal_headers
from spindle_executor.task_spec import TaskContainer

log = logging.getLogger("spindle.executor.job")

TOKEN_ENV = "SPINDLE_INTERNAL_TOKEN"
SANDBOX_ENV = "MESOS_SANDBOX"
# The orchestrator keeps at most this many characters of each log (its jobs.MAX_LOG_CHARS).
MAX_LOG_CHARS = 1_000_000
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


def job_end(exit_code: int | None, killed: bool, upload_problem: str = "") -> tuple[str, str, str | None]:
    """The final Mesos state, message and reason of a driver that ended (``exit_code`` None: its
    container was gone), was killed by the framework, or whose result could not be put back."""
    note = f"; its result was not put back: {upload_problem}" if upload_problem else ""
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
                        headers=internal_headers(token, f"executor of {spec.task_id}", "service"))


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
                delays: tuple[float, ...] = RETRY_DELAYS_S) -> list[str]:
    """Download the job's files from the orchestrator into ``folder`` (see ``extract_files``)."""
    if not token:
        raise JobTransferFailed(f"{TOKEN_ENV} is not set: the executor cannot fetch the job's files")
    with _client(spec, token) as http:
        response = _with_retries(lambda: http.get(f"/internal/jobs/{spec.job_id}/files"),
                                 f"fetching job {spec.job_id}'s files", delays)
    if not response.is_success:
        raise JobTransferFailed(f"the orchestrator refused job {spec.job_id}'s files: {_answer_problem(response)}")
    return extract_files(response.content, folder)


# --- the result out ----------------------------------------------------------------------------


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
    tar.addfile(info, io.BytesIO(data))


def write_result(path: Path, exit_code: int | None, stdout: str, stderr: str, output: Path | None,
                 note: str = "") -> int:
    """The result archive (see the module's doc) at ``path``; returns its size in bytes. Only
    regular files and folders of ``output`` go in (links and the like are left out)."""
    with tarfile.open(path, mode="w") as tar:
        _add_bytes(tar, "result.json", json.dumps({"exit_code": exit_code, "note": note}).encode())
        _add_bytes(tar, "stdout", tail(stdout).encode())
        _add_bytes(tar, "stderr", tail(stderr).encode())
        if output is not None and output.is_dir():
            tar.add(output, arcname="output", recursive=False)
            for root, dirs, files in os.walk(output):
                dirs.sort()
                for name in sorted(dirs) + sorted(files):
                    full = Path(root) / name
                    if full.is_symlink() or not (full.is_file() or full.is_dir()):
                        continue
                    arcname = str(PurePosixPath("output") / full.relative_to(output).as_posix())
                    tar.add(full, arcname=arcname, recursive=False)
    return path.stat().st_size


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def put_result(spec: TaskContainer, token: str, work: Path, exit_code: int | None, stdout: str, stderr: str,
               output: Path | None, delays: tuple[float, ...] = RETRY_DELAYS_S) -> str:
    """Put the result back to the orchestrator; "" once it has it, else what went wrong. An
    output the orchestrator refuses as too large (413) is left out, and the rest sent again."""
    if not token:
        return f"{TOKEN_ENV} is not set"
    archive = work / "result.tar"
    note = ""
    try:
        with _client(spec, token) as http:
            for attempt in ("with output", "without output"):
                size = write_result(archive, exit_code, stdout, stderr, output if not note else None, note)

                def put(size: int = size) -> httpx.Response:
                    return http.put(f"/internal/jobs/{spec.job_id}/result", content=_chunks(archive),
                                    headers={"Content-Type": "application/x-tar", "Content-Length": str(size)})

                response = _with_retries(put, f"putting job {spec.job_id}'s result back", delays)
                if response.is_success:
                    return ""
                if response.status_code == 413 and attempt == "with output":
                    note = f"the output was not kept: {_answer_problem(response)}"
                    log.warning("job %s: %s", spec.job_id, note)
                    continue
                return f"the orchestrator refused it: {_answer_problem(response)}"
    except (JobTransferFailed, OSError) as exc:
        return str(exc)
    finally:
        archive.unlink(missing_ok=True)
    return "the orchestrator refused it"
