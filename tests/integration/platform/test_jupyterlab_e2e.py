"""JupyterLab bound to a Spark cluster, through the public REST API on the real stack: a user's
jupyterlab cluster launched with ``"bind": {"spark": <their spark cluster>}`` refuses requests
without its token; with it, a notebook made through Jupyter's REST API runs a cell over the
kernel's websocket (the real server, as the browser drives it) whose SparkSession runs a job on the
bound cluster — executors on its worker connect back to the driver in the kernel, across both
clusters' network isolation — and the Spark master lists the application; the server's container
killed, it starts again on its own disk (``restart: in_place``) with the notebook. Another user
cannot bind to that Spark cluster (404, nothing created)."""
import json
import secrets
import time
import uuid
from typing import Any

import httpx
import pytest
import websocket

from spindle_client.client import SpindleError
from tests.integration.platform.cluster_checks import container_of
from tests.support.live_users import live_user
from tests.support.through_restarts import replaced, retrying, settled

# The notebook's kernel drives Spark from the server: the server and the worker at 0.5 CPU (their JVMs
# and the kernel start in about half the time they took at 0.25), 1.4 of the 2 cpus this host offers.
SPARK = {"roles": {"master": {"cpus": 0.25}, "worker": {"count": 1, "cpus": 0.5, "mem_mb": 1536, "disks": {"hdd": 0}}},
         "wait_for_resources": True}
JUPYTER = {"roles": {"server": {"cpus": 0.5, "mem_mb": 1536, "disks": {"hdd": 0, "ssd": 1}}},
           "wait_for_resources": True}
SPARK_CELL = ("from pyspark.sql import SparkSession\n"
              "spark = SparkSession.builder.appName('{app}').getOrCreate()\n"
              "print('master', spark.sparkContext.master)\n"
              "print('sum', spark.sparkContext.parallelize(range(1000), 4).sum())\n")


@pytest.fixture
def user(database_url):
    with live_user(database_url, "jupyter") as client:
        yield client


@pytest.fixture
def stranger(database_url):
    with live_user(database_url, "jupyter-other") as client:
        yield client


