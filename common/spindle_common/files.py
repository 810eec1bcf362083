"""A member's rendered config files as a tar archive (Docker's ``put_archive``): the executor puts
them in at the start, a node's agent again after a resize re-rendered them."""
import io
import tarfile
from collections.abc import Mapping
from pathlib import PurePosixPath


def files_archive(files: Mapping[str, str]) -> bytes:
    """A tar archive holding ``files`` (absolute container path → text) at their paths, mode 644."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, content in files.items():
            data = content.encode()
            info = tarfile.TarInfo(str(PurePosixPath(path).relative_to("/")))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
