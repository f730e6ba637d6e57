"""The operator's admin actions on a running server, as routes of the operator surface
(:class:`~moonshot.server.operator.OperatorSurface`, ``--operator-address``, loopback by default).

:class:`Admin` carries the actions out on a :class:`~moonshot.server.app.ServerApp`: list tables
and players, close a game (aborted, unrated, every player told why in its protocol's own way:
``Table.close``), ban and unban a name or an address/network, mute a name's chat, broadcast a
notice, drain. The decisions themselves live in the runtime (:mod:`moonshot.runtime.controls`,
held by the server's ``ClientGuard``), which every protocol asks when it admits a client, so one
ban is enforced by every protocol. Each ban and mute is a row of the store's ``kv`` table, read
again at start (:mod:`moonshot.runtime.moderation`); every action is logged
(``event=admin_action``) and appended to the audit trail, a row per entry (who, when, what). In
a cluster every node hears of a ban, a mute, a lift and a notice at once, and a close goes to the
node hosting the game (:mod:`moonshot.server.moderation`, ``Admin.sync``).

:func:`admin_routes` are the HTTP side (``/admin/...``): each refuses a request without the
operator token (``Authorization: Bearer``, compared in constant time by the surface) with 401.
The token is made at start (:func:`operator_token`) unless ``--operator-token-file`` names one,
and written 0600 beside the store, where ``moonshot admin`` on the same host finds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from moonshot.runtime.controls import Ban, Controls, duration, name_key
from moonshot.runtime.moderation import AUDIT_KEEP, ModerationRows
from moonshot.runtime.table import Table
from moonshot.store import sqlite_path

log = logging.getLogger("moonshot.admin")

TOKEN_FILE = "moonshot.operator-token"
AUDIT_SHOWN = 200  # the entries /admin/audit answers with (the newest)
STORE_WAIT = 5.0  # seconds an action waits for its rows to reach the store before answering
MAX_BODY = 16 * 1024
DRAIN_NOTICE = "The server is restarting: no new games now. Games under way finish first."


# ----------------------------------------------------------------------------- the token
class TokenFileError(ValueError):
    """A ``--operator-token-file`` that cannot be used; the message says why."""


def token_path(db_url: str | None) -> Path:
    """Where the operator token is written: beside a SQLite store, else in the working directory."""
    path = sqlite_path(db_url) if db_url else None
    return (path.parent if path is not None else Path.cwd()) / TOKEN_FILE


def operator_token(token_file: str | None, db_url: str | None) -> tuple[str, Path]:
    """The operator token and its file: read from ``token_file`` when given (it must be private
    to its owner), else made now and written 0600 at :func:`token_path`."""
    if token_file is not None:
        path = Path(token_file)
        try:
            st = path.stat()
            token = path.read_text(encoding="utf-8").strip()
        except OSError as e:
            raise TokenFileError(f"cannot read the operator token file {path}: {e.strerror or e}") from None
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise TokenFileError(f"the operator token file {path} is readable by others: chmod 600 {path}")
        if len(token) < 16:
            raise TokenFileError(f"the operator token in {path} is too short (16 characters at least)")
        return token, path
    path = token_path(db_url)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask, and an old file's mode
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token, path


def read_token(path: Path) -> str:
    return path.read_text(encoding="utf-8").strip()


# ----------------------------------------------------------------------------- the actions
class AdminError(ValueError):
    """An action that cannot be done as asked (400 or 404, with the reason)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _address(seat: Any) -> str | None:
    """The client address a seat's player came from, where its protocol keeps one."""
    for holder in (getattr(seat, "conn", None), getattr(seat, "peer", None), seat):
        if holder is None:
            continue
        for attr in ("addr", "peer", "ip"):
            value = getattr(holder, attr, None)
            if isinstance(value, str) and value and value != "?":
                return value
    return None


