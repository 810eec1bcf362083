"""A small typed client of Spindle's public REST API (used by the CLI and the tests)."""
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx


class SpindleError(Exception):
    """An error answer of the API, carrying its envelope: status, code, message, details."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.details = status, code, message, details or {}


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
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc
        return _answer(response)

    # --- who, what can be launched ---------------------------------------------------------------
    def me(self) -> dict[str, Any]:
        return self._call("GET", "/me")

    def products(self) -> list[dict[str, Any]]:
        return self._call("GET", "/products")["products"]

    def product(self, product: str, version: str) -> dict[str, Any]:
        return self._call("GET", f"/products/{product}/{version}")

    def capacity(self) -> list[dict[str, Any]]:
        """Free and in-service whole disks per class."""
        return self._call("GET", "/capacity")["disks"]

    # --- clusters --------------------------------------------------------------------------------
    def launch(self, product: str, version: str, options: dict[str, Any] | None = None,
               idempotency_key: str | None = None) -> dict[str, Any]:
        """Launch a cluster; returns it as accepted (state PENDING)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._call("POST", f"/products/{product}/{version}", json=options or {}, headers=headers)

    def plan(self, product: str, version: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Placement dry-run of a launch: where members would go, or why they cannot."""
        return self._call("POST", f"/products/{product}/{version}/plan", json=options or {})

    def clusters(self, username: str, state: str | None = None, product: str | None = None,
                 page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every cluster of ``username`` (following pages)."""
        token = None
        while True:
            params = {"state": state, "product": product, "page_size": page_size, "page_token": token}
            page = self._call("GET", f"/clusters/{username}", params={k: v for k, v in params.items() if v})
            yield from page["items"]
            token = page.get("next_page_token")
            if not token:
                return

    def find_cluster(self, username: str, cluster_id: str) -> dict[str, Any]:
        """A cluster by id alone (the CLI's ``show <id>``); 404-style error when the user has none."""
        for cluster in self.clusters(username):
            if cluster["id"] == cluster_id:
                return cluster
        raise SpindleError(404, "CLUSTER_NOT_FOUND", f"{username} has no cluster {cluster_id}")

    def cluster(self, cluster: dict[str, Any]) -> dict[str, Any]:
        return self._call("GET", cluster_path(cluster))

    def delete(self, cluster: dict[str, Any]) -> dict[str, Any]:
        return self._call("DELETE", cluster_path(cluster))

    def events(self, cluster: dict[str, Any], after_seq: int = 0) -> list[dict[str, Any]]:
        return self._call("GET", f"{cluster_path(cluster)}/events", params={"after_seq": after_seq})

    def follow_events(self, cluster: dict[str, Any], after_seq: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
        """The live timeline (SSE): ``("event", event)`` items, then ``("end", settled cluster)``."""
        with self._http.stream("GET", f"{cluster_path(cluster)}/events", params={"after_seq": after_seq},
                               headers={"Accept": "text/event-stream"}, timeout=httpx.Timeout(30, read=None)) as response:
            if not response.is_success:
                response.read()
                _answer(response)
            yield from parse_sse(response.iter_lines())


    # --- jobs ----------------------------------------------------------------------------------------
    def submit(self, cluster: dict[str, Any], main: Path, files: list[Path] = (), args: list[str] = ()) -> dict[str, Any]:
        """Run the driver program ``main`` (with ``files`` beside it) against a RUNNING cluster."""
        uploads = {p.name: base64.b64encode(p.read_bytes()).decode() for p in [main, *files]}
        return self._call("POST", f"{cluster_path(cluster)}/jobs",
                          json={"main": main.name, "args": list(args), "files": uploads})

    def jobs(self, cluster: dict[str, Any]) -> list[dict[str, Any]]:
        return self._call("GET", f"{cluster_path(cluster)}/jobs")

    def job(self, cluster: dict[str, Any], job_id: str) -> dict[str, Any]:
        """The job with its driver's stdout and stderr."""
        return self._call("GET", f"{cluster_path(cluster)}/jobs/{job_id}")

    def job_output(self, cluster: dict[str, Any], job_id: str) -> bytes:
        """What the job wrote to /job/output, as .tar.gz bytes."""
        try:
            response = self._http.get(f"{cluster_path(cluster)}/jobs/{job_id}/output")
        except httpx.HTTPError as exc:
            raise SpindleError(0, "UNREACHABLE", f"cannot reach {self._http.base_url}: {exc}") from exc
        if not response.is_success:
            _answer(response)
        return response.content


def cluster_path(cluster: dict[str, Any]) -> str:
    """The public address of a cluster, as the paper has it: /clusters/<user>/<product>/<version>/<id>."""
    return f"/clusters/{cluster['owner']}/{cluster['product']}/{cluster['version']}/{cluster['id']}"


def parse_sse(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(event name, JSON data)`` of each server-sent event; comments (keep-alives) are skipped."""
    name, data = "message", []
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
    if response.is_success:
        return response.json() if response.content else None
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        raise SpindleError(response.status_code, "HTTP_ERROR", response.text[:500]) from None
    raise SpindleError(response.status_code, error["code"], error["message"], error.get("details"))
