"""One TLS context per process for the HTTP clients Spindle's services make per request.

An ``httpx.Client`` (or ``AsyncClient``) builds a fresh ``ssl.SSLContext`` unless given one, loading
the whole CA bundle each time: measured on 2026-11-29, 50 of the api-server's 66 ms of CPU per
``GET /clusters/…/{id}`` (py-spy), though its calls to the services are plain HTTP. The context is
the one httpx would build (``verify=True``), made once."""
import functools
import ssl

import httpx


@functools.cache
def default_tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()
