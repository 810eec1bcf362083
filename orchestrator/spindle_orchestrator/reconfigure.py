"""Telling a running member its new peers (after a resize): its config files rendered again are put
into its container by its node's Mesos agent, which then runs the product's ``reload`` command in
it (``PUT /spindle/v1/containers/{name}/files`` on the agent: Spindle containers only, the internal
token). The node's address comes from disk-service, the agents' port from the settings.

A member whose node does not answer keeps its old files (the timeline says so); the scheduler keeps
the new container, so a relaunch of that member starts with the new ones."""
import json
from typing import Any

import httpx

from spindle_common.clients import DiskClient
from spindle_common.contracts import ContainerSpec
from spindle_common.errors import ApiError
from spindle_common.tls import default_tls
from spindle_orchestrator.models import Member

# How long a product's reload may take on the node (the agent kills it then).
RELOAD_TIMEOUT_S = 60


class Reconfigurer:
    def __init__(self, disks: DiskClient, agent_port: int, internal_token: str):
        self.disks, self.agent_port, self.token = disks, agent_port, internal_token

    def apply(self, member: Member, container: ContainerSpec, reload: list[str] | None) -> str:
        """Put the member's new files into its container and run ``reload``; what happened, in words."""
        if not member.node:
            return "not on a node now: it starts with the new files when it runs again"
        try:
            address = self.disks.request("GET", f"/nodes/{member.node}")["address"]
            answer = httpx.put(f"http://{address}:{self.agent_port}/spindle/v1/containers/spindle-{member.member_id}"
                               "/files", json=files_request(container, reload),
                               headers={"Authorization": f"Bearer {self.token}"}, timeout=RELOAD_TIMEOUT_S + 30,
                               verify=default_tls())
        except (ApiError, httpx.HTTPError) as exc:
            return f"its node {member.node} could not be asked ({type(exc).__name__}): old files kept until it restarts"
        if answer.status_code != 200:
            return f"its node {member.node} refused the new files ({answer.status_code}: {answer.text[:300]})"
        done = answer.json()
        if done.get("reload_exit_code") not in (None, 0):
            output = str(done.get("reload_output", ""))[-300:]
            return f"new files in place; reload exited {done['reload_exit_code']}: {output}"
        return "new files in place" + ("; reloaded" if reload else "")


    def run(self, member: Member, argv: list[str], timeout_s: int = RELOAD_TIMEOUT_S) -> tuple[int | None, str]:
        """Run ``argv`` in the member (its node's agent's exec) to its end: its exit code (None when it
        could not run or its end is unknown) and the end of its output."""
        try:
            address = self.disks.request("GET", f"/nodes/{member.node}")["address"]
            with httpx.stream("POST", f"http://{address}:{self.agent_port}/spindle/v1/containers/"
                              f"spindle-{member.member_id}/exec", json={"argv": argv, "timeout_s": timeout_s},
                              headers={"Authorization": f"Bearer {self.token}"},
                              timeout=httpx.Timeout(10, read=timeout_s + 30), verify=default_tls()) as answer:
                if answer.status_code != 200:
                    return None, f"{answer.status_code}: {answer.read().decode(errors='replace')[:300]}"
                output, code = "", None
                for line in answer.iter_lines():
                    event = json.loads(line) if line else {}
                    if "stream" in event:
                        output = (output + event["data"])[-2000:]
                    elif "exit_code" in event:
                        code = event["exit_code"]
                return code, output
        except (ApiError, httpx.HTTPError, ValueError) as exc:
            return None, f"its node could not be asked ({type(exc).__name__})"


def files_request(container: ContainerSpec, reload: list[str] | None) -> dict[str, Any]:
    """The agent's body: the files by path, and the reload argv (with its timeout) if the product has one."""
    body: dict[str, Any] = {"files": dict(container.files)}
    if reload:
        body["reload"] = {"argv": list(reload), "timeout_s": RELOAD_TIMEOUT_S}
    return body
