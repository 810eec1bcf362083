"""Reading product manifests (the catalog lives in the repo's ``catalog/``)."""
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spindle_common.errors import ApiError


def manifest_loader(root: Path) -> Callable[[str, str], dict[str, Any]]:
    def manifest_of(product: str, version: str) -> dict[str, Any]:
        path = root / product / version / "manifest.json"
        if not path.is_file():
            raise ApiError(404, "PRODUCT_NOT_FOUND", f"no product {product} {version} in the catalog")
        return json.loads(path.read_text())

    return manifest_of
