"""HDFS through WebHDFS (pure HTTP: no JVM, no native client in the engine).

`hdfs://host:port/path` and `hdfs:///path` name files of the NameNode whose WebHDFS address is
env `SPINDLE_HDFS_WEBHDFS` (e.g. `http://10.0.0.5:9870`; Spindle sets it in the members and
drivers of an engine cluster bound to an HDFS cluster). An HDFS with high availability has two
NameNodes, one active: the variable lists both, comma-separated, and each request goes to the one
that answered last, to the other when it is unreachable or standby (`StandbyException`), for up
to FAILOVER_S while a failover is under way. `hdfs://spindle/path` (Hadoop's nameservice) names
the configured HDFS too. The RPC port of the URL (8020) is not
WebHDFS's, so the address comes from configuration. An `hdfs://` URL naming another host goes
to that host's default WebHDFS port (9870). `webhdfs://host:port/path` (Hadoop's scheme) names
the WebHDFS address itself. Requests carry `user.name=` (simple authentication): env
`SPINDLE_HDFS_USER`, default `hdfs`.

Driver and executors pass a file among themselves as `webhdfs://user@host:port/path`
(`HdfsPath.url`), so an executor needs no configuration to read or write it. Reads and writes
go to a DataNode (OPEN and CREATE redirect there); an executor reads through a DataNode on its
own node when it knows one (`SPINDLE_NODE`, `SPINDLE_HDFS_DATANODE_NODES`), so a node-local task
reads from local disks.
"""

import http.client
import json
import os
import socket
import threading
from dataclasses import dataclass
from time import monotonic, sleep  # module names: the tests replace them here only
from urllib.parse import quote, unquote, urlencode, urlsplit

from .errors import TaskFailure

SCHEMES = ("hdfs://", "webhdfs://")
WEBHDFS_PORT = 9870
DEFAULT_USER = "hdfs"
TIMEOUT_S = 60
FAILOVER_S = 60  # how long requests go back and forth between two NameNodes while neither is active
NAMESERVICE = "spindle"  # the HA nameservice of a Spindle HDFS (hdfs://spindle/path)
_CHUNK = 1 << 20


def is_hdfs(path):
    """Whether `path` names an HDFS file (`hdfs://` or `webhdfs://`)."""
    return isinstance(path, str) and path.startswith(SCHEMES)


class HdfsError(TaskFailure, OSError):
    """WebHDFS refused a request or could not be reached; `exception` is Hadoop's class name
    (e.g. FileNotFoundException) when the NameNode or DataNode said why."""

    kind = "HDFS_ERROR"

    def __init__(self, message, exception="", status=None):
        super().__init__(message)
        self.exception = exception
        self.status = status


@dataclass(frozen=True)
class HdfsPath:
    """A file of one HDFS: its WebHDFS `host`, `port`, the `user` to act as, the absolute `path`."""

    host: str
    port: int
    user: str
    path: str

    @property
    def url(self):
        """`webhdfs://user@host:port/path`: how the engine hands the file to executors."""
        return f"webhdfs://{quote(self.user, safe='')}@{self.host}:{self.port}{quote(self.path)}"

    def child(self, path):
        """The file `path` (absolute) of the same HDFS."""
        return HdfsPath(self.host, self.port, self.user, path)


def webhdfs_addresses(env=None):
    """[(host, port)] of env SPINDLE_HDFS_WEBHDFS: one NameNode, or an HA pair (comma-separated);
    [] when unset."""
    env = os.environ if env is None else env
    value = (env.get("SPINDLE_HDFS_WEBHDFS") or "").strip()
    addresses = []
    for item in filter(None, (v.strip() for v in value.split(","))):
        parts = urlsplit(item if "://" in item else f"http://{item}")
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"SPINDLE_HDFS_WEBHDFS={value!r}: expected http://HOST:PORT[,http://HOST:PORT]")
        addresses.append((parts.hostname, parts.port or WEBHDFS_PORT))
    return addresses


