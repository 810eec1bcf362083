"""The orchestrator's principals and keytabs in the platform's own KDC (deploy/lib/kdc.sh), used for
real: a keytab it exports logs in (kinit) and gets service tickets (kvno) from the running krb5kdc."""
import os
import subprocess
import uuid

import pytest

from spindle_orchestrator.kerberos import Kdc, KerberosError
from tests.conftest import STATE_DIR

KDC_DIR = STATE_DIR / "kdc"


@pytest.fixture
def kdc(platform_env):
    assert (KDC_DIR / "principal").exists(), "deploy/up makes the KDC's database"
    return Kdc(KDC_DIR)


@pytest.fixture
def names(kdc):
    """Principal names of this test only (a fresh cluster-like instance), removed afterwards."""
    made: list[str] = []
    yield made
    kdc.remove(made)


def krb(tmp_path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KRB5_CONFIG": str(KDC_DIR / "krb5.conf"), "KRB5CCNAME": f"FILE:{tmp_path}/ccache"}
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)


def test_a_keytab_logs_in_and_gets_tickets_and_outlives_a_second_export(kdc, names, tmp_path):
    cluster = f"ct{uuid.uuid4().hex[:10]}"
    names += [f"hdfs/{cluster}", "HTTP/172.31.200.250"]
    first = tmp_path / "first.keytab"
    first.write_bytes(kdc.keytab(names))
    assert kdc.principals(f"*/{cluster}") == [f"hdfs/{cluster}@SPINDLE"]

    login = krb(tmp_path, "kinit", "-k", "-t", str(first), f"hdfs/{cluster}")
    assert login.returncode == 0, login.stderr
    ticket = krb(tmp_path, "kvno", "HTTP/172.31.200.250")
    assert ticket.returncode == 0 and "kvno = 1" in ticket.stdout, ticket.stderr
    # Every principal needs pre-authentication: the KDC gives nothing to a bare AS request.
    assert "REQUIRES_PRE_AUTH" in subprocess.run(
        ["kadmin.local", "-q", f"getprinc hdfs/{cluster}"], capture_output=True, text=True, check=True,
        env={**os.environ, "KRB5_CONFIG": str(KDC_DIR / "krb5.conf"), "KRB5_KDC_PROFILE": str(KDC_DIR / "kdc.conf")},
    ).stdout

    # Exporting again (a relaunched member) keeps the keys: the first keytab still logs in.
    kdc.keytab(names)
    again = krb(tmp_path, "kinit", "-k", "-t", str(first), f"hdfs/{cluster}")
    assert again.returncode == 0, again.stderr


def test_a_removed_principal_logs_in_no_more(kdc, names, tmp_path):
    name = f"hdfs/ct{uuid.uuid4().hex[:10]}"
    names.append(name)
    keytab = tmp_path / "keytab"
    keytab.write_bytes(kdc.keytab([name]))
    kdc.remove([name])
    assert not kdc.exists(name)
    login = krb(tmp_path, "kinit", "-k", "-t", str(keytab), name)
    assert login.returncode != 0 and "not found in Kerberos database" in login.stderr


@pytest.mark.parametrize("name", [
    "hdfs/c1 -pw secret",  # a second kadmin argument
    "hdfs/c1@OTHER.REALM",  # another realm
    "hdfs/c1/extra",
    "-randkey",
    "",
    "hdfs/",
    "a" * 64,
])
def test_a_name_that_is_no_principal_name_reaches_no_kadmin(kdc, name):
    with pytest.raises(ValueError):
        kdc.keytab([name])


def test_kadmin_s_own_errors_are_raised(tmp_path):
    broken = Kdc(tmp_path)  # no database, no configuration there
    with pytest.raises(KerberosError):
        broken.principals()


def test_a_fresh_export_locks_out_the_keys_handed_out_before(kdc, names, tmp_path):
    """A principal named after an IP gets new keys when the next member is made with that IP."""
    names.append("HTTP/172.31.200.251")
    old = tmp_path / "old.keytab"
    old.write_bytes(kdc.keytab(names))
    new = tmp_path / "new.keytab"
    new.write_bytes(kdc.keytab(names, fresh=names))
    assert krb(tmp_path, "kinit", "-k", "-t", str(new), names[0]).returncode == 0
    stale = krb(tmp_path, "kinit", "-k", "-t", str(old), names[0])
    assert stale.returncode != 0, stale.stdout
