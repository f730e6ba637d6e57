"""The table rate (``tables_per_s`` / ``tables_burst``) for tables a cluster forms from its Redis
pools, tried as an attacker would: two nodes on the real Redis, one client address (127.0.0.2)
asking for many tables at once. The node that pops a group starts its table only while each
player's address may start one there; otherwise the group goes back to its pool in Redis and
waits, as on one process: formed once the rate allows, never if its players leave meanwhile.
Another address (127.0.0.3) is not held back. Skipped without Redis (see test_node.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from moonshot.cluster.kinds import pool_name, redis_key
from moonshot.protocols.sessions.codec import StreamDecoder, encode
from moonshot.runtime.limits import ClientLimits
from moonshot.runtime.lobby import GameType

from .test_node import REDIS_URL, async_test, eventually, node, redis_prefix  # noqa: F401  (a fixture)

ATTACKER = "127.0.0.2"
OTHER = "127.0.0.3"


class Frozen:
    """A table rate's clock, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Raw:
    """A Sessions connection from a chosen loopback address: many sessions, one a join."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.dec = StreamDecoder()
        self.started = 0  # start_game messages read so far
        self._reading = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, port: int | None, source: str) -> Raw:
        assert port is not None
        r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        return cls(r, w)

    async def _read(self) -> None:
        while data := await self.reader.read(65536):
            self.started += sum(1 for m in self.dec.feed(data) if isinstance(m, dict) and m.get("type") == "start_game")

    def join(self, code: str) -> None:
        self.writer.write(
            encode(
                {
                    "type": "game_session_request",
                    "seq_num": 1,
                    "player_tag": "p",
                    "player_kind": "human",
                    "game_type": "any",
                    "lobby_code": code,
                }
            )
        )

    def close(self) -> None:
        self._reading.cancel()
        self.writer.close()


async def waiting_in(prefix: str, code: str) -> int:
    """Tickets in the Redis pool of Sessions ``any`` games with ``code``."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(REDIS_URL)
    try:
        return int(await r.llen(redis_key(prefix, "lobby", pool_name(("sessions", GameType.ANY, code)))))
    finally:
        await r.aclose()


async def until_waiting(prefix: str, codes: list[str], want: Any) -> None:
    """Until ``want`` holds of the numbers of tickets waiting in the pools of ``codes``."""
    for _ in range(6000):
        if want([await waiting_in(prefix, code) for code in codes]):
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"the pools of {codes} never held what was wanted")


@async_test
async def test_an_address_starts_pooled_tables_at_its_rate_and_another_is_not_held_back(
    redis_prefix: str,  # noqa: F811
) -> None:
    limits = ClientLimits(tables_per_s=0.5, tables_burst=2)
    a = await node(redis_prefix, limits=limits)
    b = await node(redis_prefix, limits=limits)
    # the rate's clock moves only when the test says: on a busy machine the steps below may take
    # longer than the 2 s a token takes to refill, and the paced group would start too early
    clock = Frozen()
    for n in (a, b):
        n.guard.tables_by_address.clock = clock
    conns: list[Raw] = []
    try:
        # three of the attacker's players wait on node b in each of three pools; its fourth, on
        # node a, completes each group: node a pops all three and forms two of them
        on_b = await Raw.connect(b.sessions_port, ATTACKER)
        on_a = await Raw.connect(a.sessions_port, ATTACKER)
        conns += [on_a, on_b]
        for k in range(3):
            for _ in range(3):
                on_b.join(f"g{k}")
        await until_waiting(redis_prefix, ["g0", "g1", "g2"], lambda n: n == [3, 3, 3])
        for k in range(3):
            on_a.join(f"g{k}")
        assert a.lobby is not None
        await eventually(lambda: a.cluster.formed == 2 and a.lobby.paced >= 1)
        assert b.cluster.formed == 0 and a.guard.refusals()["tables_by_address"] >= 1
        # the paced group waits in its pool in Redis (its players on both nodes keep waiting)
        left = [code for code in ("g0", "g1", "g2") if await waiting_in(redis_prefix, code) == 4]
        assert len(left) == 1
        # another address's players, meanwhile: their table starts at once
        other = await Raw.connect(a.sessions_port, OTHER)
        conns.append(other)
        for _ in range(4):
            other.join("mine")
        await eventually(lambda: other.started == 4, timeout=10)
        assert await waiting_in(redis_prefix, left[0]) == 4  # still waiting for its address's rate
        # once the address may start a table again, the waiting group is popped and formed
        clock.now += 2.0
        await eventually(lambda: on_a.started + on_b.started == 12)
        assert await waiting_in(redis_prefix, left[0]) == 0
        assert a.cluster.formed + b.cluster.formed == 4
        assert set(a.guard.tables_by_address.buckets) == {ATTACKER, OTHER}
    finally:
        for c in conns:
            c.close()
        await a.stop()
        await b.stop()


