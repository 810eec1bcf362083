"""scheduler settings (environment variables prefixed ``SPINDLE_``)."""
from spindle_common.settings import ServiceSettings


class Settings(ServiceSettings):
    service_name: str = "scheduler"
    port: int = 8082
    # Mesos master (host:port); empty = run without a framework (placement dry-runs only).
    mesos_master: str = ""
    # The framework's credential (HTTP Basic on the scheduler API; FrameworkInfo.principal). Empty:
    # none, for a master that does not authenticate frameworks.
    mesos_principal: str = ""
    mesos_secret: str = ""
    disk_service_url: str = "http://127.0.0.1:8083"
    network_service_url: str = "http://127.0.0.1:8084"
    # What the Mesos agent runs to start Spindle's executor for a task.
    executor_command: str = "spindle-mesos-executor"
    # Seconds a declined offer is not re-offered to us.
    refuse_seconds: float = 5.0
    # Single-machine mode: Docker is local, so the reconciler also removes orphaned containers.
    reap_local_containers: bool = True
    # Longest wait between two attempts at a release an ended task owes (``mesos/releases.py``).
    release_retry_max_s: float = 15.0
    # The sweep (``mesos/sweep.py``): how often it compares disk-service's allocations with the tasks
    # (0: never on its own; ``POST /internal/sweep`` runs it once), and how old a hold must be first.
    disk_sweep_interval_s: float = 60.0
    disk_sweep_grace_s: float = 30.0
