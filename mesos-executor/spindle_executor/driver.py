"""pymesos' executor driver, authenticating to its agent as Mesos executors do when the agent runs
with ``--authenticate_http_executors``: the token the agent gave the executor in
``MESOS_EXECUTOR_AUTHENTICATION_TOKEN`` goes with every executor API call as
``Authorization: Bearer …`` (no token in the environment: no header, as before)."""
import os
from typing import Any

from pymesos import MesosExecutorDriver

TOKEN_ENV = "MESOS_EXECUTOR_AUTHENTICATION_TOKEN"


class ExecutorDriver(MesosExecutorDriver):
    def __init__(self, executor: Any, **kwargs: Any):
        super().__init__(executor, **kwargs)
        token = os.environ.get(TOKEN_ENV, "")
        self.authorization = f"Bearer {token}" if token else ""

    def gen_request(self) -> bytes:
        """The SUBSCRIBE request pymesos writes by hand, with the Authorization header added."""
        request = super().gen_request()
        if not self.authorization:
            return request
        head, separator, body = request.partition(b"\r\n\r\n")
        return head + f"\r\nAuthorization: {self.authorization}".encode() + separator + body

    def _send(self, body: Any, path: str = "/api/v1/executor", method: str = "POST",
              headers: dict[str, str] | None = None) -> Any:
        headers = dict(headers or {})  # (pymesos' default is a shared dict it writes into)
        if self.authorization:
            headers["Authorization"] = self.authorization
        return super()._send(body, path, method, headers)
