"""The embedded Mesos master's figures at its /metrics (read from its state at each scrape), named
after what a real master's ``/metrics/snapshot`` counts: agents by state, frameworks (connected or
not), tasks by state, offers outstanding and offers made."""
from collections import Counter
from collections.abc import Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from spindle_mesos_embedded.master import Master


class MasterMetrics:
    def __init__(self, master: Master):
        self.master = master

    def collect(self) -> Iterable[Metric]:
        master = self.master
        agents = GaugeMetricFamily("spindle_mesos_agents", "Agents by state", labels=["state"])
        for state, count in sorted(Counter(a.state for a in master.agents.values()).items()):
            agents.add_metric([state], count)
        yield agents
        frameworks = GaugeMetricFamily("spindle_mesos_frameworks", "Frameworks, connected or not", labels=["connected"])
        for connected, count in sorted(Counter(f.connected for f in master.frameworks.values()).items()):
            frameworks.add_metric([str(connected).lower()], count)
        yield frameworks
        tasks = GaugeMetricFamily("spindle_mesos_tasks", "Tasks the master knows, by state", labels=["state"])
        for state, count in sorted(Counter(t.state for t in master.tasks.values()).items()):
            tasks.add_metric([state], count)
        yield tasks
        outstanding = sum(len(f.offers) for f in master.frameworks.values())
        yield GaugeMetricFamily("spindle_mesos_offers_outstanding", "Offers sent and not yet answered",
                                value=outstanding)
        yield CounterMetricFamily("spindle_mesos_offers", "Offers sent", value=master.offers_made)