class Admin:
    """The admin actions on one :class:`~moonshot.server.app.ServerApp` (``app``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.controls: Controls = app.guard.controls
        cluster = getattr(app, "cluster", None)
        self.node: str | None = cluster.node if cluster is not None else None
        # the rows: written through the store's one writer, in order with the games' rows
        self.rows = ModerationRows(
            self.controls, app.store, app.recorder, self.node or f"server-{os.getpid()}-{secrets.token_hex(2)}"
        )
        self.sync: Any = None  # moonshot.server.moderation.ClusterModeration in a cluster
        self._drain: asyncio.Task[None] | None = None
        self._pruning: asyncio.Task[None] | None = None  # ended and old rows deleted now and then

    @property
    def audit(self) -> list[dict[str, Any]]:
        """This node's own audit entries since it started (:meth:`trail` has every node's)."""
        return self.rows.audit

    async def load(self) -> None:
        """The bans, mutes and audit trail kept in the store (at start); from then on the ended
        and old rows are pruned every ``PRUNE_EVERY`` seconds (runtime/moderation.py)."""
        await self.rows.load()
        if self._pruning is None and self.rows.store is not None:
            self._pruning = asyncio.get_running_loop().create_task(self.rows.prune_forever(), name="admin-prune")

    async def stop(self) -> None:
        """Stop pruning (the server stops)."""
        task, self._pruning = self._pruning, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def trail(self) -> dict[str, Any]:
        return {"audit": await self.rows.trail(AUDIT_SHOWN)}

    async def stored(self) -> bool:
        """Wait until the rows of the actions so far are in the store (see ``STORE_WAIT``)."""
        ok = await self.rows.written(STORE_WAIT)
        if not ok:
            log.error("event=admin_unstored reason=the store did not take the change in %.0f s", STORE_WAIT)
        return ok

    def _tell(self, change: dict[str, Any]) -> None:
        """Every other node of the cluster applies ``change`` too."""
        if self.sync is not None:
            self.sync.tell(change)

    def _record(self, action: str, by: str, **what: Any) -> dict[str, Any]:
        entry = {"at": time.time(), "by": by, "action": action, **what}
        if self.node is not None:
            entry["node"] = self.node
        self.rows.record(entry)
        fields = " ".join(f"{k}={json.dumps(v)}" for k, v in what.items())
        log.warning("event=admin_action action=%s by=%s %s", action, json.dumps(by), fields)
        return entry

    # list
    def tables(self) -> dict[str, Any]:
        out = []
        for table in list(self.app.tables.values()):
            if table.done.done():
                continue
            seats = []
            names = table.seat_names()
            for i, chair in enumerate(table.chairs):
                occ = chair.occupant or chair.substitute
                seats.append(
                    {
                        "seat": i,
                        "name": names[i],
                        "kind": "empty" if occ is None else occ.kind.value,
                        "protocol": str(getattr(occ, "protocol", "server")) if occ is not None else None,
                        "address": _address(occ) if occ is not None else None,
                        "away": chair.away,
                        "bot_playing": chair.occupant is None and chair.substitute is not None,
                    }
                )
            out.append(
                {
                    "id": table.id,
                    "protocol": table.meta.get("protocol", "sessions"),
                    "variant": table.rules.name,
                    "state": table.status.value,
                    "deal": table.game.deal_index + 1,
                    "actions": len(table.game.actions),
                    "seats": seats,
                }
            )
        lobby = self.app.lobby
        return {
            "tables": out,
            "waiting": lobby.waiting() if lobby is not None else 0,
            "draining": bool(self.app.draining),
        }

    # close a game
    def close(self, table_id: str, reason: str, by: str) -> Any:
        """Close a table running here; in a cluster, one running on another node is closed there
        (an awaitable answer then)."""
        if self.close_here(table_id, reason):
            return self._record("close", by, table=table_id, reason=reason)
        if self.sync is not None:
            return self._close_elsewhere(table_id, reason, by)
        raise AdminError(f"no running table {table_id!r} on this server", 404)

    def close_here(self, table_id: str, reason: str) -> bool:
        """Close the table if it runs on this node; whether it did."""
        table: Table | None = self.app.tables.get(table_id)
        if table is None or table.done.done():
            return False
        text = f"closed by the operator: {reason}" if reason else "closed by the operator"
        table.close(text)
        return True

    async def _close_elsewhere(self, table_id: str, reason: str, by: str) -> dict[str, Any]:
        host = await self.sync.host_of(table_id)
        if host is None or host == self.node:
            raise AdminError(f"no running table {table_id!r} in the cluster", 404)
        self.sync.close_on(host, table_id, reason, by)
        return self._record("close", by, table=table_id, reason=reason, host=host)

    # bans
    def ban(self, kind: str, value: str, length: str | None, reason: str, by: str) -> dict[str, Any]:
        try:
            b = self.controls.ban(kind, value, duration(length), reason, by)
        except ValueError as e:
            raise AdminError(str(e)) from None
        self.rows.banned(b)
        self._tell({"action": "ban", "ban": b.to_json()})
        closed = self.disconnect(b)
        self._record("ban", by, kind=b.kind, value=b.value, until=b.until, reason=reason, closed=closed)
        return {"ban": _shown(b), "closed": closed}

    def unban(self, kind: str, value: str, by: str) -> dict[str, Any]:
        try:
            b = self.controls.unban(kind, value)
        except ValueError as e:
            raise AdminError(str(e)) from None
        if b is None:
            raise AdminError(f"no ban on the {kind} {value!r}", 404)
        self.rows.unbanned(b)
        self._tell({"action": "unban", "ban": b.to_json()})
        self._record("unban", by, kind=b.kind, value=b.value)
        return {"lifted": _shown(b)}

    def bans(self) -> dict[str, Any]:
        return {
            "bans": [_shown(b) for b in self.controls.active()],
            "mutes": [_shown(m) for m in self.controls.active_mutes()],
        }

    def disconnect(self, ban: Ban) -> int:
        """Close the connections a new ban covers, each as its protocol refuses one; how many."""
        reason = ban.refusal()

        def covered(addr: str | None, names: list[str]) -> bool:
            if ban.kind == "address":
                return bool(addr) and self.controls.address_ban(str(addr)) is ban
            return any(name_key(n) == name_key(ban.value) for n in names)

        closed = 0
        sessions = self.app.sessions
        if sessions is not None:
            from moonshot.protocols.sessions.codec import error_message

            for conn in list(sessions.connections):
                names = [getattr(s, "name", "") for s in conn.sessions.values()]
                if not conn.closed and covered(conn.addr, names):
                    with contextlib.suppress(Exception):
                        conn.send(error_message(f"{reason}: connection closed", about="banned"))
                        conn._flush()
                    conn.close()
                    closed += 1
        kierki = self.app.kierki
        for conn in list(getattr(kierki, "conns", ()) or ()):
            addr = str(getattr(conn, "peer", "")).rpartition(":")[0].strip("[]")
            names = [str(getattr(conn, "name", "") or "")]
            if not conn.closed and covered(addr, names):
                conn.close(reason)
                closed += 1
        turbo = self.app.turbo
        if turbo is not None and ban.kind == "name":  # the web app's streams under the name end (None)
            for name, queues in list(turbo.subscribers.items()):
                if covered(None, [name]):
                    for q in list(queues):
                        q.put_nowait(None)
                        closed += 1
            for g in list(turbo.games.values()):
                stream = g.hosted.stream if g.hosted is not None else None
                if stream is None:
                    continue
                for sub in list(stream.subscribers):
                    if covered(None, [sub.name]):
                        sub.queue.put_nowait(None)
                        stream.unsubscribe(sub)
                        closed += 1
        wire = getattr(self.app.trend, "_wire", None)
        for peer in list(getattr(wire, "conns", ()) or ()):
            names = [str(getattr(getattr(peer, "seat", None), "name", "") or "")]
            if covered(getattr(peer, "ip", None) or getattr(peer, "addr", None), names):
                with contextlib.suppress(Exception):
                    peer.close(1008, reason[:100])
                closed += 1
        return closed

    # chat
    def mute(self, name: str, length: str | None, reason: str, by: str) -> dict[str, Any]:
        try:
            m = self.controls.mute(name, duration(length), reason, by)
        except ValueError as e:
            raise AdminError(str(e)) from None
        self.rows.muted(m)
        self._tell({"action": "mute", "mute": m.to_json()})
        self._record("mute", by, name=m.value, until=m.until, reason=reason)
        return {"mute": _shown(m)}

    def unmute(self, name: str, by: str) -> dict[str, Any]:
        m = self.controls.unmute(name)
        if m is None:
            raise AdminError(f"{name!r} is not muted", 404)
        self.rows.unmuted(m)
        self._tell({"action": "unmute", "mute": m.to_json()})
        self._record("unmute", by, name=m.value)
        return {"unmuted": _shown(m)}

    # notice
    def notice(self, message: str, by: str) -> dict[str, Any]:
        text = " ".join(message.split())[:500]
        if not text:
            raise AdminError("a notice needs a message")
        self._tell({"action": "notice", "message": text})
        shown, unable = self.show_notice(text)
        self._record("notice", by, message=text, shown=shown, not_shown=unable)
        return {"shown": shown, "not_shown": unable}

    def show_notice(self, text: str) -> tuple[list[str], list[str]]:
        """Tell this node's people a notice; the protocols that show it, and those that cannot."""
        self.controls.notice = text
        shown, unable = [], []
        turbo = self.app.turbo
        if turbo is not None:  # the web app's lobby streams show it as a banner (this node's)
            turbo.broadcast({"type": "notice", "message": text}, local=True)
            shown.append("http")
        # seated players hear it as their table's pauses are told: Sessions a non-fatal error
        # (about: notice), Trend an error frame, the web app a chat line from "moonshot";
        # Kierki has no line for it (the server's log says it)
        tables = [t for t in list(self.app.tables.values()) if not t.done.done()]
        for table in tables:
            table.announce(text)
        for protocol, running in (("sessions", self.app.sessions), ("trend", self.app.trend)):
            if running is not None:
                shown.append(f"{protocol} (seated players)")
        if self.app.kierki is not None:
            unable.append("kierki")
        log.warning("event=notice tables=%d text=%s", len(tables), json.dumps(text))
        return shown, unable

    # drain
    def drain(self, by: str, poll: float = 0.2) -> dict[str, Any]:
        running = [t.id for t in self.app.tables.values() if not t.done.done()]
        if self._drain is None:
            self.app.draining = True
            if self.app.tournaments is not None:  # their next games wait for the next start
                self.app.tournaments.draining = True
            self.controls.closed = "the server is draining for a restart: it takes no new games now"
            with contextlib.suppress(AdminError):
                self.notice(DRAIN_NOTICE, by)
            self._drain = asyncio.get_running_loop().create_task(self._drained(poll), name="drain")
            self._record("drain", by, running=len(running))
        return {"draining": True, "running": running}

    async def _drained(self, poll: float) -> None:
        """Stop the server (exit 0) once every game under way has finished."""
        while any(not t.done.done() for t in list(self.app.tables.values())):
            await asyncio.sleep(poll)
        log.warning("event=drained reason=every running game finished")
        self.app.request_stop()


