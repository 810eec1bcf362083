"""A job driver's task on the executor's side, without Docker or an orchestrator: its task data
becomes a container with /job and /job/output from the sandbox; its files come in as a tar of
plain names only; its result goes back as the tar the orchestrator reads (exit code, log tails,
output), retried while the orchestrator is away and sent again without the output when refused as
too large, or left out at once when over the orchestrator's limit; only the end of each log is
held, however much the driver printed; its end maps to the Mesos state the orchestrator reads."""
import io
import json
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from spindle_common.auth import env_identity_key, verify_identity
from spindle_executor import job as job_module
from spindle_executor.job import (
    MAX_LOG_CHARS,
    JobLimits,
    JobTransferFailed,
    cut_marker,
    extract_files,
    fetch_files,
    job_end,
    log_tail,
    put_result,
    write_result,
)
from spindle_executor.task_spec import InvalidTaskSpec, parse_task_spec
from spindle_orchestrator import jobs

JOB = {"cluster_id": "c1", "member_id": "job-j0123456789", "image": "spindle/spark:3.5",
       "command": ["spark-submit", "/job/main.py"], "env": {}, "cpus": 0.05, "cpu_limit": 1.0, "mem_mb": 1536,
       "cpuset": None, "disks": [], "network": "spindle-default", "ip": "172.31.200.120", "kind": "job",
       "job_id": "j0123456789", "orchestrator_url": "http://10.0.0.1:8081"}


def job_spec(tmp_path: Path, **changes):
    spec = parse_task_spec("job-j0123456789.ab12cd34", json.dumps({**JOB, **changes}))
    return spec.model_copy(update={"job_dir": str(tmp_path / "job")})


