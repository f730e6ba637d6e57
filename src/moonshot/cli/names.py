"""``moonshot names``: the operator's commands over the name bindings kept in the game store
(see :mod:`moonshot.http.names`). Registered on the ``moonshot`` group in :mod:`moonshot.cli.main`."""

from __future__ import annotations

import asyncio

import click

from moonshot.cli.commands import DB_HELP, DEFAULT_DB, bad_db, store_url_option
from moonshot.http.names import NAME_PREFIX, name_key


@click.group("names")
def names_cmd() -> None:
    """People's names on the web side, each bound to one browser (docs/security.md#names)."""


@names_cmd.command("release")
@click.argument("name")
@click.option("--db", default=DEFAULT_DB, show_default=True, callback=store_url_option, metavar="URL", help=DB_HELP)
def release_cmd(name: str, db: str) -> None:
    """Unbind NAME (any spelling of it) from its browser: the next browser to use the name takes it
    and gets a new recovery code. Works on the store, so a running server sees it at once."""
    from moonshot.store import Store, StoreError

    key = name_key(name)

    async def run() -> list[str]:
        store = await Store.open(db, create=False)
        try:
            gone = [k for k in await store.values(NAME_PREFIX) if name_key(k.removeprefix(NAME_PREFIX)) == key]
            for k in gone:
                await store.delete_value(k)
            return gone
        finally:
            await store.close()

    try:
        gone = asyncio.run(run())
    except StoreError as e:
        raise bad_db(e) from None
    if not gone:
        click.echo(f"no browser holds the name {name!r}", err=True)
        raise SystemExit(1)
    click.echo(f"released {name!r}: the next browser to use it takes it")


__all__ = ["names_cmd"]
