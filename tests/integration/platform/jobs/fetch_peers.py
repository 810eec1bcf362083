"""A static-web job: fetch each member's page (IPs as arguments), print them, save them as output."""
import sys
import urllib.request

pages = [urllib.request.urlopen(f"http://{ip}:8000/index.html", timeout=10).read().decode() for ip in sys.argv[1:]]
print("\n".join(pages))
with open("/job/output/pages.html", "w") as out:
    out.write("\n".join(pages))
