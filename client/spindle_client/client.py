"""A small typed client of Spindle's public REST API (used by the CLI and the tests).

Every answer is read into the models generated from the API's OpenAPI document
(``spindle_client.models``): an answer of another shape raises ``UnexpectedAnswer`` instead of
failing somewhere later. A model remembers the JSON it came from (``api_json()``)."""
import base64
import functools
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from spindle_client import models
from spindle_client.api_model import ApiModel

M = TypeVar("M", bound=ApiModel)
# Anything that names a cluster: a Cluster, or a mapping with its owner, product, version and id.
ClusterAddress = models.Cluster | Mapping[str, Any]


class SpindleError(Exception):
    """An error answer of the API, carrying its envelope: status, code, message, details."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.details = status, code, message, details or {}


class UnexpectedAnswer(SpindleError):
    """A successful answer whose shape the API's OpenAPI document does not allow."""

    def __init__(self, what: str, status: int, error: ValidationError):
        problems = [{"path": ".".join(str(p) for p in e["loc"]) or "(answer)", "message": e["msg"]}
                    for e in error.errors()[:20]]
        super().__init__(status, "UNEXPECTED_ANSWER",
                         f"{what} answered outside the API's contract ({error.error_count()} problem(s))",
                         {"errors": problems})


_adapter = functools.cache(TypeAdapter)


def parse(model: Any, data: Any, what: str = "the API", status: int = 200) -> Any:
    """``data`` (JSON) read as ``model`` (a generated model, or e.g. ``list[Model]``)."""
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(data)
        return _adapter(model).validate_python(data)
    except ValidationError as exc:
        raise UnexpectedAnswer(what, status, exc) from None


