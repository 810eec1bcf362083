"""Property-based fuzzing of the public API from its own OpenAPI document (schemathesis).

The api-server is served over real HTTP on loopback, in front of an orchestrator, a disk-service
and a network-service of its own, all on one fresh database: the admin operations change only
that scratch inventory, never the running platform's. Nothing starts containers: the orchestrator
is served without its lifespan (no worker), so launched clusters stay PENDING; disk-service knows
no node as its own machine (it runs no lsblk and wipes nothing); network-service gets a Docker
stand-in (pools create no networks). Placement dry-runs go to the platform's scheduler, which holds
nothing for them.

Every operation runs as a user and as an admin, with generated valid and invalid input (examples,
coverage, fuzzing phases) and stateful sequences along the OpenAPI links (launch → show, events,
jobs, delete). Required: no 5xx, and every response as the document says (status code, content
type, schema)."""
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import pytest
import schemathesis
from schemathesis.engine import Status, from_schema
from schemathesis.engine import events as st_events

from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_disk.core.config import Settings as DiskSettings
from spindle_disk.main import build_app as build_disk_service
from spindle_network.core.config import Settings as NetworkSettings
from spindle_network.main import build_app as build_network_service
from spindle_orchestrator.core.config import Settings as OrchestratorSettings
from spindle_orchestrator.main import build_app as build_orchestrator
from tests.support.live_server import serve

# Bounds: examples per operation and phase, steps of a stateful scenario, seconds per identity.
MAX_EXAMPLES = 12
# As a user, admin operations only answer 403, and without a token everything is a 401: a few
# examples show those are documented (with the envelope) everywhere.
USER_ADMIN_EXAMPLES = 2
ANONYMOUS_EXAMPLES = 2
STATEFUL_STEPS = 10
MAX_SECONDS_PER_RUN = 100
SEED = 20261123
CHECKS = ("not_a_server_error", "response_schema_conformance", "status_code_conformance", "content_type_conformance")
EVENTS_PATH = "/clusters/{username}/{product}/{version}/{cluster_id}/events"


class _NoDockerNetworks:
    """Docker as network-service's pool routes use it, holding nothing: pools get no real network."""

    class NotFound(Exception):
        pass

    def __init__(self) -> None:
        from docker.errors import NotFound
        self.networks = self
        self._not_found = NotFound

    def get(self, name: str):
        raise self._not_found(f"no network {name} (fuzz test stand-in)")

    def create(self, *args, **kwargs) -> None:
        return None


@pytest.fixture
def fuzzed_api(fresh_database, consul_url, platform_env):
    """The api-server's base URL (loopback) and a user's and an admin's token."""
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    for package in ("spindle_api", "spindle_orchestrator", "spindle_disk", "spindle_network"):
        migrations.upgrade(package, fresh_database)
    disk_service = build_disk_service(DiskSettings(database_url=fresh_database, internal_token=token,
                                                   local_node_addresses=[]), resume_wipes=False)
    network_service = build_network_service(NetworkSettings(database_url=fresh_database, internal_token=token,
                                                            consul_url=consul_url))
    network_service.state.docker = _NoDockerNetworks()
    orchestrator = build_orchestrator(OrchestratorSettings(database_url=fresh_database, internal_token=token))
    with serve(orchestrator) as orchestrator_url, serve(disk_service) as disk_url, \
            serve(network_service) as network_url:
        # (the platform's time-series database, with its token, as the platform's Consul)
        api = build_app(Settings(database_url=fresh_database, consul_url=consul_url, internal_token=token,
                                 orchestrator_url=orchestrator_url, disk_service_url=disk_url,
                                 network_service_url=network_url,
                                 metrics_token=platform_env["SPINDLE_METRICS_TOKEN"]))
        with serve(api) as api_url:
            with session_factory(fresh_database)() as session, session.begin():
                tokens = {}
                for username, is_admin in (("fuzz-user", False), ("fuzz-admin", True)):
                    user = User(username=username, is_admin=is_admin)
                    session.add(user)
                    session.flush()
                    tokens[username] = issue_token(session, user)
            yield api_url, tokens
    disk_service.state.wiper.shutdown()


@dataclass
class Tally:
    operations: set[str] = field(default_factory=set)
    examples: int = 0
    failures: Counter = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    phases: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    stop_reasons: list[str] = field(default_factory=list)
    phase_seconds: Counter = field(default_factory=Counter)

    def add(self, event: st_events.ScenarioFinished) -> None:
        recorder = event.recorder
        if event.status != Status.SKIP and event.label:
            self.operations.add(event.label)
        self.examples += len(recorder.interactions)
        self.phases[event.phase.value] += len(recorder.interactions)
        for interaction in recorder.interactions.values():
            self.statuses[interaction.response.status_code if interaction.response is not None else "none"] += 1
        for checks in recorder.checks.values():
            for check in checks:
                if check.status == Status.FAILURE:
                    self.failures[check.name] += 1
                    if len(self.samples) < 20 and check.failure_info is not None:
                        info = check.failure_info
                        self.samples.append(f"[{event.phase.value}] {recorder.label}: {check.name}: "
                                            f"{info.failure.title}: {info.failure.message[:600]}\n  {info.code_sample}")


