"""Principals and keytabs in the platform's Kerberos KDC (realm ``SPINDLE``, ``deploy/lib/kdc.sh``).

The orchestrator runs on the KDC's machine and makes principals with ``kadmin.local`` on its database
(there is no kadmind to reach over the network). Each principal gets random keys and needs
pre-authentication; a keytab is exported without new keys (``-norandkey``), so exporting one again (a
member relaunched or replaced) leaves the tickets and keytabs already handed out valid.

Names go into a kadmin query, so they are checked against a strict pattern first: ``primary`` or
``primary/instance`` of letters, digits, ``.``, ``_`` and ``-`` (an IP address or a cluster id as the
instance), no realm (always ``SPINDLE``).
"""
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

REALM = "SPINDLE"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}(/[A-Za-z0-9][A-Za-z0-9._-]{0,62})?")


class KerberosError(RuntimeError):
    """kadmin.local refused or failed (its own words, without any key)."""


def principal(name: str) -> str:
    """``name@SPINDLE``, once ``name`` is a principal name this module accepts (ValueError if not)."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a principal name: {name!r}")
    return f"{name}@{REALM}"


class Kdc:
    def __init__(self, kdc_dir: Path, timeout_s: float = 30.0):
        self._env = {**os.environ, "KRB5_CONFIG": str(kdc_dir / "krb5.conf"),
                     "KRB5_KDC_PROFILE": str(kdc_dir / "kdc.conf")}
        self._timeout_s = timeout_s

    def _kadmin(self, query: str) -> str:
        try:
            done = subprocess.run(["kadmin.local", "-q", query], env=self._env, capture_output=True, text=True,
                                  timeout=self._timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KerberosError(f"kadmin.local: {exc}") from exc
        # kadmin.local exits 0 even when a query fails; its errors go to stderr, beside two notices.
        errors = [line for line in done.stderr.splitlines()
                  if line and not line.startswith(("Authenticating as", "No policy specified"))]
        if done.returncode != 0 or errors:
            raise KerberosError(f"kadmin.local {query.split()[0]}: {' '.join(errors)[:500]}")
        return done.stdout

    def exists(self, name: str) -> bool:
        return principal(name) in self.principals(name)  # (a name is a glob matching only itself)

    def principals(self, pattern: str = "*") -> list[str]:
        """The principals matching a kadmin glob (``hdfs/*``); the pattern is checked like a name, with
        ``*`` allowed."""
        if not _NAME.fullmatch(pattern.replace("*", "x")):
            raise ValueError(f"not a principal pattern: {pattern!r}")
        lines = self._kadmin(f"listprincs {pattern}@{REALM}").splitlines()
        return [line.strip() for line in lines if line.strip().endswith(f"@{REALM}")]

    def keytab(self, names: Sequence[str], fresh: Sequence[str] = ()) -> bytes:
        """A keytab holding the keys of ``names``, each made first (random keys) if it does not exist;
        those in ``fresh`` that exist get new random keys first (whoever held the old ones is locked out)."""
        full = [principal(name) for name in names]
        if not full:
            raise ValueError("a keytab needs at least one principal")
        for name, full_name in zip(names, full, strict=True):
            if not self.exists(name):
                self._kadmin(f"addprinc -randkey +requires_preauth {full_name}")
            elif name in fresh:
                self._kadmin(f"cpw -randkey {full_name}")
        with tempfile.TemporaryDirectory(prefix="spindle-keytab-") as folder:
            path = Path(folder) / "keytab"
            self._kadmin(f"ktadd -norandkey -k {path} {' '.join(full)}")
            return path.read_bytes()

    def remove(self, names: Sequence[str]) -> None:
        """Deletes the principals that exist among ``names`` (their keytabs stop working)."""
        for name in names:
            if self.exists(name):
                self._kadmin(f"delprinc -force {principal(name)}")

    def remove_matching(self, patterns: Sequence[str]) -> list[str]:
        """Deletes every principal matching one of the kadmin globs; the principals deleted."""
        gone = [name for pattern in patterns for name in self.principals(pattern)]
        for name in gone:
            self._kadmin(f"delprinc -force {name}")
        return gone
