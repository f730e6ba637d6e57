"""One shape for every JSON route: identify the caller, read a bounded JSON body, run the handler,
answer JSON; a :class:`~moonshot.protocols.turbo.codec.RequestError` is the client's (its status and reason).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from moonshot.http.identity import Caller, Identity
from moonshot.http.proxies import is_secure
from moonshot.protocols.turbo.codec import (
    RequestError,
    parse_json,
)

log = logging.getLogger("moonshot.turbo")

MAX_BODY = 64 * 1024


LIMIT_RETRY_AFTER = 10  # seconds: a 429 for a share held (open games, chat lines) frees as they end
UNAVAILABLE_RETRY_AFTER = 2  # seconds: a 503 (the cluster's Redis did not confirm a write in time)


def error_body(message: str, code: str | None = None, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """A refusal's JSON: ``error``, the English every API client reads; ``code`` and ``args``
    where there is one, which the web app shows in its page's language (t("error." + code, args))."""
    body: dict[str, Any] = {"error": message}
    if code is not None:
        body["code"] = code
        if args:
            body["args"] = args
    return body


def error(status: int, message: str, code: str | None = None, args: dict[str, Any] | None = None) -> JSONResponse:
    # a refusal for asking too much (429), or for a store that is not answering (503), says when
    # to ask again
    retry: float | None = {429: LIMIT_RETRY_AFTER, 503: UNAVAILABLE_RETRY_AFTER}.get(status)
    seconds = (args or {}).get("seconds")
    if status == 429 and isinstance(seconds, int | float) and seconds > 0:
        retry = max(1, math.ceil(seconds))  # a rate's refusal: when it would be allowed
    headers = {"Retry-After": str(retry)} if retry is not None else None
    return JSONResponse(error_body(message, code, args), status_code=status, headers=headers)


async def read_body(request: Request) -> dict[str, Any]:
    """The JSON object a POST carries: 413 over 64 KB, 400 when it is not a JSON object."""
    length = request.headers.get("content-length")
    if length is not None:
        try:
            size_given = int(length)
        except ValueError as e:
            raise RequestError(400, "a bad Content-Length", "bad_request") from e
        if size_given > MAX_BODY:
            raise RequestError(
                413, f"the body is over {MAX_BODY // 1024} KB", "body_too_large", {"kb": MAX_BODY // 1024}
            )
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise RequestError(
                413, f"the body is over {MAX_BODY // 1024} KB", "body_too_large", {"kb": MAX_BODY // 1024}
            )
        chunks.append(chunk)
    return parse_json(b"".join(chunks))


def endpoint(
    handler: Callable[[Request, Caller], Awaitable[Any]], identity: Callable[[], Identity], anonymous: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """A route: identify the caller, run the handler, answer JSON; a RequestError is the client's."""

    async def run(request: Request) -> Response:
        caller: Caller | None = None
        try:
            caller = None if anonymous else await identity().resolve(request)
            result = await handler(request, caller)  # type: ignore[arg-type]
        except RequestError as e:
            log.info(
                "event=http_refused path=%s status=%d name=%s reason=%s",
                request.url.path,
                e.status,
                json.dumps(caller.name if caller is not None else None),
                json.dumps(str(e)),
            )
            # a name bound by this request keeps its cookie even when the call is refused (a 503
            # while the cluster's Redis is down): the binding stands, the browser must hold it
            return Identity.finish(error(e.status, str(e), e.code, e.params), caller, is_secure(request.scope))
        except Exception:
            log.exception("event=http_error path=%s", request.url.path)
            return error(500, "internal error (logged on the server)", "internal")
        response = result if isinstance(result, Response) else JSONResponse(result)
        return Identity.finish(response, caller, is_secure(request.scope))

    return run


__all__ = ["LIMIT_RETRY_AFTER", "MAX_BODY", "endpoint", "error", "error_body", "read_body"]