def parse(url, env=None):
    """The HdfsPath an `hdfs://` or `webhdfs://` URL names (see the module's docstring).

    Raises ValueError for anything else: another scheme, a relative path, a query or fragment,
    `hdfs:///path` without SPINDLE_HDFS_WEBHDFS."""
    env = os.environ if env is None else env
    if not is_hdfs(url):
        raise ValueError(f"{url!r} is not an hdfs:// or webhdfs:// URL")
    parts = urlsplit(url)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError(f"{url!r}: an HDFS path takes no query or fragment")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise ValueError(f"{url!r}: the path must be absolute (hdfs://namenode:8020/dir/file)")
    if any(seg in (".", "..") for seg in path.split("/")):
        raise ValueError(f"{url!r}: '.' and '..' are not HDFS path names")
    path = "/" + "/".join(seg for seg in path.split("/") if seg)
    user = unquote(parts.username) if parts.username else \
        (env.get("SPINDLE_HDFS_USER") or DEFAULT_USER)
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{url!r}: bad port") from None
    addresses = webhdfs_addresses(env)
    configured = addresses[0] if addresses else None  # an HA pair's first NameNode: requests fail over
    if parts.scheme == "webhdfs":
        if not parts.hostname:
            if configured is None:
                raise ValueError(f"{url!r} names no host and SPINDLE_HDFS_WEBHDFS is not set")
            return HdfsPath(*configured, user, path)
        return HdfsPath(parts.hostname, port or WEBHDFS_PORT, user, path)
    if not parts.hostname:  # hdfs:///path: the configured HDFS
        if configured is None:
            raise ValueError(f"{url!r} names no NameNode and SPINDLE_HDFS_WEBHDFS is not set")
        return HdfsPath(*configured, user, path)
    if configured is not None and parts.hostname in (NAMESERVICE, *(h for h, _ in addresses)):
        return HdfsPath(*configured, user, path)
    return HdfsPath(parts.hostname, WEBHDFS_PORT, user, path)


