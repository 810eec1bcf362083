"""scheduler settings (environment variables prefixed ``SPINDLE_``)."""
from spindle_common.settings import ServiceSettings


class Settings(ServiceSettings):
    service_name: str = "scheduler"
    port: int = 8082
