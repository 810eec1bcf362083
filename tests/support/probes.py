"""Connections tried from inside a member's container (network isolation tests), and from this host."""
import json
import socket

HTTP_PORT = 8000
# A probe run inside a container: one HTTP GET per address, "ok <status>" or "refused <error>".
PROBE = """
import json, sys, urllib.request
out = {}
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=3) as r:
            out[url] = "ok %d" % r.status
    except Exception as e:
        out[url] = "refused %s" % type(e).__name__
print(json.dumps(out))
"""


def url(member: dict) -> str:
    """A static-web member's page."""
    return f"http://{member['ip']}:{HTTP_PORT}/"


def probe(container, *urls: str) -> dict[str, str]:
    """What ``container`` gets for each URL, from inside it."""
    code, out = container.exec_run(["python3", "-c", PROBE, *urls])
    assert code == 0, out.decode(errors="replace")
    return json.loads(out.decode().strip().splitlines()[-1])


def reached(results: dict[str, str]) -> dict[str, bool]:
    return {u: r.startswith("ok") for u, r in results.items()}


# A TCP probe run inside a container: a connection to each host:port at once (threads), "ok" or
# "refused <error>" (a dropped SYN times out after 3 s).
TCP_PROBE = """
import json, socket, sys
from concurrent.futures import ThreadPoolExecutor
def attempt(target):
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        return "ok"
    except Exception as e:
        return "refused %s" % type(e).__name__
with ThreadPoolExecutor(16) as pool:
    print(json.dumps(dict(zip(sys.argv[1:], pool.map(attempt, sys.argv[1:])))))
"""


def connects(container, *targets: str) -> dict[str, bool]:
    """Whether ``container`` opens a TCP connection to each ``host:port``, from inside it."""
    code, out = container.exec_run(["python3", "-c", TCP_PROBE, *targets])
    assert code == 0, out.decode(errors="replace")
    return reached(json.loads(out.decode().strip().splitlines()[-1]))


def accepts(target: str) -> bool:
    """Whether ``host:port`` takes a TCP connection from this host (the platform) within 5 s."""
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        return True
    except OSError:
        return False
