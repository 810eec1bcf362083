"""Connections tried from inside a member's container (network isolation tests)."""
import json

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