def _shown(b: Ban) -> dict[str, Any]:
    until = None if b.until is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b.until))
    return {"kind": b.kind, "value": b.value, "until": until, "reason": b.reason, "by": b.by}


# ----------------------------------------------------------------------------- the routes
def admin_routes(admin: Admin, authorized: Any) -> list[BaseRoute]:
    """``/admin/...`` on the operator surface; ``authorized(request)`` checks the token."""

    def guarded(handler: Any, body: bool) -> Any:
        async def endpoint(request: Request) -> Response:
            if not authorized(request):
                peer = request.client.host if request.client else "?"
                log.warning("event=admin_refused path=%s peer=%s reason=no_valid_token", request.url.path, peer)
                return JSONResponse(
                    {"error": "the operator token is required (Authorization: Bearer <token>)"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
            data: dict[str, Any] = {}
            if body:
                raw = await request.body()
                if len(raw) > MAX_BODY:
                    return JSONResponse({"error": "the body is too large"}, status_code=413)
                try:
                    data = json.loads(raw or b"{}")
                except ValueError:
                    return JSONResponse({"error": "the body is not JSON"}, status_code=400)
                if not isinstance(data, dict):
                    return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
            by = str(request.headers.get("x-moonshot-operator") or "operator")[:100]
            try:
                out = handler(data, by)
                if inspect.isawaitable(out):
                    out = await out
                if body:  # answered once its rows are in the store (a restart, any node, finds them)
                    await admin.stored()
            except AdminError as e:
                return JSONResponse({"error": str(e)}, status_code=e.status)
            except (KeyError, TypeError) as e:
                return JSONResponse({"error": f"missing or bad field: {e}"}, status_code=400)
            return JSONResponse(out, headers={"Cache-Control": "no-store"})

        return endpoint

    def text(data: dict[str, Any], key: str, default: str | None = None) -> str:
        value = data.get(key, default)
        if not isinstance(value, str):
            raise AdminError(f"{key!r} must be a string")
        return value

    def opt(data: dict[str, Any], key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    def route(path: str, handler: Any, post: bool = True) -> Route:
        return Route(path, guarded(handler, post), methods=["POST"] if post else ["GET"])

    return [
        route("/admin/tables", lambda d, by: admin.tables(), post=False),
        route("/admin/bans", lambda d, by: admin.bans(), post=False),
        route("/admin/audit", lambda d, by: admin.trail(), post=False),
        route("/admin/close", lambda d, by: admin.close(text(d, "table"), text(d, "reason", ""), by)),
        route(
            "/admin/ban",
            lambda d, by: admin.ban(text(d, "kind"), text(d, "value"), opt(d, "duration"), text(d, "reason", ""), by),
        ),
        route("/admin/unban", lambda d, by: admin.unban(text(d, "kind"), text(d, "value"), by)),
        route("/admin/mute", lambda d, by: admin.mute(text(d, "name"), opt(d, "duration"), text(d, "reason", ""), by)),
        route("/admin/unmute", lambda d, by: admin.unmute(text(d, "name"), by)),
        route("/admin/notice", lambda d, by: admin.notice(text(d, "message"), by)),
        route("/admin/drain", lambda d, by: admin.drain(by)),
    ]


async def start(app: Any) -> Admin:
    """The server's admin actions and the bans and mutes kept in the store, read before the
    listeners start (every node enforces them, with an operator surface or not)."""
    admin = app.admin = Admin(app)
    await admin.load()
    return admin


async def install(app: Any, operator: Any, token_file: str | None) -> Path:
    """Give the operator surface its token and the admin routes (before it starts), the kept bans
    loaded first if :func:`start` did not; the token file's path (``ValueError``: a given token
    file cannot be used)."""
    token, path = operator_token(token_file, app.config.db_url)
    operator.token = token
    admin = app.admin if app.admin is not None else await start(app)
    operator.routes.extend(admin_routes(admin, operator.authorized))
    return path


__all__ = [
    "AUDIT_KEEP",
    "TOKEN_FILE",
    "Admin",
    "AdminError",
    "TokenFileError",
    "admin_routes",
    "install",
    "operator_token",
    "read_token",
    "start",
    "token_path",
]
