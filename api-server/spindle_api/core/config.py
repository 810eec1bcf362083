"""api-server settings (environment variables prefixed ``SPINDLE_``)."""
from spindle_common.settings import ServiceSettings


class Settings(ServiceSettings):
    service_name: str = "api-server"
    port: int = 8080