def _force_json_timeline(context, case, kwargs) -> None:
    """The timeline's SSE form lasts until a cluster settles; here none ever does (no worker), so
    the events operation is fuzzed as JSON."""
    if case.operation.path == EVENTS_PATH and isinstance(case.query, dict):
        case.query["stream"] = "false"
        case.query["follow"] = "false"


def run_schemathesis(api_url: str, identity: str, token: str | None, tally: Tally) -> None:
    """One schemathesis run over every operation as ``identity``: ``anonymous`` (no token: every
    operation but /health and /status must be a documented 401), ``user`` or ``admin``."""
    generation = {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True,
                  # The token is the configured one; missing and wrong ones are the anonymous run's.
                  "with-security-parameters": False}
    # Sequences along the links start from valid requests (a rejected launch leads nowhere).
    phases: dict = {"stateful": {"max-steps": STATEFUL_STEPS, "generation": {"mode": "positive"}}}
    operations: list[dict] = []
    if identity == "anonymous":
        generation["max-examples"] = ANONYMOUS_EXAMPLES
        phases = {"coverage": {"enabled": False}, "stateful": {"enabled": False}}
    elif identity == "user":  # as a user, admin operations only answer 403, whatever the input
        operations = [{"include-path-regex": "^/admin/", "generation": {"max-examples": USER_ADMIN_EXAMPLES},
                       "phases": {"coverage": {"enabled": False}}}]
    config = schemathesis.Config.from_dict({
        "operations": operations,
        "seed": SEED,
        "request-timeout": 20,
        "continue-on-failure": True,
        "suppress-health-check": ["all"],
        **({"auth": {"openapi": {"ApiToken": {"bearer": token}}}} if token else {}),
        "generation": generation,
        # Formats too: a timestamp without its UTC offset is no RFC 3339 date-time.
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS},
                   "response_schema_conformance": {"enabled": True, "validate-formats": True}},
        "phases": phases,
    })
    schema = schemathesis.openapi.from_url(f"{api_url}/openapi.json", config=config)
    assert schema.config.base_url is None or schema.config.base_url.startswith("http://127.0.0.1:")
    started: dict[str, float] = {}
    deadline = time.monotonic() + MAX_SECONDS_PER_RUN
    stream = from_schema(schema).execute()
    for event in stream:
        if time.monotonic() > deadline:  # a bound, not a budget: the run ends early only if it overruns
            stream.stop()
        if isinstance(event, st_events.ScenarioFinished):
            tally.add(event)
        elif isinstance(event, st_events.PhaseStarted):
            started[event.phase.name.value] = event.timestamp
        elif isinstance(event, st_events.PhaseFinished) and event.phase.name.value in started:
            tally.phase_seconds[event.phase.name.value] += round(event.timestamp - started[event.phase.name.value])
        elif isinstance(event, st_events.EngineFinished):
            tally.stop_reasons.append(event.stop_reason.value)
        elif isinstance(event, (st_events.NonFatalError, st_events.FatalError)):
            error = getattr(event, "info", None) or getattr(event, "exception", None) or event
            tally.errors.append(f"{getattr(event, 'label', '')}: {error}"[:800])


@pytest.mark.timeout(600)
def test_fuzz_every_operation_as_user_and_admin(fuzzed_api, capsys):
    api_url, tokens = fuzzed_api
    assert api_url.startswith("http://127.0.0.1:")
    document = httpx.get(f"{api_url}/openapi.json").json()
    operations = {f"{method.upper()} {path}" for path, methods in document["paths"].items() for method in methods}
    started = time.monotonic()
    tally = Tally()
    hook = schemathesis.hook("before_call")(_force_json_timeline)
    try:
        for identity in ("anonymous", "user", "admin"):
            run_schemathesis(api_url, identity, tokens.get(f"fuzz-{identity}"), tally)
    finally:
        schemathesis.hooks.unregister(hook)
    elapsed = time.monotonic() - started

    tested = tally.operations & operations
    server_errors = tally.failures["not_a_server_error"]
    schema_violations = tally.failures["response_schema_conformance"]
    others = {k: v for k, v in tally.failures.items() if k not in ("not_a_server_error", "response_schema_conformance")}
    with capsys.disabled():  # the summary belongs in the test log (CI), not only on failure
        print(f"\nAPI fuzz: {len(tested)}/{len(operations)} operations tested, {tally.examples} examples run, "
              f"{server_errors} server errors, {schema_violations} schema violations, other check failures "
              f"{others or 0}, errors {len(tally.errors)}, {elapsed:.0f} s")
        print(f"  examples by phase {dict(tally.phases)}; seconds by phase {dict(tally.phase_seconds)}; "
              f"runs (anonymous, user, admin) ended: {tally.stop_reasons}")
        print(f"  statuses {dict(sorted(tally.statuses.items(), key=str))}")
        for sample in tally.samples:
            print(sample)
        for error in tally.errors[:10]:
            print("ERROR", error)
    assert server_errors == 0 and schema_violations == 0
    assert not others and not tally.errors
    assert tested == operations, f"not tested: {sorted(operations - tested)}"
    assert tally.phases["stateful"] > 0, "the stateful phase (OpenAPI links) did not run"
