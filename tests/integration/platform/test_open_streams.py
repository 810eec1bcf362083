"""Many users watching a cluster that waits for resources: a hundred live event streams through the
public API hold no worker thread and no database connection of the api-server (each would
otherwise hold one until its cluster settles), so other requests are still answered."""
import threading
import time

import httpx

from tests.support.live_users import API_URL, live_user


def test_a_hundred_open_streams_leave_the_api_answering(database_url):
    with live_user(database_url, "streams") as user:
        headers = {"Authorization": f"Bearer {user.token}"}
        # More cpus than the node has: the cluster waits (QUEUED), so its stream stays open.
        launched = httpx.post(f"{API_URL}/products/static-web/1.0", headers=headers, timeout=30,
                              json={"wait_for_resources": True, "roles": {"server": {"count": 5, "cpus": 4}}})
        assert launched.status_code == 202, launched.text
        cluster = launched.json()
        path = f"/clusters/{user.username}/static-web/1.0/{cluster['id']}/events?stream=true"
        first_events: list[str] = []
        failures: list[str] = []  # what a stream ended with instead of its timeline
        stop = threading.Event()

        def watch() -> None:
            try:
                with httpx.stream("GET", API_URL + path, headers=headers, timeout=120) as response:
                    if response.status_code != 200:
                        failures.append(f"{response.status_code} {response.read()[:200]!r}")
                        return
                    data_of_error = False
                    for line in response.iter_lines():
                        if line == "event: event" and threading.current_thread().name not in first_events:
                            first_events.append(threading.current_thread().name)
                        if data_of_error and line.startswith("data: "):
                            failures.append(line)
                        data_of_error = line == "event: error"
                        if stop.is_set():
                            return
            except httpx.HTTPError as exc:
                failures.append(repr(exc))

        watchers = [threading.Thread(target=watch, daemon=True, name=f"w{i}") for i in range(100)]
        try:
            for watcher in watchers:
                watcher.start()
            deadline = time.monotonic() + 120
            while len(first_events) < 100 and not failures and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not failures, f"{len(failures)} streams failed, e.g. {failures[:3]}"
            assert len(first_events) == 100, f"only {len(first_events)} streams got their timeline"
            for _ in range(5):  # with every stream open, ordinary requests are answered
                listed = httpx.get(f"{API_URL}/clusters/{user.username}", headers=headers, timeout=10)
                assert listed.status_code == 200 and listed.json()["items"][0]["id"] == cluster["id"]
        finally:
            stop.set()
            deleted = httpx.delete(f"{API_URL}/clusters/{user.username}/static-web/1.0/{cluster['id']}",
                                   headers=headers, timeout=30)
            assert deleted.status_code == 202
            for watcher in watchers:  # the delete settles the cluster: every stream ends
                watcher.join(timeout=120)
        assert not any(w.is_alive() for w in watchers)
        assert not failures, f"{len(failures)} streams failed, e.g. {failures[:3]}"
