"""Who an HTTP request comes from: the ``name`` cookie, bound to one browser by a signed HttpOnly
session cookie (``--open-names``: the seed's trust-everyone behaviour), and the name's recovery code.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.requests import Request
from starlette.responses import Response

from moonshot.http.names import (
    NameRecord,
    NameRefused,
    digest,
    display_name,
    name_key,
    new_recovery_code,
)
from moonshot.protocols.turbo.codec import (
    RequestError,
)

NAME_COOKIE = "name"


SESSION_COOKIE = "moonshot_session"


RECOVERY_HEADER = "Moonshot-Recovery-Code"  # a name's recovery code, on the answer that bound it


# ---------------------------------------------------------------- identity
@dataclass
class Caller:
    name: str
    new_session: str | None = None  # a session cookie to set on the response
    recovery: str | None = None  # the name's new recovery code, shown once (a binding made now)


class NameTaken(RequestError):
    """A name bound to another browser (403); ``key``: the name as compared."""

    def __init__(self, key: str, message: str, held: bool = False) -> None:
        super().__init__(403, message)
        self.key = key
        self.held = held  # in use here: no other process's word moves it


class NewNameRefused(RequestError):
    """A name nobody had, refused at its address's rate of new names (429)."""


class Identity:
    """Who a request comes from: the ``name`` cookie, as in the seed.

    Names are compared by :func:`~moonshot.http.names.name_key` (NFKC, casefolded). Unless
    ``open_names``, the first request under a name also gets a signed HttpOnly session cookie
    binding the name to that browser, and the name's recovery code (``Caller.recovery``, shown
    once). The identity keeps a :class:`~moonshot.http.names.NameRecord` for each bound name
    (handed to ``on_bind`` so the server keeps it). A request under a bound name without the
    cookie of its binding is refused with 403 while the name is *held* (``held``: in use) or
    once it has played a rated game (the record's ``rated``); otherwise the new browser takes the
    name over. ``reload`` (async: the store's record of a name) is asked before refusing, so a
    binding released or moved by another process counts at once. The signing key comes from the
    caller (persisted by the server), so bindings survive a restart. A name nobody had is bound
    only while ``admit_new`` (the server's per-address rate of new names) allows: else 429."""

    def __init__(
        self,
        secret: str,
        open_names: bool = False,
        held: Callable[[str], bool] | None = None,
        on_bind: Callable[[str, dict[str, Any]], None] | None = None,
        reload: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self.open_names = open_names
        self.held: Callable[[str], bool] = held or (lambda name: False)
        self.on_bind = on_bind
        self.reload = reload
        self._signer = URLSafeSerializer(secret, salt="moonshot.turbo.name")
        self._bound: dict[str, NameRecord] = {}  # name key -> its binding
        # seconds until the request being handled may bind a name nobody had (0.0: now, and
        # counted): each new name is a store write and an announcement to every lobby stream; a
        # refusal is answered after ``tarpit`` seconds, so a client looping on new names is slowed
        self.admit_new: Callable[[], float] | None = None
        self.tarpit = 0.0

    def load_bindings(self, bound: dict[str, Any]) -> None:
        """Bindings kept by an earlier run or told by another process (name -> record, or the
        nonce's digest as kept before records)."""
        for name, value in bound.items():
            key = name_key(name)
            rec = NameRecord.from_json(key, value)
            if rec is not None:
                self._bound[key] = rec

    def record(self, name: str) -> NameRecord | None:
        return self._bound.get(name_key(name))

    def forget(self, name: str) -> None:
        self._bound.pop(name_key(name), None)

    def _store(self, key: str, rec: NameRecord) -> None:
        self._bound[key] = rec
        if self.on_bind is not None:
            self.on_bind(key, rec.to_json())

    def mark_rated(self, name: str) -> None:
        """``name`` has played a rated game: from now on only its recovery code moves it."""
        key = name_key(name)
        rec = self._bound.get(key)
        if rec is not None and not rec.rated:
            rec.rated = True
            self._store(key, rec)

    def bind(self, name: str, nonce: str | None = None) -> Caller:
        """A new binding of ``name`` (shown as given) to whoever gets the returned cookie (or, with
        ``nonce``, to the browser whose cookie carries it), with a new recovery code; the name's
        earlier binding and code stop working."""
        key = name_key(name)
        old = self._bound.get(key)
        cookie = None
        if nonce is None:
            nonce = secrets.token_urlsafe(24)
            cookie = self._signer.dumps([key, nonce])
        code = new_recovery_code()
        rec = NameRecord(name, digest(nonce), digest(code), old.rated if old is not None else False)
        self._store(key, rec)
        return Caller(name, cookie, code)

    def session_for(self, name: str) -> str:
        """A new binding of ``name`` to whoever gets this cookie value."""
        session = self.bind(name).new_session
        assert session is not None
        return session

    def _nonce(self, token: str, key: str) -> str | None:
        try:
            value = self._signer.loads(token)
        except BadSignature:
            return None
        if (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], str)
            and name_key(value[0]) == key
        ):
            return value[1]
        return None

    @staticmethod
    def display(request: Request) -> str:
        """The name a request's cookie gives, as shown (400/401 when it is not a name)."""
        raw = request.cookies.get(NAME_COOKIE, "")
        if not raw.strip():
            raise RequestError(401, "no name: set the 'name' cookie", "no_name")
        try:
            # the web app writes the cookie with encodeURIComponent; a program may send UTF-8
            # bytes, which arrive here as Latin-1
            with contextlib.suppress(UnicodeError):
                raw = raw.encode("latin-1").decode("utf-8")
            return display_name(urllib.parse.unquote(raw, errors="strict"))
        except UnicodeError:
            raise RequestError(400, "the name cookie is not UTF-8", "bad_name") from None
        except NameRefused as e:
            raise RequestError(400, str(e), e.code, e.params) from None

    def caller(self, request: Request) -> Caller:
        name = self.display(request)
        if self.open_names:
            return Caller(name)
        key = name_key(name)
        token = request.cookies.get(SESSION_COOKIE)
        nonce = self._nonce(token, key) if token else None
        rec = self._bound.get(key)
        if rec is None:  # a free name (with the browser's own cookie when this server signed one)
            if nonce is None and self.admit_new is not None:
                wait = self.admit_new()
                if wait:
                    raise NewNameRefused(
                        429,
                        f"too many new names from this address: try again in {wait:.1f} s",
                        "rate_limited",
                        {"seconds": round(wait, 1)},
                    )
            return self.bind(name, nonce)
        if nonce is not None and hmac.compare_digest(rec.session, digest(nonce)):
            return Caller(rec.name)  # the name as it was taken, however this request spells it
        if self.held(rec.name):
            raise NameTaken(key, f"the name {rec.name!r} is in use in another browser", held=True)
        if rec.rated:
            raise NameTaken(
                key,
                f"the name {rec.name!r} belongs to another browser (it has played rated games): "
                "move it here with its recovery code",
            )
        # nobody holds it and it was never rated: this browser takes it (with the cookie it has,
        # when that is one this server signed for the name: the same cookie on every process)
        return self.bind(name, nonce)

    async def resolve(self, request: Request) -> Caller:
        """:meth:`caller`, after asking ``reload`` about a rated name it would refuse (released
        or moved since this process last heard of it). A name in use here is refused whatever
        the store says."""
        try:
            return self.caller(request)
        except NewNameRefused:
            if self.tarpit > 0:
                await asyncio.sleep(self.tarpit)
            raise
        except NameTaken as e:
            if self.reload is None or e.held:
                raise
            value = await self.reload(e.key)
            rec = NameRecord.from_json(e.key, value) if value is not None else None
            if rec is None:
                self._bound.pop(e.key, None)
            else:
                self._bound[e.key] = rec
            return self.caller(request)

    async def recover(self, name: str, code: str) -> Caller:
        """Move ``name`` to this browser with its recovery code (a new code replaces it)."""
        key = name_key(name)
        if self.reload is not None:
            value = await self.reload(key)
            rec = NameRecord.from_json(key, value) if value is not None else None
            if rec is not None:
                self._bound[key] = rec
        rec = self._bound.get(key)
        if rec is None:
            raise RequestError(
                404, f"no browser holds the name {name!r}: just use it", "name_not_bound", {"name": name}
            )
        if not rec.code_matches(code):
            raise RequestError(
                403, f"that is not the recovery code of {rec.name!r}", "wrong_recovery_code", {"name": rec.name}
            )
        return self.bind(rec.name)

    @staticmethod
    def finish(response: Response, caller: Caller | None, secure: bool = False) -> Response:
        """``response`` with the caller's new session cookie, if it got one; ``secure``: the client
        came over HTTPS (directly or through a trusted proxy), so the cookie is ``Secure``."""
        if caller is not None and caller.new_session is not None:
            response.set_cookie(
                SESSION_COOKIE,
                caller.new_session,
                max_age=10 * 365 * 86400,
                httponly=True,
                samesite="strict",
                secure=secure,
            )
            if caller.recovery is not None:  # for programs; the web app reads it from /api/me
                response.headers[RECOVERY_HEADER] = caller.recovery
        return response


__all__ = ["NAME_COOKIE", "RECOVERY_HEADER", "SESSION_COOKIE", "Caller", "Identity", "NameTaken"]
