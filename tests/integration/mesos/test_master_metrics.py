"""The embedded master's /metrics (a spindle-mesos-embedded process with its local agent): agents by
state, frameworks, tasks by state and offers, read from its state at each scrape; the metrics token
required."""
import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.mesos.conftest import Recorder, framework, write_resources
from tests.support.embedded_master import embedded_master

TOKEN = "master-metrics-token"


def scrape(url: str) -> dict[tuple, float]:
    answer = httpx.get(f"http://{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def test_the_masters_figures(tmp_path):
    resources = write_resources(tmp_path / "resources.json", tmp_path / "disk1")
    with embedded_master(tmp_path, SPINDLE_MESOS_RESOURCES=str(resources), SPINDLE_AGENT_CPUS="2",
                         SPINDLE_AGENT_MEM_MB="2048", SPINDLE_METRICS_TOKEN=TOKEN) as url:
        assert httpx.get(f"http://{url}/metrics", timeout=10).status_code == 401
        recorder = Recorder()
        with framework(url, recorder):
            recorder.wait(lambda r: r.offers)
            samples = scrape(url)
            assert samples[("spindle_mesos_agents", (("state", "ACTIVE"),))] == 1
            assert samples[("spindle_mesos_frameworks", (("connected", "true"),))] == 1
            assert samples[("spindle_mesos_offers_total", ())] >= 1
            assert samples[("spindle_mesos_offers_outstanding", ())] >= 1
