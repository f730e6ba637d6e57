"""``moonshot admin``: the operator's actions on a running server, through its operator surface
(``serve --operator-address``, loopback by default; the routes are :mod:`moonshot.server.admin`'s).

The operator token is read from ``--token-file``, else ``$MOONSHOT_OPERATOR_TOKEN``, else the
file the server wrote beside its store (``--db`` names the store, as for ``serve``)."""

from __future__ import annotations

import getpass
import json
import os
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import click

from moonshot.cli.commands import DB_HELP, DEFAULT_DB, store_url_option

TOKEN_ENV = "MOONSHOT_OPERATOR_TOKEN"


class _Target:
    def __init__(self, operator: str, token_file: str | None, db: str, as_json: bool) -> None:
        self.base = operator if operator.startswith(("http://", "https://")) else f"http://{operator}"
        self.token_file = token_file
        self.db = db
        self.as_json = as_json

    def token(self) -> str:
        from moonshot.server.admin import read_token, token_path

        if self.token_file is None and os.environ.get(TOKEN_ENV):
            return os.environ[TOKEN_ENV].strip()
        path = Path(self.token_file) if self.token_file else token_path(self.db)
        try:
            return read_token(path)
        except OSError as e:
            raise click.ClickException(
                f"cannot read the operator token at {path} ({e.strerror or e}): give --token-file, "
                f"set {TOKEN_ENV}, or --db of the server's store (its token is written beside it)"
            ) from None

    def call(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        who = f"{getpass.getuser()}@{socket.gethostname()}"
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={
                "Authorization": f"Bearer {self.token()}",
                "Content-Type": "application/json",
                "X-Moonshot-Operator": who,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            try:
                why = json.loads(e.read()).get("error", e.reason)
            except (ValueError, AttributeError):
                why = e.reason
            raise click.ClickException(f"{e.code}: {why}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise click.ClickException(
                f"no operator surface at {self.base} ({reason}): is the server running, and is --operator "
                "its --operator-address?"
            ) from None

    def show(self, result: Any, line: str) -> None:
        click.echo(json.dumps(result, indent=2) if self.as_json else line)


@click.group("admin", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--operator",
    default="127.0.0.1:9380",
    show_default=True,
    metavar="HOST:PORT",
    help="The server's operator surface (serve --operator-address).",
)
@click.option("--token-file", default=None, type=click.Path(dir_okay=False), help="The operator token's file (0600).")
@click.option("--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the server's JSON answer.")
@click.pass_context
def admin_cmd(ctx: click.Context, operator: str, token_file: str | None, db: str, as_json: bool) -> None:
    """Operator controls on a running server: tables, close, ban, mute, notice, drain.

    In a cluster, ask any node: a ban, mute, unban, unmute or notice reaches every node, a close
    reaches the node hosting the game, and audit shows every node's actions. tables and drain
    are the asked node's own."""
    ctx.obj = _Target(operator, token_file, db, as_json)


def _until(entry: dict[str, Any]) -> str:
    return f"until {entry['until']}" if entry.get("until") else "permanently"


@admin_cmd.command("tables")
@click.pass_obj
def tables_cmd(target: _Target) -> None:
    """Running tables and their players (protocol, state, seats, names, addresses)."""
    out = target.call("/admin/tables")
    if target.as_json:
        target.show(out, "")
        return
    state = "draining" if out.get("draining") else "taking games"
    click.echo(f"{len(out['tables'])} running tables, {out.get('waiting', 0)} players waiting; {state}")
    for t in out["tables"]:
        click.echo(
            f"{t['id']}  {t['protocol']}  {t['variant']}  {t['state']}  deal {t['deal']}, {t['actions']} actions"
        )
        for s in t["seats"]:
            where = f" from {s['address']}" if s.get("address") else ""
            away = " (away, a bot plays)" if s.get("bot_playing") else " (away)" if s.get("away") else ""
            click.echo(f"  seat {s['seat']}: {s['name']} [{s['kind']}, {s['protocol']}]{where}{away}")


@admin_cmd.command("close")
@click.argument("table_id")
@click.option("--reason", default="", help="Told to every player of the table.")
@click.pass_obj
def close_cmd(target: _Target, table_id: str, reason: str) -> None:
    """End a running game: recorded as aborted, unrated; each player is told why. In a cluster,
    any node's operator address closes a game whichever node hosts it."""
    out = target.call("/admin/close", {"table": table_id, "reason": reason})
    host = out.get("host") if isinstance(out, dict) else None
    target.show(out, f"closed {table_id}" + (f" (sent to the node hosting it: {host})" if host else ""))


KIND = click.Choice(["name", "address"])


@admin_cmd.command("ban")
@click.argument("kind", type=KIND)
@click.argument("value")
@click.option("--for", "length", default=None, metavar="DURATION", help="90s, 30m, 12h, 7d (default: permanent).")
@click.option("--reason", default="", help="Shown to the banned client.")
@click.pass_obj
def ban_cmd(target: _Target, kind: str, value: str, length: str | None, reason: str) -> None:
    """Ban a NAME or an ADDRESS (or a network: 198.51.100.0/24) from every protocol; its open
    connections are closed. Bans are kept in the store."""
    out = target.call("/admin/ban", {"kind": kind, "value": value, "duration": length, "reason": reason})
    ban = out["ban"]
    target.show(out, f"banned {ban['kind']} {ban['value']} {_until(ban)}; {out['closed']} connections closed")


@admin_cmd.command("unban")
@click.argument("kind", type=KIND)
@click.argument("value")
@click.pass_obj
def unban_cmd(target: _Target, kind: str, value: str) -> None:
    """Lift a ban."""
    out = target.call("/admin/unban", {"kind": kind, "value": value})
    target.show(out, f"lifted the ban on {out['lifted']['kind']} {out['lifted']['value']}")


@admin_cmd.command("bans")
@click.pass_obj
def bans_cmd(target: _Target) -> None:
    """The bans and chat mutes in force."""
    out = target.call("/admin/bans")
    lines = [f"ban {b['kind']} {b['value']} {_until(b)} by {b['by']}: {b['reason']}" for b in out["bans"]]
    lines += [f"mute {m['value']} {_until(m)} by {m['by']}: {m['reason']}" for m in out["mutes"]]
    target.show(out, "\n".join(lines) or "no bans, no mutes")


@admin_cmd.command("mute")
@click.argument("name")
@click.option("--for", "length", default=None, metavar="DURATION", help="90s, 30m, 12h, 7d (default: permanent).")
@click.option("--reason", default="")
@click.pass_obj
def mute_cmd(target: _Target, name: str, length: str | None, reason: str) -> None:
    """Refuse NAME's chat lines (the web lobby's and tables' chat)."""
    out = target.call("/admin/mute", {"name": name, "duration": length, "reason": reason})
    target.show(out, f"muted {out['mute']['value']} {_until(out['mute'])}")


@admin_cmd.command("unmute")
@click.argument("name")
@click.pass_obj
def unmute_cmd(target: _Target, name: str) -> None:
    """Let NAME chat again."""
    out = target.call("/admin/unmute", {"name": name})
    target.show(out, f"unmuted {out['unmuted']['value']}")


@admin_cmd.command("notice")
@click.argument("message")
@click.pass_obj
def notice_cmd(target: _Target, message: str) -> None:
    """Show MESSAGE to everyone whose protocol can show text (the web app: a banner)."""
    out = target.call("/admin/notice", {"message": message})
    cannot = f"; not shown by {', '.join(out['not_shown'])} (no way to show text: logged)" if out["not_shown"] else ""
    target.show(out, f"shown by {', '.join(out['shown']) or 'no protocol'}{cannot}")


@admin_cmd.command("drain")
@click.pass_obj
def drain_cmd(target: _Target) -> None:
    """Take no new games, let the running ones finish, then exit 0 (rolling restarts)."""
    out = target.call("/admin/drain", {})
    target.show(out, f"draining: {len(out['running'])} running games finish, then the server exits")


@admin_cmd.command("audit")
@click.pass_obj
def audit_cmd(target: _Target) -> None:
    """The last admin actions: when, who, what."""
    import time

    out = target.call("/admin/audit")
    if target.as_json:
        target.show(out, "")
        return
    for e in out["audit"]:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e["at"]))
        what = {k: v for k, v in e.items() if k not in ("at", "by", "action")}
        click.echo(f"{when}Z {e['by']} {e['action']} {json.dumps(what)}")
    if not out["audit"]:
        click.echo("no admin actions yet", file=sys.stderr)


__all__ = ["admin_cmd"]
