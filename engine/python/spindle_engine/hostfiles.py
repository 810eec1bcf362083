"""An executor's files on its host: inputs that may live on other hosts (fetched, FETCH.md),
`@work/` outputs striped over the host's work dirs, and function files."""

import itertools
import os

from .fileserver import fetch, parse_url

WORK = "@work/"


class HostFiles:
    def __init__(self, advertise, work_dirs, fetch_dir):
        self.advertise = advertise
        self.work_dirs = work_dirs
        self.fetch_dir = fetch_dir
        self._outputs = itertools.count()
        self._fetches = itertools.count()
        self._functions = {}

    def _remote(self, path):
        """(address, local path): address is None for a path readable here."""
        if not path.startswith("tcp://"):
            return None, path
        address, local = parse_url(path)
        return (None, local) if address == self.advertise else (address, local)

    def _fetch(self, url, suffix, offset=0, length=-1):
        os.makedirs(self.fetch_dir, exist_ok=True)
        dest = os.path.join(self.fetch_dir,
                            f"fetch-{os.getpid()}-{next(self._fetches)}{suffix}")
        fetch(url, dest, offset, length)
        return dest

    def input(self, path, fetched):
        """A local path for input `path`; files fetched for the task are added to `fetched`."""
        address, local = self._remote(path)
        if address is None:
            return local
        dest = self._fetch(path, ".bin")
        fetched.append(dest)
        return dest

    def text_input(self, path, offset, length, fetched):
        """(local path, offset, length) of a text split; a remote one is fetched as its bytes."""
        address, local = self._remote(path)
        if address is None:
            return local, offset, length
        dest = self._fetch(path, ".txt", offset, length)
        fetched.append(dest)
        return dest, 0, length

    def function_file(self, path):
        """A local copy of a function file (fetched once per process)."""
        address, local = self._remote(path)
        if address is None:
            return local
        copy = self._functions.get(path)
        if copy is None:
            copy = self._functions[path] = self._fetch(path, "-" + os.path.basename(local))
        return copy

    def output(self, path):
        """The real path of output `path` (`@work/x` -> a work dir, striped); parents made."""
        if path.startswith(WORK):
            base = self.work_dirs[next(self._outputs) % len(self.work_dirs)]
            path = os.path.join(base, path[len(WORK):])
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return path
