"""HDFS with Kerberos (``settings.kerberos``) through the public REST API on the real stack and the
platform's own KDC: one NameNode + 2 DataNodes → RUNNING, every daemon logged in from the keytab the
orchestrator made; a job (the cluster's client principal, its ticket got from its keytab) writes a file
of several blocks over RPC and SASL-authenticated block transfers and reads it back identical. Refused:
a caller without a ticket who names the superuser (``HADOOP_USER_NAME=hdfs``), the same over WebHDFS
(``user.name=hdfs``) and the NameNode's JMX from the platform's host, and a caller holding a valid
ticket of another cluster's principal (made in the same KDC) with a client configuration that maps it
to ``hdfs``. A holder of the client principal's keys lists the file over WebHDFS with SPNEGO. DELETE →
DESTROYED and the cluster's principals (its NameNode's ``HTTP/<IP>`` too) are gone from the KDC.
"""
import base64
import json
import os
import re
import subprocess
import uuid

import httpx
import pytest

from spindle_orchestrator.kerberos import Kdc
from tests.conftest import STATE_DIR
from tests.support.jobs import wait_job
from tests.support.live_users import live_user
from tests.support.through_restarts import retrying, settled

LAUNCH = {
    "roles": {"namenode": {"cpus": 0.25, "mem_mb": 768, "disks": {"hdd": 0, "ssd": 1}},
              "datanode": {"count": 2, "cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 1}}},
    "settings": {"replication": 2, "block_size_mb": 1, "ha": False, "kerberos": True},
    "wait_for_resources": True,
}
FILE_BYTES = 8 * 1024 * 1024

# The job: its own writes and reads (the `hadoop` command gets the ticket of SPINDLE_PRINCIPAL from the
# driver's keytab first), then two attacks on the same NameNode, each printing its exit code and its
# last line. $1: the keytab of another cluster's principal, base64; $2: that principal.
JOB = r"""set -uo pipefail
head -c {size} /dev/urandom > /tmp/data.bin
hdfs dfs -mkdir -p /spindle && hdfs dfs -put -f /tmp/data.bin /spindle/data.bin \
  && hdfs dfs -get /spindle/data.bin /tmp/back.bin || exit 1
echo "WROTE $(sha256sum < /tmp/data.bin | cut -c1-64) READ $(sha256sum < /tmp/back.bin | cut -c1-64)"
echo "BLOCKS $(hdfs fsck /spindle/data.bin -files -blocks 2>/dev/null | grep -c 'len=')"
echo "PRINCIPAL $(KRB5CCNAME=FILE:/tmp/spindle.ccache klist | sed -n 's/^Default principal: //p')"
# No ticket at all, naming the superuser: the keytab is left out, the cache is empty.
out="$(env SPINDLE_KEYTAB= KRB5CCNAME=FILE:/tmp/nobody.cc HADOOP_USER_NAME=hdfs \
  HADOOP_OPTS="-Djava.security.krb5.conf=$HADOOP_CONF_DIR/krb5.conf" hdfs dfs -ls / 2>&1)"
echo "NOTICKET $? $(tail -n 1 <<< "$out")"
# Another cluster's principal with a valid ticket, and a client configuration that maps every
# principal to its first part (Hadoop's DEFAULT rule: hdfs/<other>@SPINDLE -> hdfs).
base64 -d <<< "$1" > /tmp/other.keytab
mkdir -p /tmp/other-conf && cp "$HADOOP_CONF_DIR"/* /tmp/other-conf/
rule='<name>hadoop.security.auth_to_local</name><value>'
sed -i "s|$rule[^<]*</value>|${rule}DEFAULT</value>|" /tmp/other-conf/core-site.xml
KRB5_CONFIG="$HADOOP_CONF_DIR/krb5.conf" KRB5CCNAME=FILE:/tmp/other.cc kinit -k -t /tmp/other.keytab "$2" \
  && echo "OTHER-TICKET $(KRB5CCNAME=FILE:/tmp/other.cc klist | sed -n 's/^Default principal: //p')"
out="$(env SPINDLE_KEYTAB= KRB5CCNAME=FILE:/tmp/other.cc HADOOP_CONF_DIR=/tmp/other-conf \
  HADOOP_OPTS="-Djava.security.krb5.conf=$HADOOP_CONF_DIR/krb5.conf" hdfs dfs -ls / 2>&1)"
echo "OTHER $? $(tail -n 1 <<< "$out")"
"""


@pytest.fixture
def user(database_url):
    with live_user(database_url, "kerberos") as client:
        yield client


@pytest.fixture
def kdc():
    return Kdc(STATE_DIR / "kdc")


@pytest.fixture
def other_principal(kdc):
    """A principal named as another cluster's would be (``hdfs/<its id>``), with its keytab."""
    name = f"hdfs/c{uuid.uuid4().hex[:10]}"
    keytab = kdc.keytab([name])
    yield name, keytab
    kdc.remove([name])


def line(stdout: str, key: str) -> list[str]:
    found = re.search(rf"^{key} (.*)$", stdout, re.MULTILINE)
    assert found, f"no {key} line in the job's output:\n{stdout}"
    return found.group(1).split(" ", 1) if key in ("NOTICKET", "OTHER") else found.group(1).split()


def test_kerberos_hdfs_serves_its_own_principals_only(user, kdc, other_principal, tmp_path):
    cluster = retrying(lambda: user.launch("hadoop", "3.3", LAUNCH))
    try:
        cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=900)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        # Every member logged in as the cluster's service principal (its job's client one comes with it),
        # the NameNode's web server as HTTP/<its IP>.
        namenode = next(m for m in cluster["members"] if m["role"] == "namenode")
        assert kdc.principals(f"*/{cluster['id']}") == [f"hdfs/{cluster['id']}@SPINDLE"]
        assert kdc.exists(f"HTTP/{namenode['ip']}") and kdc.exists(f"HTTP/namenode-1.{cluster['id']}")

        # WebHDFS (and the rest of the NameNode's web server) from the platform's host, naming the
        # superuser: no SPNEGO, no answer.
        for path, params in (("/webhdfs/v1/", {"op": "LISTSTATUS", "user.name": "hdfs"}), ("/jmx", {})):
            refused = httpx.get(f"http://{namenode['ip']}:9870{path}", params=params, timeout=30)
            assert refused.status_code == 401, (path, refused.status_code, refused.text[:300])
            assert "FileStatuses" not in refused.text and "beans" not in refused.text

        main = tmp_path / "kerberos.sh"
        main.write_text(JOB.replace("{size}", str(FILE_BYTES)))
        name, keytab = other_principal
        job = retrying(lambda: user.submit(cluster, main, args=[base64.b64encode(keytab).decode(), name]))
        job = wait_job(user, cluster, job, timeout=600, every=2)
        stdout = job["stdout"]
        print(stdout)
        wrote, read = line(stdout, "WROTE")[0], line(stdout, "WROTE")[2]
        assert wrote == read
        assert int(line(stdout, "BLOCKS")[0]) == FILE_BYTES // (1024 * 1024)
        assert line(stdout, "PRINCIPAL") == [f"client/{cluster['id']}@SPINDLE"]
        code, last = line(stdout, "NOTICKET")
        assert code != "0" and "Client cannot authenticate via:[TOKEN, KERBEROS]" in last, last
        # The KDC gave the other principal its ticket; this cluster's NameNode refused it.
        assert line(stdout, "OTHER-TICKET") == [f"{name}@SPINDLE"]
        code, last = line(stdout, "OTHER")
        assert code != "0" and "Found" not in last, last

        # A holder of the cluster's client keys (here the platform's host, with a ticket from its keytab)
        # lists the job's file over WebHDFS with SPNEGO.
        keytab = tmp_path / "client.keytab"
        keytab.write_bytes(kdc.keytab([f"client/{cluster['id']}"]))
        env = {**os.environ, "KRB5_CONFIG": str(STATE_DIR / "kdc" / "krb5.conf"), "KRB5CCNAME": f"FILE:{tmp_path}/cc"}
        subprocess.run(["kinit", "-k", "-t", str(keytab), f"client/{cluster['id']}"], env=env, check=True, timeout=30)
        listed = subprocess.run(["curl", "-s", "--negotiate", "-u", ":", "-w", "\n%{http_code}",
                                 f"http://{namenode['ip']}:9870/webhdfs/v1/spindle?op=LISTSTATUS"],
                                env=env, capture_output=True, text=True, timeout=60, check=False)
        body, _, status = listed.stdout.rpartition("\n")
        assert status == "200", (status, body[:300], listed.stderr)
        assert [f["pathSuffix"] for f in json.loads(body)["FileStatuses"]["FileStatus"]] == ["data.bin"]
    finally:
        retrying(lambda: user.delete(cluster))
        settled(user, cluster, ("DESTROYED",), timeout=300)
    assert kdc.principals(f"*/{cluster['id']}") == [] and not kdc.exists(f"HTTP/{namenode['ip']}")
