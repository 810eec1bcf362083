"""Live event streams are capped per user (here 2): one more is 429 TOO_MANY_STREAMS with
Retry-After, another user is not affected, and a stream that ends — here the client hangs up —
gives its place back."""
import time
from contextlib import ExitStack

import httpx

from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_common import migrations
from tests.integration.api.conftest import bearer
from tests.support.live_server import serve


def test_streams_are_capped_per_user(fresh_database, consul_url, orchestrator_url, internal_token, make_user):
    migrations.upgrade("spindle_api", fresh_database)
    app = build_app(Settings(database_url=fresh_database, consul_url=consul_url, orchestrator_url=orchestrator_url,
                             internal_token=internal_token, max_streams_per_user=2))
    alice, bob = make_user("alice"), make_user("bob")
    with serve(app) as url, ExitStack() as streams:
        def launch(token: str) -> str:
            answer = httpx.post(f"{url}/products/static-web/1.0", json={}, headers=bearer(token), timeout=30)
            assert answer.status_code == 202, answer.text
            cluster = answer.json()  # stays PENDING: this orchestrator's worker does not run
            return f"{url}/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/events?stream=true"

        def open_stream(path: str, token: str) -> httpx.Response:
            return streams.enter_context(httpx.stream("GET", path, headers=bearer(token), timeout=30))

        alices, bobs = launch(alice), launch(bob)
        first, second = open_stream(alices, alice), open_stream(alices, alice)
        assert (first.status_code, second.status_code) == (200, 200)
        third = open_stream(alices, alice)
        third.read()
        assert third.status_code == 429 and third.json()["error"]["code"] == "TOO_MANY_STREAMS"
        assert third.headers["Retry-After"] == "5" and third.json()["error"]["details"] == {"limit": 2}
        assert open_stream(bobs, bob).status_code == 200, "another user's streams are their own"

        first.close()  # alice hangs up one: its place comes back once the server sees it end
        deadline = time.monotonic() + 20
        while True:
            again = open_stream(alices, alice)
            if again.status_code == 200:
                break
            again.read()
            assert again.status_code == 429 and time.monotonic() < deadline, again.text
            time.sleep(0.2)
        assert app.state.streams.open == {"alice": 2, "bob": 1}