@async_test
async def test_paced_players_who_leave_never_get_their_tables(
    redis_prefix: str,  # noqa: F811
) -> None:
    limits = ClientLimits(tables_per_s=0.01, tables_burst=1)
    a = await node(redis_prefix, limits=limits, fill_wait=0.05)
    b = await node(redis_prefix, limits=limits, fill_wait=0.05)
    try:
        flood = await Raw.connect(a.sessions_port, ATTACKER)
        for k in range(3):  # three lone players: each table filled with bots
            flood.join(f"f{k}")
        assert a.lobby is not None
        await eventually(lambda: flood.started == 1 and a.lobby.paced >= 2)
        codes = [f"f{k}" for k in range(3)]
        # the two paced lone players wait in their pools (in Redis, not in the node)
        await until_waiting(redis_prefix, codes, lambda n: sorted(n) == [0, 1, 1])
        flood.close()  # they leave: their tickets go, no table is ever started for them
        await until_waiting(redis_prefix, codes, lambda n: n == [0, 0, 0])
        await eventually(lambda: a.lobby is not None and a.lobby.waiting() == 0)
        assert a.cluster.formed + b.cluster.formed == 1
    finally:
        await a.stop()
        await b.stop()


@async_test
async def test_a_web_game_started_through_another_node_counts_the_real_clients_address(
    redis_prefix: str,  # noqa: F811
) -> None:
    """A request for a game another node hosts is forwarded there with its client's address: the
    table rate the hosting node asks when the game starts is that client's, not a blank one."""
    import httpx

    limits = ClientLimits(tables_per_s=0.01, tables_burst=1, tarpit=0.0)
    a = await node(redis_prefix, sessions_port=None, http_port=0, secret=None, limits=limits)
    b = await node(redis_prefix, sessions_port=None, http_port=0, secret=None, limits=limits)

    def browser(app: Any, name: str, source: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{app.http_port}",
            cookies={"name": name},
            transport=httpx.AsyncHTTPTransport(local_address=source),
            timeout=30,
        )

    async def game_with_two_bots(c: httpx.AsyncClient) -> str:
        game_id = str((await c.post("/lobby/new", json={"variant": "standard"})).json())
        for _ in range(2):
            assert (await c.post("/lobby/add_bot", json={"id": game_id})).status_code == 200
        return game_id

    try:
        assert a.turbo is not None and b.turbo is not None
        async with (
            browser(a, "ann", OTHER) as ann,
            browser(a, "cy", "127.0.0.4") as cy,
            browser(b, "mal", ATTACKER) as mal,
        ):
            first = await game_with_two_bots(ann)
            await eventually(lambda: first in b.turbo.lobby_state()["games"])  # type: ignore[union-attr]
            assert (await mal.post("/lobby/join", json={"id": first})).status_code == 200  # through b
            assert a.turbo.games[first].hosted is not None
            assert set(a.guard.tables_by_address.buckets) == {OTHER, ATTACKER}
            second = await game_with_two_bots(cy)
            await eventually(lambda: second in b.turbo.lobby_state()["games"])  # type: ignore[union-attr]
            r = await mal.post("/lobby/join", json={"id": second})
            assert r.status_code == 429 and r.json()["code"] == "too_many_tables"
            assert a.turbo.games[second].hosted is None and len(a.turbo.games[second].members) == 3
        assert b.turbo.peers is not None and b.turbo.peers.forwarded >= 2
    finally:
        await a.stop()
        await b.stop()
