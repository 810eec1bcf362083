"""spindle-node-agent: what the control plane's host does for its own disks and floating-IP networks,
done by each node on itself (see :mod:`spindle_node_agent.agent`)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spindle-node-agent")
except PackageNotFoundError:  # not installed (run from a checkout)
    __version__ = "0.0.0"
