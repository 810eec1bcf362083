"""Whether a product's images are ready to launch from.

``deploy/up`` builds the product images after the platform answers, in the background, one at a
time (``deploy/build-images``). Before it starts it writes, for every image it will build, a state
file ``<state_dir>/images/<file_name(image)>.json``; the builder rewrites it as it goes:

    {"image": "spindle/kafka:4.0", "state": "queued" | "building" | "pushing" | "ready" | "failed",
     "step": 3, "steps": 12, "message": "…", "updated": "2026-11-27T22:40:00Z"}

An image without a state file was never built in the background (up to date when ``deploy/up``
looked, or built by hand): it counts as ready. The catalog shows a product ``preparing`` while one of
its images is not ready, and the orchestrator holds a launch of it until they are.
"""
import json
import time
from pathlib import Path
from typing import Any

READY, FAILED = "ready", "failed"
STATES = ("queued", "building", "pushing", READY, FAILED)


def file_name(image: str) -> str:
    """``spindle/kafka:4.0`` → ``spindle_kafka_4.0.json``."""
    return image.replace("/", "_").replace(":", "_") + ".json"


def images_of(manifest: dict[str, Any]) -> list[str]:
    """Every image a product's manifest names (its own, a role's, its jobs'), sorted."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "image" and isinstance(item, str):
                    found.add(item)
                elif key != "options_schema":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
    walk(manifest)
    return sorted(found)


def image_state(state_dir: Path, image: str) -> dict[str, Any]:
    """The builder's state of ``image``; ``{"state": "ready"}`` when it has none. A file being
    rewritten (the builder replaces it whole, by rename) or unreadable counts as still preparing."""
    path = Path(state_dir) / "images" / file_name(image)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {"image": image, "state": READY}
    except OSError as exc:
        return {"image": image, "state": "queued", "message": f"its state is unreadable: {exc}"}
    try:
        state = json.loads(text)
    except ValueError:
        return {"image": image, "state": "queued", "message": "its state is being written"}
    if not isinstance(state, dict) or state.get("state") not in STATES:
        return {"image": image, "state": "queued", "message": "its state file is not the builder's"}
    return {**state, "image": image}


def product_state(state_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """``{"state": "ready"}``, or the first of the product's images not ready (failed before preparing)."""
    states = [image_state(state_dir, image) for image in images_of(manifest)]
    waiting = [s for s in states if s["state"] != READY]
    if not waiting:
        return {"state": READY}
    first = next((s for s in waiting if s["state"] == FAILED), waiting[0])
    return {"state": FAILED if first["state"] == FAILED else "preparing", "image": first["image"],
            "step": first.get("step"), "steps": first.get("steps"), "image_state": first["state"],
            "message": describe(first)}


def describe(state: dict[str, Any]) -> str:
    """One line: ``image spindle/kafka:4.0 building (step 3 of 12)``."""
    text = f"image {state['image']} {state['state']}"
    if state.get("step") and state.get("steps"):
        text += f" (step {state['step']} of {state['steps']})"
    if state.get("message"):
        text += f": {state['message']}"
    return text[:500]


def wait_ready(state_dir: Path, image: str, timeout_s: float = 1800.0, poll_s: float = 2.0) -> None:
    """Return once ``image`` is ready (for a tool that runs it directly, e.g. a benchmark's bare-metal
    side right after a first ``deploy/up``); RuntimeError when its build failed or after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while (state := image_state(state_dir, image))["state"] != READY:
        if state["state"] == FAILED or time.monotonic() >= deadline:
            raise RuntimeError(f"{describe(state)} (deploy/up builds it in the background)")
        time.sleep(poll_s)