class SpindleClient:
    """Calls the api-server at ``url`` with the API token ``token``."""

    def __init__(self, url: str, token: str, timeout: float = 30.0, transport: httpx.BaseTransport | None = None):
        self._http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout, transport=transport,
                                  headers={"Authorization": f"Bearer {token}"})

    def __enter__(self) -> "SpindleClient":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON of the API's answer (None when it has no body); SpindleError for an error answer."""
        return self._request(method, path, **kwargs).json_body

    def _request(self, method: str, path: str, **kwargs: Any) -> "_Answer":
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc
        return _Answer(response.status_code, _answer(response))

    def _get(self, model: Any, method: str, path: str, **kwargs: Any) -> Any:
        answer = self._request(method, path, **kwargs)
        return parse(model, answer.json_body, f"{method} {path}", answer.status)

    # --- who, what can be launched ---------------------------------------------------------------
    def me(self) -> models.User:
        return self._get(models.User, "GET", "/me")

    def products(self) -> list[models.Product]:
        return self._get(models.ProductCatalog, "GET", "/products").products

    def product(self, product: str, version: str) -> models.Manifest:
        return self._get(models.Manifest, "GET", f"/products/{product}/{version}")

    def capacity(self) -> list[models.DiskCapacity]:
        """Free and in-service whole disks per class."""
        return self._get(models.Capacity, "GET", "/capacity").disks

    # --- API tokens ------------------------------------------------------------------------------
    def tokens(self, username: str | None = None) -> list[models.Token]:
        """Your tokens (or, for admins, ``username``'s), newest first."""
        path = f"/admin/users/{username}/tokens" if username else "/me/tokens"
        return self._get(list[models.Token], "GET", path)

    def create_token(self, expires_in_s: int | None = None) -> models.CreatedToken:
        """A new token of yours (shown once), working ``expires_in_s`` or the platform's lifetime."""
        body = {"expires_in_s": expires_in_s} if expires_in_s is not None else {}
        return self._get(models.CreatedToken, "POST", "/me/tokens", json=body)

    def revoke_token(self, token_id: int, username: str | None = None) -> None:
        """Revoke one of your tokens (or, for admins, one of ``username``'s)."""
        self._call("DELETE", f"/admin/users/{username}/tokens/{token_id}" if username else f"/me/tokens/{token_id}")

    # --- quotas --------------------------------------------------------------------------------
    def quota(self, username: str | None = None) -> models.Quota:
        """Your usage against your quota (or, for admins, ``username``'s)."""
        return self._get(models.Quota, "GET", f"/admin/users/{username}/quota" if username else "/me/quota")

    def set_quota(self, username: str, limits: dict[str, Any]) -> models.Quota:
        """Set ``username``'s whole quota (admins): a limit left out is the platform's default."""
        return self._get(models.Quota, "PUT", f"/admin/users/{username}/quota", json=limits)

    def quotas(self) -> list[models.Quota]:
        """Every quota an admin set, with its usage (admins)."""
        return self._get(list[models.Quota], "GET", "/admin/quotas")

    # --- nodes ---------------------------------------------------------------------------------
    def nodes(self) -> list[models.Node]:
        """Every node of the inventory, with its rack and failure domain (admins)."""
        return self._get(list[models.Node], "GET", "/admin/nodes")

    def node(self, name: str) -> models.Node:
        """One node of the inventory (admins)."""
        return self._get(models.Node, "GET", f"/admin/nodes/{name}")

    def set_rack(self, name: str, rack: str | None) -> models.Node:
        """Put node ``name`` in ``rack``, its failure domain (admins); None clears it: the node is its own again."""
        return self._get(models.Node, "PATCH", f"/admin/nodes/{name}", json={"rack": rack})

    # --- clusters --------------------------------------------------------------------------------
    def launch(self, product: str, version: str, options: dict[str, Any] | None = None,
               idempotency_key: str | None = None) -> models.Cluster:
        """Launch a cluster; returns it as accepted (state PENDING)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._get(models.Cluster, "POST", f"/products/{product}/{version}", json=options or {},
                         headers=headers)

    def plan(self, product: str, version: str, options: dict[str, Any] | None = None) -> models.Plan:
        """Placement dry-run of a launch: where members would go, or why they cannot."""
        return self._get(models.Plan, "POST", f"/products/{product}/{version}/plan", json=options or {})

    def clusters(self, username: str, state: str | None = None, product: str | None = None,
                 page_size: int = 100) -> Iterator[models.Cluster]:
        """Every cluster of ``username`` (following pages)."""
        token = None
        while True:
            params = {"state": state, "product": product, "page_size": page_size, "page_token": token}
            page = self._get(models.ClusterPage, "GET", f"/clusters/{username}",
                             params={k: v for k, v in params.items() if v})
            yield from page.items
            token = page.next_page_token
            if not token:
                return

    def find_cluster(self, username: str, cluster_id: str) -> models.Cluster:
        """A cluster by id alone (the CLI's ``show <id>``); 404-style error when the user has none."""
        for cluster in self.clusters(username):
            if cluster.id == cluster_id:
                return cluster
        raise SpindleError(404, "CLUSTER_NOT_FOUND", f"{username} has no cluster {cluster_id}")

    def cluster(self, cluster: ClusterAddress) -> models.Cluster:
        return self._get(models.Cluster, "GET", cluster_path(cluster))

    def delete(self, cluster: ClusterAddress, keep_disks: bool = False, dataset: str | None = None,
               force: bool = False) -> models.Cluster:
        """Destroy a cluster; ``keep_disks``: its members' disks are kept with their data as your
        dataset ``dataset`` (default: the cluster's id) instead of being wiped; ``force``: even though
        other clusters of yours are bound to it (else a 409 CLUSTER_IN_USE names them)."""
        params: dict[str, Any] = {"keep_disks": "true"} if keep_disks else {}
        if dataset is not None:
            params["dataset"] = dataset
        if force:
            params["force"] = "true"
        return self._get(models.Cluster, "DELETE", cluster_path(cluster), params=params)

    def resize(self, cluster: ClusterAddress, roles: Mapping[str, int]) -> models.Cluster:
        """Change how many members of each role the running cluster has."""
        return self._get(models.Cluster, "POST", f"{cluster_path(cluster)}/resize", json={"roles": dict(roles)})

    def plan_resize(self, cluster: ClusterAddress, roles: Mapping[str, int]) -> models.Plan:
        """Where the members a resize adds would go, or why they cannot."""
        return self._get(models.Plan, "POST", f"{cluster_path(cluster)}/resize/plan", json={"roles": dict(roles)})

    def stop(self, cluster: ClusterAddress) -> models.Cluster:
        """Stop a running cluster: containers stop, disks and floating IPs are kept."""
        return self._get(models.Cluster, "POST", f"{cluster_path(cluster)}/stop")

    def start(self, cluster: ClusterAddress) -> models.Cluster:
        """Start a stopped cluster again on its kept disks, with its floating IPs."""
        return self._get(models.Cluster, "POST", f"{cluster_path(cluster)}/start")

    def datasets(self, username: str, include_ended: bool = False) -> list[models.Dataset]:
        """``username``'s datasets (yours; admins anyone's), newest first."""
        return self._get(list[models.Dataset], "GET", f"/datasets/{username}",
                         params={"include_ended": "true"} if include_ended else {})

    def all_datasets(self, include_ended: bool = False) -> list[models.Dataset]:
        """Every user's datasets (admins)."""
        return self._get(list[models.Dataset], "GET", "/admin/datasets",
                         params={"include_ended": "true"} if include_ended else {})

    def reclaim_dataset(self, username: str, name: str) -> models.Dataset:
        """Wipe a kept dataset's disks."""
        return self._get(models.Dataset, "DELETE", f"/datasets/{username}/{name}")

    def metrics(self, cluster: ClusterAddress, minutes: int = 30, step: int = 15) -> models.ClusterMetrics:
        """Per-member figures over the last ``minutes`` (CPU, memory, disk I/O and use, network)."""
        return self._get(models.ClusterMetrics, "GET", f"{cluster_path(cluster)}/metrics",
                         params={"minutes": minutes, "step": step})

    def member_logs(self, cluster: ClusterAddress, member: str, tail: int = 200, since: float | None = None) -> str:
        """A member's last ``tail`` log lines (since ``since``, unix seconds), each with its time."""
        params: dict[str, Any] = {"tail": tail, **({"since": since} if since is not None else {})}
        try:
            response = self._http.get(f"{cluster_path(cluster)}/members/{member}/logs", params=params)
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc
        if not response.is_success:
            _answer(response)  # raises with the error envelope
        return response.text

    def follow_member_logs(self, cluster: ClusterAddress, member: str, tail: int = 200) -> Iterator[str]:
        """A member's last ``tail`` log lines, then each new one as it is written (SSE), until its
        container ends."""
        path = f"{cluster_path(cluster)}/members/{member}/logs"
        try:
            with self._http.stream("GET", path, params={"tail": tail, "follow": "true"},
                                   timeout=httpx.Timeout(30, read=None)) as response:
                if not response.is_success:
                    response.read()
                    _answer(response)
                for name, data in parse_sse(response.iter_lines()):
                    if name == "line":
                        yield str(data)
                    elif name == "end":
                        return
                    elif name == "error":
                        raise SpindleError(int(data.get("status", 502)), "STREAM_FAILED", str(data.get("message")))
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"the log stream of {path} broke: {exc}") from exc

    def exec(self, cluster: ClusterAddress, member: str, command: Sequence[str],
             timeout_s: int = 300) -> Iterator[tuple[str, Any]]:
        """Run ``command`` (an argv) in a member and stream how it goes: ``("stdout"|"stderr", text)``
        as it writes, then ``("exit", {"exit_code": N, "timed_out"?: True, "truncated"?: True})``.
        A node that stops answering mid-way raises SpindleError (its ``error`` line)."""
        path = f"{cluster_path(cluster)}/members/{member}/exec"
        body = {"command": list(command), "timeout_s": timeout_s}
        try:
            with self._http.stream("POST", path, json=body, timeout=httpx.Timeout(30, read=None)) as response:
                if not response.is_success:
                    response.read()
                    _answer(response)
                for line in response.iter_lines():
                    if not line:
                        continue
                    data = json.loads(line)
                    if "stream" in data:
                        yield str(data["stream"]), str(data.get("data", ""))
                    elif "exit_code" in data:
                        yield "exit", data
                        return
                    elif "error" in data:
                        error = data["error"]
                        raise SpindleError(502, str(error.get("code", "STREAM_BROKEN")), str(error.get("message")))
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"the exec stream of {path} broke: {exc}") from exc
        raise SpindleError(502, "STREAM_BROKEN", f"the exec stream of {path} ended before the exit code")

    def execs(self, cluster: ClusterAddress, limit: int = 100) -> list[models.ExecRecord]:
        """The commands run in the cluster's members, newest first (who, what, how it ended)."""
        return self._get(list[models.ExecRecord], "GET", f"{cluster_path(cluster)}/execs", params={"limit": limit})

    def events(self, cluster: ClusterAddress, after_seq: int = 0) -> list[models.Event]:
        return self._get(list[models.Event], "GET", f"{cluster_path(cluster)}/events", params={"after_seq": after_seq})

    def follow_events(self, cluster: ClusterAddress, after_seq: int = 0,
                      retries: int = 5) -> Iterator[tuple[str, Any]]:
        """The live timeline (SSE): ``("event", Event)`` items, then ``("end", settled Cluster)``
        (``None`` when the cluster is gone). A stream that drops before its end is opened again
        after the last event seen (``Last-Event-ID``), up to ``retries`` times in a row."""
        path = f"{cluster_path(cluster)}/events"
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if after_seq:
                headers["Last-Event-ID"] = str(after_seq)
            try:
                with self._http.stream("GET", path, params={"after_seq": after_seq}, headers=headers,
                                       timeout=httpx.Timeout(30, read=None)) as response:
                    if not response.is_success:
                        response.read()
                        _answer(response)
                    for name, data in parse_sse(response.iter_lines()):
                        if name == "event":
                            event = parse(models.Event, data, f"GET {path} (event)")
                            after_seq, failures = event.seq, 0
                            yield name, event
                        elif name == "end":
                            yield name, None if data is None else parse(models.Cluster, data, f"GET {path} (end)")
                            return
                        elif name == "error":
                            status = data.get("status", 0) if isinstance(data, dict) else 0
                            raise SpindleError(status or 502, "STREAM_FAILED", f"the event stream of {path} failed "
                                               f"(upstream status {status})", {"data": data})
            except httpx.HTTPError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            else:
                reason = "closed before its end"
            failures += 1
            if failures > retries:
                raise SpindleError(0, "STREAM_FAILED", f"the event stream of {path} {reason}; gave up after "
                                   f"{retries} reconnects")
            time.sleep(min(2 ** (failures - 1), 10))

    # --- jobs ----------------------------------------------------------------------------------------
    def submit(self, cluster: ClusterAddress, main: Path, files: Sequence[Path] = (),
               args: Sequence[str] = ()) -> models.Job:
        """Run the driver program ``main`` (with ``files`` beside it) against a RUNNING cluster."""
        uploads = {p.name: base64.b64encode(p.read_bytes()).decode() for p in [main, *files]}
        return self._get(models.Job, "POST", f"{cluster_path(cluster)}/jobs",
                         json={"main": main.name, "args": list(args), "files": uploads})

    def jobs(self, cluster: ClusterAddress) -> list[models.Job]:
        return self._get(list[models.Job], "GET", f"{cluster_path(cluster)}/jobs")

    def job(self, cluster: ClusterAddress, job_id: str) -> models.Job:
        """The job with its driver's stdout and stderr."""
        return self._get(models.Job, "GET", f"{cluster_path(cluster)}/jobs/{job_id}")

    def job_output(self, cluster: ClusterAddress, job_id: str) -> bytes:
        """What the job wrote to /job/output, as .tar.gz bytes."""
        try:
            response = self._http.get(f"{cluster_path(cluster)}/jobs/{job_id}/output")
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc
        if not response.is_success:
            _answer(response)
        return response.content

    def download_output(self, cluster: ClusterAddress, job_id: str, target: Path) -> int:
        """What the job wrote to /job/output, as a .tar.gz streamed into ``target`` (never held
        whole, however large); returns its size in bytes."""
        try:
            with self._http.stream("GET", f"{cluster_path(cluster)}/jobs/{job_id}/output",
                                   timeout=httpx.Timeout(60, read=300)) as response:
                if not response.is_success:
                    response.read()
                    _answer(response)
                size = 0
                with open(target, "wb") as out:
                    for chunk in response.iter_bytes(1 << 20):
                        out.write(chunk)
                        size += len(chunk)
                return size
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc


