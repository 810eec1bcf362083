"""Right after a first `deploy/up` (product images still building in the background): a static-web
launch (the base image) and a Kafka launch (its image not built yet), timed; the catalog's image
states sampled until every image is ready; Kafka's image timeline printed. docs/TESTING.md, "A
first start". Run: `.venv/bin/python bench/first_start.py` (the platform up); `--static-web-only`:
the static-web launch alone (bench/fresh_machine.sh)."""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.integration.platform.cluster_checks import wait_settled  # noqa: E402
from tests.support.live_users import live_user  # noqa: E402

STATE = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
WEB = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0}}}}
KAFKA = {"roles": {"broker": {"count": 1, "cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 1}}},
         "settings": {"default_replication_factor": 1, "min_insync_replicas": 1}}
START = time.time()


def stamp(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} +{time.time() - START:6.1f}s {message}", flush=True)


def catalog(user) -> str:
    def state(images) -> str:
        return images.state + (f" {images.step}/{images.steps}" if images.step else "")
    return ", ".join(f"{p.name}={state(p.images)}" for p in user.products())


def main() -> None:
    env = dict(line.split("=", 1) for line in (STATE / "spindle.env").read_text().splitlines() if "=" in line)
    with live_user(env["SPINDLE_DATABASE_URL"], "firststart") as user:
        stamp("catalog: " + catalog(user))
        if "--static-web-only" in sys.argv[1:]:
            web = user.launch("static-web", "1.0", WEB)
            web = wait_settled(user, web, ("RUNNING", "FAILED"), timeout=600)
            stamp(f"static-web {web['state']} {web.get('reason') or ''}")
            user.delete(web)
            wait_settled(user, web, ("DESTROYED",), timeout=300)
            if web["state"] != "RUNNING":
                sys.exit(1)
            return
        web, kafka = user.launch("static-web", "1.0", WEB), user.launch("kafka", "4.0", KAFKA)
        stamp("launched static-web and kafka")
        web = wait_settled(user, web, ("RUNNING", "FAILED"), timeout=600)
        stamp(f"static-web {web['state']}")
        last = None
        while True:
            states = catalog(user)
            if states != last:
                stamp("catalog: " + states)
                last = states
            if user.cluster(kafka)["state"] in ("RUNNING", "FAILED") and "preparing" not in states:
                break
            time.sleep(5)
        kafka = wait_settled(user, kafka, ("RUNNING", "FAILED"), timeout=900)
        stamp(f"kafka {kafka['state']} {kafka.get('reason') or ''}")
        for event in user.events(kafka):
            if event.step in ("image", "cluster"):
                print("   ", event.at, event.step, event.state, event.message)
        for cluster in (web, kafka):
            user.delete(cluster)
        for cluster in (web, kafka):
            wait_settled(user, cluster, ("DESTROYED",), timeout=300)
        stamp("deleted")


if __name__ == "__main__":
    main()