def datanode_nodes(env=None):
    """{DataNode IP: node name} from env SPINDLE_HDFS_DATANODE_NODES (JSON); {} if unset/bad."""
    env = os.environ if env is None else env
    try:
        value = json.loads(env.get("SPINDLE_HDFS_DATANODE_NODES") or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def local_node(env=None):
    """The node this process runs on: env SPINDLE_NODE (set by Spindle), else the hostname."""
    env = os.environ if env is None else env
    return env.get("SPINDLE_NODE") or socket.gethostname()


# -- splits (pure) --

@dataclass(frozen=True)
class Block:
    offset: int
    length: int
    hosts: tuple  # DataNode addresses holding a replica


@dataclass(frozen=True)
class Split:
    """Bytes [offset, offset+length) of `path`; `hosts` hold the block the split starts in."""

    path: str
    offset: int
    length: int
    hosts: tuple


def block_splits(files, split_size=None):
    """Splits of `files` = [(path, length, [Block])]: one per block (or per `split_size` bytes,
    at most a block), each preferring the hosts of the block it starts in. An empty file gives
    no split; no split at all gives one empty split (a dataset has at least one partition)."""
    splits = []
    for path, length, blocks in files:
        blocks = sorted(blocks, key=lambda b: b.offset)
        offset = 0
        while offset < length:
            block = _block_at(blocks, offset)
            block_end = block.offset + block.length if block else length
            size = min(block_end, length) - offset
            if split_size:
                size = min(size, split_size)
            size = max(1, size)
            splits.append(Split(path, offset, size, block.hosts if block else ()))
            offset += size
    return splits or [Split(files[0][0] if files else "", 0, 0, ())]


def _block_at(blocks, offset):
    for b in blocks:
        if b.offset <= offset < b.offset + b.length:
            return b
    return None


def preferred_nodes(hosts, nodes):
    """Nodes holding a replica: each DataNode address (`ip` or `ip:port`) mapped through
    `nodes` ({ip: node}); an address it does not know stands for itself."""
    return frozenset(nodes.get(h.rsplit(":", 1)[0] if h.count(":") == 1 else h, h)
                     for h in hosts)


# -- WebHDFS client --

CREATE_ATTEMPTS = 4  # redirects a CREATE asks for while the DataNodes it is sent to cannot be reached
EXCLUDED_S = 120  # how long a DataNode that could not be reached is left out of CREATEs
_excluded_lock = threading.Lock()
_excluded: dict[str, float] = {}  # DataNode address (host:port) → when it could not be reached


def _exclude_datanode(address):
    with _excluded_lock:
        _excluded[address] = monotonic()


def _excluded_datanodes():
    """``{"excludedatanodes": "h:p,…"}`` of the DataNodes unreachable within EXCLUDED_S, or {}."""
    with _excluded_lock:
        now = monotonic()
        for address in [a for a, at in _excluded.items() if now - at > EXCLUDED_S]:
            del _excluded[address]
        return {"excludedatanodes": ",".join(sorted(_excluded))} if _excluded else {}


_active_lock = threading.Lock()
_active: dict[tuple, tuple] = {}  # an HA pair (a tuple of addresses) → the address that answered last as the active


class WebHdfs:
    """The WebHDFS REST operations the engine uses, on the NameNode of `where` (an HdfsPath), or
    on the HA pair of SPINDLE_HDFS_WEBHDFS it is one of (see the module's docstring)."""

    def __init__(self, where, timeout=TIMEOUT_S, env=None):
        self.host, self.port, self.user = where.host, where.port, where.user
        self.timeout = timeout
        pair = tuple(webhdfs_addresses(env))
        self.namenodes = pair if len(pair) > 1 and (where.host, where.port) in pair else ((where.host, where.port),)

    def _url(self, path, op, **params):
        query = urlencode({"op": op, "user.name": self.user, **params})
        return f"/webhdfs/v1{quote(path)}?{query}"

    def _ask(self, method, path, op, **params):
        """One request to the active NameNode: (status, its Location header, body); HdfsError when
        no NameNode can be reached, or (HA) none has become active within FAILOVER_S."""
        deadline = monotonic() + (FAILOVER_S if len(self.namenodes) > 1 else 0)
        while True:
            with _active_lock:
                first = _active.get(self.namenodes, self.namenodes[0])
            for host, port in sorted(self.namenodes, key=lambda a: a != first):
                try:
                    status, location, body = self._ask_one(host, port, method, path, op, **params)
                except HdfsError as e:
                    failed = e
                    continue
                if status == 403 and b"StandbyException" in body:
                    failed = _remote_error(f"{op} {path} at {host}:{port}", status, body)
                    continue
                if len(self.namenodes) > 1:
                    with _active_lock:
                        _active[self.namenodes] = (host, port)
                return status, location, body
            if monotonic() >= deadline:
                raise failed
            sleep(1)

    def _ask_one(self, host, port, method, path, op, **params):
        conn = http.client.HTTPConnection(host, port, timeout=self.timeout)
        try:
            conn.request(method, self._url(path, op, **params))
            resp = conn.getresponse()
            return resp.status, resp.getheader("Location"), resp.read()
        except OSError as e:
            raise HdfsError(f"WebHDFS {host}:{port} unreachable ({op} {path}): {e}") from None
        finally:
            conn.close()

    def _call(self, method, path, op, expect=(200,), **params):
        """One request to the NameNode; the parsed JSON answer (None for 404 when allowed)."""
        status, _, body = self._ask(method, path, op, **params)
        if status in expect:
            return status, json.loads(body) if body.strip() else None
        raise _remote_error(f"{op} {path}", status, body)

    def status(self, path):
        """GETFILESTATUS: the FileStatus dict, or None when `path` does not exist."""
        status, body = self._call("GET", path, "GETFILESTATUS", expect=(200, 404))
        return body["FileStatus"] if status == 200 else None

    def list(self, path):
        """LISTSTATUS: the FileStatus dicts of a directory's entries (of a file: itself)."""
        _, body = self._call("GET", path, "LISTSTATUS")
        return body["FileStatuses"]["FileStatus"]

    def blocks(self, path, length, offset=0):
        """GETFILEBLOCKLOCATIONS: the Blocks of the file's bytes [offset, offset+length), each
        with its replicas' DataNode IPs."""
        if length == 0:
            return []
        _, body = self._call("GET", path, "GETFILEBLOCKLOCATIONS", offset=offset, length=length)
        located = (body.get("BlockLocations") or {}).get("BlockLocation") or []
        return [Block(b["offset"], b["length"],
                      tuple(n.rsplit(":", 1)[0] for n in b.get("names") or b.get("hosts") or ()))
                for b in located]

    def mkdirs(self, path):
        self._call("PUT", path, "MKDIRS")

    def rename(self, path, destination):
        _, body = self._call("PUT", path, "RENAME", destination=destination)
        if not (body or {}).get("boolean"):
            raise HdfsError(f"RENAME {path} to {destination} was refused (does it exist already?)")

    def delete(self, path, recursive=False):
        self._call("DELETE", path, "DELETE", recursive="true" if recursive else "false")

    def _redirect(self, method, path, op, **params):
        """The DataNode URL the NameNode sends `op` to (its 307 Location)."""
        status, location, body = self._ask(method, path, op, **params)
        if status != 307 or not location:
            raise _remote_error(f"{op} {path}", status, body)
        return location

    def create(self, path, chunks, overwrite=False, create_parent=True):
        """CREATE `path` with the bytes of iterable `chunks`, streamed (chunked encoding) to the
        DataNode the NameNode redirects to. Without `create_parent` a missing parent directory
        fails it (a late write cannot bring back a folder already deleted). A DataNode that cannot
        be reached (the NameNode picks one at random for a client that is not a DataNode, a dead
        one included until it is declared dead, minutes later) is left out of the next
        CREATE_ATTEMPTS redirects (`excludedatanodes`, as Hadoop's own WebHDFS client does) and
        for EXCLUDED_S afterwards; nothing of `chunks` has been read then."""
        for _ in range(CREATE_ATTEMPTS):
            location = urlsplit(self._redirect("PUT", path, "CREATE",
                                               overwrite="true" if overwrite else "false",
                                               createparent="true" if create_parent else "false",
                                               **_excluded_datanodes()))
            conn = http.client.HTTPConnection(location.hostname, location.port, timeout=self.timeout)
            try:
                try:
                    conn.connect()
                except OSError as e:
                    _exclude_datanode(location.netloc)
                    unreachable = HdfsError(f"DataNode {location.netloc} unreachable writing {path}: {e}")
                    continue
                conn.request("PUT", f"{location.path}?{location.query}", body=iter(chunks),
                             headers={"Content-Type": "application/octet-stream"},
                             encode_chunked=True)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 201:
                    raise _remote_error(f"CREATE {path}", resp.status, body)
                return
            except OSError as e:
                if isinstance(e, HdfsError):
                    raise
                raise HdfsError(f"DataNode {location.netloc} failed writing {path}: {e}") from None
            finally:
                conn.close()
        raise unreachable

    def open(self, path, offset=0, datanodes=()):
        """OPEN `path` from byte `offset` to its end: a readable response (close it when done).
        The read goes to a DataNode: the first of `datanodes` (IPs) if any, else the one the
        NameNode picks."""
        location = urlsplit(self._redirect("GET", path, "OPEN", offset=offset))
        host = datanodes[0] if datanodes else location.hostname
        conn = http.client.HTTPConnection(host, location.port, timeout=self.timeout)
        try:
            conn.request("GET", f"{location.path}?{location.query}")
            resp = conn.getresponse()
            if resp.status != 200:
                raise _remote_error(f"OPEN {path}", resp.status, resp.read())
        except OSError as e:
            conn.close()
            if isinstance(e, HdfsError):
                raise
            raise HdfsError(f"DataNode {host}:{location.port} failed reading {path}: {e}") \
                from None
        return _Response(conn, resp)


class _Response:
    """An open OPEN response: read/readline, closed with its connection."""

    def __init__(self, conn, resp):
        self._conn, self._resp = conn, resp
        self.read, self.readline = resp.read, resp.readline

    def close(self):
        self._resp.close()
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _remote_error(what, status, body):
    """HdfsError from a WebHDFS error answer ({"RemoteException": {exception, message}})."""
    try:
        remote = json.loads(body)["RemoteException"]
        return HdfsError(f"WebHDFS {what}: {remote.get('exception')}: {remote.get('message')}",
                         remote.get("exception", ""), status)
    except (ValueError, KeyError, TypeError):
        text = body[:200].decode("utf-8", "replace") if body else ""
        return HdfsError(f"WebHDFS {what}: HTTP {status} {text}".strip(), "", status)


# -- what the driver and executors do with it --

def input_files(where, client=None):
    """[(HdfsPath, length, [Block])] of a file, or of every file under a directory (recursive;
    names starting with '_' or '.' are skipped, like Hadoop's input formats)."""
    client = client or WebHdfs(where)
    status = client.status(where.path)
    if status is None:
        raise FileNotFoundError(f"{where.url}: no such file or directory")
    if status["type"] != "DIRECTORY":
        return [(where, status["length"], client.blocks(where.path, status["length"]))]
    out = []
    for entry in sorted(client.list(where.path), key=lambda e: e["pathSuffix"]):
        name = entry["pathSuffix"]
        if name.startswith(("_", ".")):
            continue
        child = where.child(f"{where.path.rstrip('/')}/{name}")
        if entry["type"] == "DIRECTORY":
            out.extend(input_files(child, client))
        else:
            out.append((child, entry["length"], client.blocks(child.path, entry["length"])))
    return out


def local_datanodes(env=None):
    """IPs of the DataNodes on this process's node (per SPINDLE_HDFS_DATANODE_NODES)."""
    env = os.environ if env is None else env
    node = env.get("SPINDLE_NODE")
    if not node:
        return []
    return sorted(ip for ip, n in datanode_nodes(env).items() if n == node)


def open_range(url, offset):
    """A readable stream of the HDFS file `url` from `offset`, through a DataNode of this node
    that holds the block when there is one (see WebHdfs.open)."""
    where = parse(url)
    client = WebHdfs(where)
    mine = local_datanodes()
    if mine:
        holders = set()
        for block in client.blocks(where.path, 1, offset):
            if block.offset <= offset < block.offset + block.length:
                holders.update(block.hosts)
        mine = [ip for ip in mine if ip in holders]
    return client.open(where.path, offset, mine)


def write_file(url, chunks):
    """Create the HDFS file `url` (replaced if it exists: a task attempt's own file) from
    `chunks` (bytes). Its folder must exist: a task's write that the DataNode handles only
    after its save failed and removed the folder must not create it again."""
    where = parse(url)
    WebHdfs(where).create(where.path, chunks, overwrite=True, create_parent=False)
