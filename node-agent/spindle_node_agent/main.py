"""``spindle-node-agent``: runs :class:`spindle_node_agent.agent.NodeAgent` until SIGTERM or SIGINT.
Settings: :mod:`spindle_node_agent.config`."""
import logging
import signal
import sys
import threading

from pydantic import ValidationError

from spindle_node_agent.agent import NodeAgent
from spindle_node_agent.config import Settings


def run() -> None:
    try:
        settings = Settings()  # type: ignore[call-arg]  # the required ones come from the environment
    except ValidationError as exc:
        problems = "; ".join(f"SPINDLE_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        print(f"spindle-node-agent: bad settings: {problems}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not every heartbeat
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    NodeAgent(settings).run_forever(stop)
    logging.getLogger("spindle.node_agent").info("node agent stopped")
