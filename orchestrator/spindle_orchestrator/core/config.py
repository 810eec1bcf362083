"""orchestrator settings (environment variables prefixed ``SPINDLE_``)."""
import ipaddress
import re
from pathlib import Path
from typing import Any

from pydantic import field_validator
from sqlalchemy.engine import make_url

from spindle_common.settings import ServiceSettings
from spindle_orchestrator.render import platform_context

_REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
JVM_OPTION = re.compile(r"-[A-Za-z0-9][A-Za-z0-9:+=._/-]*")


class Settings(ServiceSettings):
    service_name: str = "orchestrator"
    port: int = 8081
    scheduler_url: str = "http://127.0.0.1:8082"
    disk_service_url: str = "http://127.0.0.1:8083"
    network_service_url: str = "http://127.0.0.1:8084"
    catalog_root: Path = _REPO_CATALOG
    # Port of every node's Mesos agent (it puts a resized cluster's re-rendered files into its members).
    mesos_agent_port: int = 5051
    # IP pool the members' floating IPs come from; empty = no floating IPs.
    network_pool: str = "default"
    # Deadlines per step (seconds); past one, the launch fails with a reason and cleans up.
    scheduling_timeout_s: float = 120.0
    deploying_timeout_s: float = 600.0
    configuring_timeout_s: float = 120.0
    # The database the scheduler notifies task changes in (``spindle_tasks``); empty = this service's
    # own (one database for the platform, as deploy/up sets it up).
    scheduler_database_url: str = ""
    # How often the worker looks for tasks the scheduler still runs for clusters this
    # orchestrator's database has settled or does not know (e.g. after restoring a backup).
    sweep_interval_s: float = 30.0
    # The same sweep frees the IPs of settled clusters and finished jobs held at least this long.
    ip_sweep_grace_s: float = 60.0
    # Where jobs' files and outputs live (``<state_dir>/jobs/<job id>/``), and how long a job may run.
    state_dir: Path = Path("/var/lib/spindle")
    job_timeout_s: float = 3600.0
    # What is kept of a job's driver: the end of each log (SPINDLE_JOB_LOG_MAX_BYTES, marked when cut)
    # and its /job/output (SPINDLE_JOB_OUTPUT_MAX_MB; a larger one is refused and the job says so).
    job_log_max_bytes: int = 1_000_000
    job_output_max_mb: int = 256
    # This orchestrator's address as the nodes reach it: a job driver's executor fetches the job's
    # files and puts its result back there (``/internal/jobs/…``). Empty: http://<advertise_host>:<port>
    # (http://127.0.0.1:8081 on a single machine).
    public_url: str = ""
    # Cpus a job's driver holds in offers (its container may use up to the manifest's ``jobs.cpus``
    # when the node has them idle): a driver mostly waits on its cluster. 0: hold the manifest's cpus.
    job_cpus: float = 0.05
    # Quotas of users without their own (an admin sets those: PUT /quotas/{owner}); clusters not
    # destroyed, their members' cpus, memory and disks per class, floating IPs (members and job drivers).
    default_quota_clusters: int = 10
    default_quota_cpus: float = 32.0
    default_quota_mem_mb: int = 65536
    default_quota_disks: int = 16
    default_quota_floating_ips: int = 32
    # JVM options added to every JVM the products start — members' daemons and tools, job drivers, the
    # tasks and executors they start (each manifest puts ``platform.jvm_options`` where its product
    # takes them) — for an admin's GC or JIT choice; empty: the JVMs' own defaults. Only options, each
    # ``-`` then letters, digits and ``:+=._/-`` (they land in command lines and XML files as they are).
    # `make test` sets -XX:TieredStopAtLevel=1 (docs/TESTING.md).
    product_jvm_options: str = ""
    # The platform's Kerberos KDC (deploy/lib/kdc.sh) as members and job drivers reach it (an IP
    # address; its port is 88); empty: no KDC, and no cluster gets principals. Its database is on this
    # machine (``kdc_dir``), where the orchestrator makes principals with kadmin.local.
    kdc_address: str = ""

    @field_validator("product_jvm_options")
    @classmethod
    def _jvm_options(cls, value: str) -> str:
        words = value.split()
        bad = [w for w in words if not JVM_OPTION.fullmatch(w)]
        if bad:
            raise ValueError(f"not JVM options: {' '.join(bad)} (each '-' then letters, digits, ':+=._/-')")
        return " ".join(words)

    @field_validator("kdc_address")
    @classmethod
    def _kdc_address(cls, value: str) -> str:
        return str(ipaddress.IPv4Address(value)) if value else ""

    @property
    def platform(self) -> dict[str, Any]:
        """What the products' templates see of the platform."""
        return platform_context(self.product_jvm_options, self.kdc_address)

    @property
    def nodes_url(self) -> str:
        """Where the nodes reach this orchestrator (``public_url``, or its own address and port)."""
        return (self.public_url or f"http://{self.advertise_host}:{self.port}").rstrip("/")

    @property
    def kdc_dir(self) -> Path:
        return self.state_dir / "kdc"

    @property
    def jobs_dir(self) -> Path:
        return self.state_dir / "jobs"

    @property
    def origin(self) -> str:
        """This orchestrator's name for the scheduler: its database (one database, one set of clusters)."""
        url = make_url(self.database_url)
        return f"orchestrator@{url.host}:{url.port or 5432}/{url.database}"
