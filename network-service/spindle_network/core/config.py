"""network-service settings (environment variables prefixed ``SPINDLE_``)."""
from spindle_common.settings import ServiceSettings


class Settings(ServiceSettings):
    service_name: str = "network-service"
    port: int = 8084