class Jupyter:
    """The Jupyter server's REST API and a kernel's websocket, with the token in the header."""

    def __init__(self, base: str, token: str):
        self.base, self.token = base.rstrip("/"), token
        self.http = httpx.Client(base_url=self.base, headers={"Authorization": f"token {token}"}, timeout=60)

    def new_notebook(self, name: str, source: str) -> dict[str, Any]:
        notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "spark", "metadata": {},
                               "outputs": [], "source": source}],
                    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                    "nbformat": 4, "nbformat_minor": 5}
        saved = self.http.put(f"/api/contents/{name}", json={"type": "notebook", "format": "json",
                                                              "content": notebook})
        assert saved.status_code == 201, saved.text[:500]
        return saved.json()

    def start_kernel(self, notebook: str) -> str:
        session = self.http.post("/api/sessions", json={"path": notebook, "type": "notebook", "name": notebook,
                                                        "kernel": {"name": "python3"}})
        assert session.status_code == 201, session.text[:500]
        return session.json()["kernel"]["id"]

    def execute(self, kernel_id: str, code: str, timeout: float = 300) -> tuple[str, list[dict[str, Any]]]:
        """Run ``code`` in the kernel over its websocket (Jupyter's messaging protocol): the reply's
        status and the stream/error messages it printed."""
        url = f"{self.base.replace('http://', 'ws://')}/api/kernels/{kernel_id}/channels"
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=timeout)
        try:
            msg_id = uuid.uuid4().hex
            ws.send(json.dumps({"header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                                           "msg_type": "execute_request", "version": "5.3"},
                                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                                "content": {"code": code, "silent": False, "store_history": True,
                                            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
            outputs: list[dict[str, Any]] = []
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                msg = json.loads(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if kind in ("stream", "error", "execute_result"):
                    outputs.append({"type": kind, **msg["content"]})
                elif kind == "execute_reply" and msg["channel"] == "shell":
                    return msg["content"]["status"], outputs
            raise AssertionError(f"no execute_reply within {timeout:.0f} s; outputs so far: {outputs}")
        finally:
            ws.close()


def printed(outputs: list[dict[str, Any]]) -> str:
    return "".join(o.get("text", "") for o in outputs if o["type"] == "stream")


def wait_jupyter(base: str, timeout: float = 120) -> None:
    """The member is RUNNING once its port is open; the server answers a moment later at most."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base}/api", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{base} does not answer"
        time.sleep(1)


def test_a_notebook_runs_a_spark_job_on_the_bound_cluster(user, stranger):
    token = secrets.token_urlsafe(32)
    spark = jupyter = None
    try:
        spark = retrying(lambda: user.launch("spark", "3.5", SPARK))
        spark = settled(user, spark, ("RUNNING", "FAILED"), timeout=900)
        assert spark["state"] == "RUNNING", (spark["reason_code"], spark["reason"])
        master_ip = next(m["ip"] for m in spark["members"] if m["role"] == "master")

        with pytest.raises(SpindleError) as refused:
            retrying(lambda: stranger.launch("jupyterlab", "4", {**JUPYTER, "bind": {"spark": spark["id"]},
                                                                 "settings": {"token": secrets.token_urlsafe(32)}}))
        assert (refused.value.status, refused.value.code) == (404, "BOUND_CLUSTER_NOT_FOUND")
        assert retrying(lambda: list(stranger.clusters(stranger.username))) == [], "a refused launch creates nothing"
        with pytest.raises(SpindleError) as weak:
            retrying(lambda: user.launch("jupyterlab", "4", {**JUPYTER, "settings": {"token": "short"}}))
        assert (weak.value.status, weak.value.code) == (422, "INVALID_OPTIONS")

        jupyter = retrying(lambda: user.launch("jupyterlab", "4", {**JUPYTER, "settings": {"token": token},
                                                                    "bind": {"spark": spark["id"]}}))
        jupyter = settled(user, jupyter, ("RUNNING", "FAILED"), timeout=900)
        assert jupyter["state"] == "RUNNING", (jupyter["reason_code"], jupyter["reason"])
        server = jupyter["members"][0]
        assert [d["container_path"] for d in server["disks"]] == ["/data/1"]
        assert [(p["name"], p["port"], p["ui"]) for p in server["ports"]] == [("jupyterlab", 8888, True),
                                                                               ("spark-driver-ui", 4040, True)]
        base = f"http://{server['ip']}:8888"
        wait_jupyter(base)

        assert httpx.get(f"{base}/api/contents", timeout=30).status_code == 403
        assert httpx.get(f"{base}/api/contents", headers={"Authorization": "token wrong-token-wrong-token"},
                         timeout=30).status_code == 403
        page = httpx.get(f"{base}/lab", timeout=30)
        assert page.status_code == 302 and "/login" in page.headers["location"], "the UI asks for the token"

        lab = Jupyter(base, token)
        app = f"spindle-e2e-{secrets.token_hex(4)}"
        saved = lab.new_notebook("spark.ipynb", SPARK_CELL.format(app=app))
        assert saved["path"] == "spark.ipynb"
        listed = lab.http.get("/api/contents").json()["content"]
        assert [c["name"] for c in listed] == ["spark.ipynb"], "the notebooks' folder on the disk holds it"
        kernel = lab.start_kernel("spark.ipynb")
        status, outputs = lab.execute(kernel, SPARK_CELL.format(app=app))
        assert status == "ok", outputs
        text = printed(outputs)
        assert f"master spark://{master_ip}:7077" in text, text
        assert "sum 499500" in text, text

        ui = httpx.get(f"http://{master_ip}:8080/json/", timeout=30).json()
        apps = [a for a in ui["activeapps"] + ui["completedapps"] if a["name"] == app]
        assert apps, f"the master lists {app}: {ui['activeapps']}"
        status, outputs = lab.execute(kernel, "spark.stop()")
        assert status == "ok", outputs

        # The server's container dies (restart: in_place): it starts again on its node and disk, so
        # the notebook saved before is still there.
        container_of(server).kill()
        jupyter, again = replaced(user, jupyter, server["member_id"], timeout=300)
        assert (again["ip"], again["node"]) == (server["ip"], server["node"])
        assert [d["id"] for d in again["disks"]] == [d["id"] for d in server["disks"]], "its own disk"
        wait_jupyter(base)
        kept = lab.http.get("/api/contents/spark.ipynb")
        assert kept.status_code == 200, kept.text[:500]
        assert kept.json()["content"]["cells"][0]["source"] == SPARK_CELL.format(app=app)
    finally:
        for cluster in (jupyter, spark):
            if cluster:
                retrying(lambda c=cluster: user.delete(c))
        for cluster in (jupyter, spark):
            if cluster:
                deadline = time.monotonic() + 300
                while retrying(lambda c=cluster: user.cluster(c))["state"] != "DESTROYED":
                    assert time.monotonic() < deadline
                    time.sleep(1)
