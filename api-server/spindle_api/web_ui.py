"""Serves the built web UI (web-ui/dist) under /ui, as a single-page app."""
from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from spindle_common.errors import ApiError

MOUNT_PATH = "/ui"


class SinglePageApp(StaticFiles):
    """Static files, except that a path which is no file gets index.html: the UI routes it itself.

    Missing files under assets/ stay 404s, so a stale script URL fails loudly instead of loading HTML.
    """

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404 or path.startswith("assets/"):
                raise
            response = await super().get_response("index.html", scope)
        # Asset names carry a content hash; index.html must be revalidated to pick up new builds.
        immutable = path.startswith("assets/")  # a missing asset raised above, so this one exists
        response.headers["Cache-Control"] = "public, max-age=31536000, immutable" if immutable else "no-cache"
        return response


def mount_web_ui(app: FastAPI, dist: Path) -> None:
    """Serve ``dist`` at /ui when it holds a build; otherwise answer /ui with a 404 saying how to build it."""
    if (dist / "index.html").is_file():
        app.mount(MOUNT_PATH, SinglePageApp(directory=dist, html=True), name="web-ui")
        return

    @app.get(MOUNT_PATH, include_in_schema=False)
    @app.get(MOUNT_PATH + "/{path:path}", include_in_schema=False)
    def web_ui_not_built() -> None:
        raise ApiError(404, "WEB_UI_NOT_BUILT",
                       f"the web UI is not built: {dist} has no index.html; run `npm ci && npm run build` "
                       "in web-ui/ (deploy/up does it) and restart api-server", {"web_ui_dist": str(dist)})
