"""The status member keeps the locality drivers report: signed with the cluster secret, checked,
bounded; bad or unsigned reports are refused with a 4xx and change nothing."""

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

from spindle_engine import status

SECRET = b"s3cret"


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), status._Handler)
    srv.agents = []
    srv.secret = SECRET
    srv.locality = status.Locality()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv, f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _post(url, body, headers=None):
    req = urllib.request.Request(url + "locality", data=body, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_signed_reports_are_kept_and_summed(server):
    _, url = server
    status.report_locality("d1", {"stage": "stage 1", "node_local": 12, "any": 0}, url, SECRET)
    status.report_locality("d1", {"stage": "stage 2", "node_local": 3, "any": 2}, url, SECRET)
    view = _get(url)["locality"]
    assert (view["node_local"], view["any"]) == (15, 2)
    assert [(s["stage"], s["node_local"], s["any"]) for s in view["stages"]] == \
        [("stage 1", 12, 0), ("stage 2", 3, 2)]


def _body(**fields):
    return json.dumps({"driver": "d", "stage": "s", "node_local": 1, "any": 0,
                       "at": time.time(), **fields}).encode()


@pytest.mark.parametrize(("body", "signature", "expected"), [
    (_body(), None, 403),                                   # unsigned
    (_body(), "00" * 32, 403),                              # signed with another secret
    (b"not json", status.sign(SECRET, b"not json"), 400),
    (b"[1]", status.sign(SECRET, b"[1]"), 400),
    (_body(node_local=-1), "sign", 400),
    (_body(any="3"), "sign", 400),
    (_body(any=True), "sign", 400),
    (_body(at=time.time() - 3600), "sign", 400),            # replayed an hour later
    (b"x" * (status.MAX_REPORT_BYTES + 1), "sign", 413),
], ids=["unsigned", "other-secret", "not-json", "not-an-object", "negative-count", "count-a-string",
        "count-a-bool", "replayed", "too-large"])  # bodies carry the time: ids the same in every run
def test_bad_reports_are_refused_and_change_nothing(server, body, signature, expected):
    srv, url = server
    if signature == "sign":
        signature = status.sign(SECRET, body)
    headers = {status.SIGNATURE: signature} if signature else {}
    assert _post(url, body, headers) == expected
    assert srv.locality.view() == {"node_local": 0, "any": 0, "stages": []}
