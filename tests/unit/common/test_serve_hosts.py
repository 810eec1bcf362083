"""A service listens on its host and on every extra address (e.g. a node fabric's), one server."""
import threading

import httpx
import pytest
from fastapi import FastAPI

from spindle_common.service import serve, split_hosts
from tests.support.live_server import free_port, wait_ok


@pytest.mark.parametrize("raw, hosts", [
    ("", []),
    ("10.77.0.1", ["10.77.0.1"]),
    (" 10.77.0.1 , 127.0.0.2,", ["10.77.0.1", "127.0.0.2"]),
])
def test_split_hosts(raw, hosts):
    assert split_hosts(raw) == hosts


def test_one_server_answers_on_every_address():
    app = FastAPI()

    @app.get("/who")
    def who() -> dict:
        return {"answered": True}

    port = free_port()
    threading.Thread(target=serve, args=(app, ["127.0.0.1", "127.0.0.2", "127.0.0.1"], port),
                     kwargs={"log_level": "warning"}, daemon=True).start()
    for host in ("127.0.0.1", "127.0.0.2"):
        wait_ok(f"http://{host}:{port}/who")
        assert httpx.get(f"http://{host}:{port}/who").json() == {"answered": True}
    with pytest.raises(httpx.ConnectError):  # not on every address of the machine
        httpx.get(f"http://127.0.0.3:{port}/who", timeout=2)