class _Answer(NamedTuple):
    status: int
    json_body: Any


def cluster_path(cluster: ClusterAddress) -> str:
    """The public address of a cluster, as the paper has it: /clusters/<user>/<product>/<version>/<id>."""
    return f"/clusters/{cluster['owner']}/{cluster['product']}/{cluster['version']}/{cluster['id']}"


def api_json(value: Any) -> Any:
    """A model (or a list of them) as the JSON the API sent."""
    if isinstance(value, list):
        return [api_json(v) for v in value]
    return value.api_json() if isinstance(value, ApiModel) else value


def parse_sse(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """``(event name, JSON data)`` of each server-sent event; comments (keep-alives) are skipped."""
    name = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def _answer(response: httpx.Response) -> Any:
    """The JSON body of a successful answer; raises SpindleError with the error envelope otherwise."""
    if response.is_success:
        try:
            return response.json() if response.content else None
        except ValueError:
            raise SpindleError(response.status_code, "UNEXPECTED_ANSWER",
                               f"the API answered {response.request.url.path} with a body that is not JSON: "
                               f"{response.text[:200]!r}") from None
    try:
        error = models.ErrorEnvelope.model_validate(response.json()).error
    except (ValueError, ValidationError):  # not JSON, or not the envelope (e.g. a proxy's page)
        raise SpindleError(response.status_code, "HTTP_ERROR", response.text[:500]) from None
    raise SpindleError(response.status_code, error.code, error.message, error.details)
