"""spindle-node-agent settings (environment variables prefixed ``SPINDLE_``).

| variable | default | meaning |
|---|---|---|
| ``SPINDLE_NODE_NAME`` | required | this node's name in disk-service (and its Mesos agent's hostname) |
| ``SPINDLE_NODE_ADDRESS`` | required | the node's address on the fabric, registered as the node's address |
| ``SPINDLE_NODE_DISK_ROOT`` | ``/var/lib/spindle/disks`` | the folder this node's Spindle disks are mounted below |
| ``SPINDLE_DISK_SERVICE_URL`` | ``http://127.0.0.1:8083`` | disk-service |
| ``SPINDLE_NETWORK_SERVICE_URL`` | ``http://127.0.0.1:8084`` | network-service |
| ``SPINDLE_INTERNAL_TOKEN`` | the services' development token | the platform's internal token |
| ``SPINDLE_NODE_FABRIC_IFACE`` | ``fab0`` | interface in the node that is the parent of the macvlan pool networks |
| ``SPINDLE_NODE_CPUS``, ``SPINDLE_NODE_MEM_MB`` | unset | registered as the node's cpus and memory (when set) |
| ``SPINDLE_NODE_DISK_CLASSES`` | ``{}`` | JSON: disk class by filesystem label, mount point, device path or serial, |
| | | given to disk-service for disks it does not know yet (``{"spdl-n1-1": "ssd"}``) |
| ``SPINDLE_NODE_DISK_LABEL_PREFIX`` | ``spdl-`` | an unmounted xfs/ext4 filesystem labelled so is one of this node's |
| | | disks: mounted at ``<disk root>/<label>`` (``nosuid,nodev``) before discovery |
| ``SPINDLE_NODE_AGENT_INTERVAL_S`` | ``2`` | seconds between two iterations |
| ``SPINDLE_NODE_DISCOVERY_INTERVAL_S`` | ``30`` | seconds between two discoveries (lsblk posted to disk-service) |
| ``SPINDLE_NODE_WIPE_TIMEOUT_S`` | ``300`` | seconds one wipe command (umount, mkfs, mount) may take |
| ``SPINDLE_LOG_LEVEL`` | ``info`` | |
| ``DOCKER_HOST`` | Docker's default | this node's dockerd (read by ``docker.from_env()``) |
"""
import ipaddress
import posixpath

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from spindle_common.contracts import DiskClass

# disk-service treats a node registered with one of these addresses as its own machine and wipes its
# disks itself (its ``local_node_addresses``): a node agent registering one would race it.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SPINDLE_", extra="ignore")

    node_name: str = Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    node_address: str = Field(min_length=1, max_length=255)
    node_disk_root: str = "/var/lib/spindle/disks"
    disk_service_url: str = "http://127.0.0.1:8083"
    network_service_url: str = "http://127.0.0.1:8084"
    internal_token: str = "dev-insecure-internal-token"
    node_fabric_iface: str = Field(default="fab0", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$")
    node_cpus: float | None = Field(default=None, gt=0)
    node_mem_mb: int | None = Field(default=None, gt=0)
    node_disk_classes: dict[str, DiskClass] = {}
    # Unmounted filesystems labelled so are this node's disks: mounted below the disk root.
    node_disk_label_prefix: str = Field(default="spdl-", min_length=1, max_length=12,
                                        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    node_agent_interval_s: float = Field(default=2.0, gt=0, le=3600)
    node_discovery_interval_s: float = Field(default=30.0, gt=0)
    node_wipe_timeout_s: float = Field(default=300.0, gt=0)
    log_level: str = "info"

    @field_validator("node_address")
    @classmethod
    def _not_loopback(cls, value: str) -> str:
        value = value.strip()
        try:
            loopback = ipaddress.ip_address(value).is_loopback
        except ValueError:
            loopback = value.lower() in LOOPBACK_NAMES
        if loopback:
            raise ValueError(f"{value} is a loopback address: give the node's address on the fabric "
                             "(disk-service wipes the disks of loopback-addressed nodes itself)")
        return value

    @field_validator("node_disk_root")
    @classmethod
    def _absolute_folder(cls, value: str) -> str:
        normal = posixpath.normpath(value)
        if not value.startswith("/") or normal == "/":
            raise ValueError(f"{value!r} must be an absolute folder other than /")
        return normal

    @property
    def actor(self) -> str:
        """Who this agent is in disk-service's audit log."""
        return f"node-agent/{self.node_name}"
