"""disk-service settings (environment variables prefixed ``SPINDLE_``)."""
from spindle_common.settings import ServiceSettings


class Settings(ServiceSettings):
    service_name: str = "disk-service"
    port: int = 8083
    # A node registered with one of these addresses is this machine: disk-service runs lsblk and
    # wipes its disks itself. Other nodes post their lsblk output and report their wipes.
    local_node_addresses: list[str] = ["127.0.0.1", "localhost", "::1"]
    # Disks wiped in parallel in the background.
    wipe_workers: int = 4
    # Seconds one wipe command (umount, mkfs, mount) may take.
    wipe_command_timeout: float = 300.0