def tar_of(entries: dict[str, bytes | None], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()


# --- the task data -------------------------------------------------------------------------------


def test_a_job_task_becomes_a_driver_container_with_its_files_from_the_sandbox(tmp_path):
    spec = job_spec(tmp_path)
    assert spec.is_job and spec.container_name == "spindle-job-j0123456789"
    assert spec.labels == {"io.spindle.owned": "true", "io.spindle.task-id": "job-j0123456789.ab12cd34",
                           "io.spindle.member": "job-j0123456789", "io.spindle.cluster": "c1",
                           "io.spindle.job": "j0123456789"}
    folder = str(tmp_path / "job")
    assert spec.binds == [(folder, "/job", True), (f"{folder}/output", "/job/output", False)]
    assert spec.working_dir == "/job"
    assert spec.nano_cpus == 1_000_000_000, "the container may use its cpu limit; it holds 0.05 in offers"


def test_a_member_task_is_unchanged():
    spec = parse_task_spec("t-1", json.dumps({"cluster_id": "c1", "member_id": "c1-worker-1", "image": "i",
                                              "cpus": 0.5, "mem_mb": 64, "disks": [{"host_path": "/d/1"}]}))
    assert not spec.is_job and spec.kind == "member" and spec.working_dir is None
    assert spec.binds == [("/d/1", "/data/1", False)] and spec.nano_cpus == 500_000_000
    assert "io.spindle.job" not in spec.labels


@pytest.mark.parametrize("change,message", [
    ({"job_id": None}, "a job's task needs 'job_id' and 'orchestrator_url'"),
    ({"orchestrator_url": None}, "a job's task needs 'job_id' and 'orchestrator_url'"),
    ({"disks": [{"host_path": "/d/1"}]}, "a job's task holds no disks"),
    ({"kind": "daemon"}, "kind: Input should be 'member' or 'job'"),
    ({"job_dir": "/elsewhere"}, "job_dir"),
])
def test_bad_job_task_data_names_the_problem(change, message):
    with pytest.raises(InvalidTaskSpec, match=message):
        parse_task_spec("t-1", json.dumps({**JOB, **change}))


def test_a_job_spec_without_its_folder_cannot_be_mounted():
    spec = parse_task_spec("t-1", json.dumps(JOB))
    with pytest.raises(InvalidTaskSpec, match="folder"):
        _ = spec.binds


# --- files in --------------------------------------------------------------------------------------


def test_the_jobs_files_are_unpacked_with_an_empty_writable_output(tmp_path):
    folder = tmp_path / "job"
    (folder / "output").mkdir(parents=True)
    (folder / "output" / "stale").write_text("from an earlier try")
    names = extract_files(tar_of({"main.py": b"print(1)", "./lib.so": b"\x7fELF"}), folder)
    assert names == ["main.py", "lib.so"]
    assert (folder / "main.py").read_bytes() == b"print(1)" and (folder / "lib.so").read_bytes() == b"\x7fELF"
    assert list((folder / "output").iterdir()) == [] and (folder / "output").stat().st_mode & 0o777 == 0o777


@pytest.mark.parametrize("archive", [
    tar_of({"../evil.py": b""}), tar_of({"sub/x.py": b""}), tar_of({"dir": None}), tar_of({"output": b""}),
    tar_of({}, links={"link.py": "/etc/passwd"}), b"not a tar at all, but long enough" * 20,
])
def test_anything_but_plain_files_is_refused(tmp_path, archive):
    with pytest.raises(JobTransferFailed):
        extract_files(archive, tmp_path / "job")


def test_the_orchestrators_files_archive_unpacks_as_the_job_folder(tmp_path):
    jobs_dir = tmp_path / "jobs"
    (jobs_dir / "j1" / "output").mkdir(parents=True)
    (jobs_dir / "j1" / "main.py").write_text("print('hi')")
    (jobs_dir / "j1" / "data.txt").write_text("x")

    class Job:
        id, files = "j1", ["data.txt", "main.py"]

    assert extract_files(jobs.files_archive(jobs_dir, Job()), tmp_path / "job") == ["data.txt", "main.py"]  # type: ignore[arg-type]
    assert (tmp_path / "job" / "main.py").read_text() == "print('hi')"


# --- the result back --------------------------------------------------------------------------------


def test_the_result_is_what_the_orchestrator_reads(tmp_path):
    output = tmp_path / "job" / "output"
    (output / "sub").mkdir(parents=True)
    (output / "pages.html").write_text("<h1>hi</h1>")
    (output / "sub" / "part-0").write_bytes(b"\x00\x01")
    (output / "link").symlink_to("/etc/passwd")
    stdout = "x" * (MAX_LOG_CHARS + 10) + "END"
    write_result(tmp_path / "result.tar", 3, stdout, "Traceback …", output)

    jobs_dir = tmp_path / "orchestrator"
    (jobs_dir / "j1" / "output").mkdir(parents=True)
    (jobs_dir / "j1" / "output" / "old").write_text("replaced")
    with open(tmp_path / "result.tar", "rb") as archive:
        result = jobs.store_result(jobs_dir, "j1", archive)
    assert (result.exit_code, result.stderr, result.output_files) == (3, "Traceback …", 2)
    marker = cut_marker("stdout", MAX_LOG_CHARS)
    assert result.stdout.startswith(marker) and len(result.stdout) == len(marker) + MAX_LOG_CHARS
    assert result.stdout.endswith("END")
    with tarfile.open(jobs_dir / "j1" / jobs.OUTPUT_ARCHIVE, mode="r:gz") as tar:
        assert tar.getnames() == ["output", "output/sub", "output/pages.html", "output/sub/part-0"]
        assert tar.extractfile("output/pages.html").read() == b"<h1>hi</h1>"  # type: ignore[union-attr]


def test_the_executor_keeps_no_more_log_than_the_orchestrator_and_marks_a_cut_alike():
    assert MAX_LOG_CHARS == jobs.MAX_LOG_CHARS
    assert cut_marker("stderr", 7) == jobs.cut_marker("stderr", 7)


def chunks_of(total: int, size: int, last: bytes = b""):
    sent = 0
    while sent < total:
        yield b"y" * min(size, total - sent)
        sent += size
    yield last


@pytest.mark.parametrize("chunks,limit,kept", [
    ([], 10, ""),
    ([b"hello"], 10, "hello"),
    ([b"01234", b"56789"], 10, "0123456789"),
    ([b"01234", b"56789", b"AB"], 10, cut_marker("stdout", 10) + "23456789AB"),
    ([b"x" * 25, b"END"], 10, cut_marker("stdout", 10) + "x" * 7 + "END"),
    (chunks_of(50_000_000, 65536, b"END"), 1000, cut_marker("stdout", 1000) + "y" * 997 + "END"),  # 50 MB
])
def test_only_the_end_of_a_streamed_log_is_kept(chunks, limit, kept):
    assert log_tail(chunks, "stdout", limit) == kept


def test_the_limits_come_with_the_files_or_else_the_orchestrators_defaults():
    assert JobLimits.of(httpx.Headers({"X-Spindle-Log-Max-Bytes": "5", "X-Spindle-Output-Max-Bytes": "9"})) == \
        JobLimits(5, 9)
    assert JobLimits.of(httpx.Headers({"X-Spindle-Log-Max-Bytes": "-1", "X-Spindle-Output-Max-Bytes": "0"})) == \
        JobLimits() == JobLimits(jobs.MAX_LOG_CHARS, 256 * 2**20)


@pytest.mark.parametrize("code,killed,problem,expected", [
    (0, False, "", ("TASK_FINISHED", "the driver exited with 0", None)),
    (1, False, "", ("TASK_FAILED", "the driver exited with 1", "REASON_COMMAND_EXECUTOR_FAILED")),
    (None, False, "", ("TASK_FAILED", "the driver's container is gone", "REASON_CONTAINER_LIMITATION")),
    (137, True, "", ("TASK_KILLED", "killed by the framework (exit code 137)", None)),
    (0, False, "503", ("TASK_FINISHED", "the driver exited with 0; its result was not put back: 503", None)),
])
def test_the_end_of_a_driver_is_a_mesos_state(code, killed, problem, expected):
    assert job_end(code, killed, problem) == expected


def test_an_output_left_out_is_said_in_the_drivers_end():
    assert job_end(0, False, "", "the output was not kept: too large") == \
        ("TASK_FINISHED", "the driver exited with 0; the output was not kept: too large", None)
    assert job_end(3, False, "", "the output was not kept")[1] == "the driver exited with 3; the output was not kept"


class Orchestrator:
    """An orchestrator's internal job routes, answering from a script of statuses."""

    def __init__(self, tmp_path: Path, answers: list[int]):
        self.answers = list(answers)
        self.bodies: list[bytes] = []
        self.headers: list[httpx.Headers] = []
        self.tmp_path = tmp_path

    def handle(self, request: httpx.Request) -> httpx.Response:
        status = self.answers.pop(0) if self.answers else 204
        self.headers.append(request.headers)
        if request.method == "PUT":
            self.bodies.append(request.read())
        if status >= 400:
            return httpx.Response(status, json={"error": {"code": f"E{status}", "message": "no", "details": {}}})
        if request.method == "GET":
            return httpx.Response(status, content=tar_of({"main.py": b"print(1)"}))
        return httpx.Response(status)


@pytest.fixture
def orchestrator(tmp_path, monkeypatch):
    def make(answers: list[int]) -> Orchestrator:
        fake = Orchestrator(tmp_path, answers)
        real = job_module._client

        def client(spec, token):
            http = real(spec, token)
            http._transport = httpx.MockTransport(fake.handle)
            return http

        monkeypatch.setattr(job_module, "_client", client)
        return fake
    return make


def test_files_are_fetched_with_the_internal_token_and_retried_while_the_orchestrator_is_away(tmp_path,
                                                                                               orchestrator):
    fake = orchestrator([503, 200])
    assert fetch_files(job_spec(tmp_path), tmp_path / "job", "secret", delays=(0.0,)) == (["main.py"], JobLimits())
    assert [h["authorization"] for h in fake.headers] == ["Bearer secret"] * 2
    identity = fake.headers[0]["x-spindle-identity"]
    assert verify_identity(env_identity_key(), identity, time.time(), env_identity_key("node")).role == "node"


def test_files_refused_by_the_orchestrator_fail_the_start(tmp_path, orchestrator):
    orchestrator([409])
    with pytest.raises(JobTransferFailed, match="E409"):
        fetch_files(job_spec(tmp_path), tmp_path / "job", "secret", delays=(0.0,))


def test_an_output_refused_as_too_large_is_left_out_and_the_rest_sent_again(tmp_path, orchestrator):
    fake = orchestrator([413, 204])
    output = tmp_path / "job" / "output"
    output.mkdir(parents=True)
    (output / "big").write_bytes(b"x" * 1000)
    problem, note = put_result(job_spec(tmp_path), "secret", tmp_path, 0, "out", "err", output, delays=(0.0,))
    assert problem == "" and note.startswith("the output was not kept: 413 E413")
    first, second = (tarfile.open(fileobj=io.BytesIO(b), mode="r:") for b in fake.bodies)
    assert "output/big" in first.getnames() and "output/big" not in second.getnames()
    assert "output was not kept" in json.load(second.extractfile("result.json"))["note"]  # type: ignore[arg-type]
    assert not (tmp_path / "result.tar").exists()


def test_an_output_over_the_limit_is_left_out_without_being_sent(tmp_path, orchestrator):
    fake = orchestrator([204])
    output = tmp_path / "job" / "output"
    (output / "sub").mkdir(parents=True)
    (output / "a").write_bytes(b"x" * 600)
    (output / "sub" / "b").write_bytes(b"x" * 500)
    problem, note = put_result(job_spec(tmp_path), "secret", tmp_path, 0, "o" * 50, "", output, delays=(0.0,),
                               limits=JobLimits(log_bytes=20, output_bytes=1000))
    assert problem == "" and note == ("the output was not kept: its 1100 bytes are over the limit of 1000 bytes "
                                      "(SPINDLE_JOB_OUTPUT_MAX_MB)")
    [body] = fake.bodies
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:") as tar:
        assert tar.getnames() == ["result.json", "stdout", "stderr"]
        assert tar.extractfile("stdout").read() == (cut_marker("stdout", 20) + "o" * 20).encode()  # type: ignore[union-attr]


def test_a_result_that_cannot_go_back_says_why(tmp_path, orchestrator):
    orchestrator([503, 503])
    problem, _ = put_result(job_spec(tmp_path), "secret", tmp_path, 0, "", "", None, delays=(0.0,))
    assert "503 E503" in problem
    assert put_result(job_spec(tmp_path), "", tmp_path, 0, "", "", None) == ("SPINDLE_INTERNAL_TOKEN is not set", "")
