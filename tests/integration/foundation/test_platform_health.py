"""The running platform: every service passes its Consul health check; Docker runs the base image."""
import json
import subprocess

import httpx

from tests.conftest import REPO

SERVICES = {"api-server": 8080, "orchestrator": 8081, "scheduler": 8082, "disk-service": 8083,
            "network-service": 8084}


def test_spindle_status_reports_every_service_passing(platform_env):
    result = subprocess.run([REPO / ".venv/bin/spindle", "status", "--json"], capture_output=True,
                            text=True, env={"SPINDLE_CONSUL_URL": platform_env["SPINDLE_CONSUL_URL"]})
    assert result.returncode == 0, result.stdout + result.stderr
    statuses = {s["name"]: s for s in json.loads(result.stdout)}
    assert set(statuses) == set(SERVICES)
    for name, port in SERVICES.items():
        assert statuses[name]["status"] == "passing"
        assert statuses[name]["instances"] == [f"127.0.0.1:{port}"]


def test_consul_runs_an_http_check_against_each_service_health(consul_url):
    for name, port in SERVICES.items():
        entries = httpx.get(f"{consul_url}/v1/health/service/{name}").json()
        checks = [c for e in entries for c in e["Checks"] if c["ServiceName"] == name]
        assert checks and all(c["Status"] == "passing" for c in checks), (name, checks)
        # The check really calls the service: its output is the /health response.
        assert f'"service":"{name}"' in checks[0]["Output"]
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["checks"] == {"database": "ok"}


def test_a_container_runs_from_the_locally_built_base_image(platform_env):
    image = platform_env["SPINDLE_BASE_IMAGE"]
    labels = subprocess.run(["docker", "image", "inspect", image, "--format", "{{json .Config.Labels}}"],
                            capture_output=True, text=True, check=True).stdout
    assert json.loads(labels)["io.spindle.owned"] == "true"
    result = subprocess.run(
        ["docker", "run", "--rm", "--label", "io.spindle.owned=true", image,
         "sh", "-c", "cat /etc/debian_version && python3 -c 'print(6*7)'"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    version, answer = result.stdout.split()
    assert version.startswith("12.") and answer == "42"


def test_api_server_serves_platform_status_and_the_web_ui():
    services = httpx.get("http://127.0.0.1:8080/status").json()["services"]
    assert {s["name"]: s["status"] for s in services} == {name: "passing" for name in SERVICES}
    page = httpx.get("http://127.0.0.1:8080/ui/")
    assert page.status_code == 200 and '<div id="root">' in page.text
