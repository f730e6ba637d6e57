"""No client input gets a 5xx: every body field, bot spec, filler and token over HTTP is checked
before anything is made, and a bad one is a 400 that says what is wrong.

The known cases first, each as an attacker sends it to a real ``moonshot serve`` on loopback;
then a fuzzer (``fuzz`` marker) sends every route random JSON bodies, wrong types, bad Unicode,
huge numbers, odd cookies and paths: never a 5xx, and nothing logged as a server error. Its size
follows ``MOONSHOT_FUZZ_MESSAGES`` like the codec fuzzers (a tenth of it in requests: 500 by
default)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ_MESSAGES
from fuzzkit import json_value, mutate
from moonshot.server.app import ServerApp
from security.attack import browser, serve

REQUESTS = max(100, FUZZ_MESSAGES // 10)
BATCH = 25


async def tournaments(app: ServerApp) -> int:
    assert app.tournaments is not None
    return len(app.tournaments.tournaments)


@pytest.mark.asyncio
async def test_a_bot_spec_with_an_unknown_option_is_a_400(tmp_path: Path) -> None:
    async with serve(tmp_path) as app, browser(app, "mallory") as c:
        for bots, why in (
            (["heuristic --foo 1", "random"], "no option --foo"),
            (["search --think-ms abc", "random"], "--think-ms must be an integer"),
            (["search --worlds -3", "random"], "--worlds must be an integer from 0"),
            (["learned --temperature nan", "random"], "--temperature must be a number"),
            (["heuristic --weights 1", "random"], "--weights is not taken over the network"),
            (["nosuchbot", "random"], "unknown bot"),
            (["level:99", "random"], "unknown level level:99"),
            (["level:2 --think-ms 5", "random"], "level:2 takes no options"),
            (["search --rollout 'a b", "random"], "cannot read entrant"),
        ):
            r = await c.post("/api/tournaments", json={"bots": bots, "sets": 1})
            assert r.status_code == 400 and why in r.json()["error"], (bots, r.text)
        assert await tournaments(app) == 0


@pytest.mark.asyncio
async def test_a_bad_filler_is_refused_before_the_tournament_is_made(tmp_path: Path) -> None:
    async with serve(tmp_path) as app, browser(app, "mallory") as c:
        for filler in ("nosuchbot", "heuristic --foo 1", "", "../../etc/passwd", "level:0"):
            r = await c.post("/api/tournaments", json={"bots": ["random"] * 3, "filler": filler, "sets": 1})
            assert r.status_code == 400 and "filler" in r.json()["error"], (filler, r.text)
        assert await tournaments(app) == 0
        assert (await c.get("/api/tournaments")).json() == []


@pytest.mark.asyncio
async def test_bad_unicode_in_any_field_is_a_400(tmp_path: Path) -> None:
    async with serve(tmp_path) as app, browser(app, "mallory") as c:
        gid = (await c.post("/lobby/new", json={"variant": "standard"})).json()
        h = {"Content-Type": "application/json"}
        for path, raw in (
            ("/api/tournaments/play", b'{"token": "\\ud800"}'),
            ("/api/tournaments/play", b'{"token": "\\udfff\\ud800"}'),
            ("/api/tournaments", b'{"bots": ["random", "random"], "externals": ["\\ud800"]}'),
            ("/lobby/chat", b'{"message": "hi \\ud83d"}'),
            ("/game/chat", b'{"id": "' + gid.encode() + b'", "message": "\\udc00"}'),
            ("/lobby/join", b'{"id": "\\ud800"}'),
            ("/api/names/recover", b'{"name": "\\ud800", "code": "x"}'),
            ("/lobby/chat", b'{"message": "\xed\xa0\x80"}'),  # a surrogate in raw UTF-8: not UTF-8
        ):
            r = await c.post(path, content=raw, headers=h)
            assert r.status_code == 400, (path, raw, r.text)
        assert await tournaments(app) == 0


@pytest.mark.asyncio
async def test_huge_and_odd_numbers_are_a_400(tmp_path: Path) -> None:
    """Held before these guards; kept."""
    async with serve(tmp_path) as app, browser(app, "mallory") as c:
        h = {"Content-Type": "application/json"}
        for path, raw in (
            ("/api/tournaments", b'{"bots": ["random", "random"], "sets": 100000000000000000000000000000}'),
            ("/api/tournaments", b'{"bots": ["random", "random"], "sets": 1e999}'),
            ("/api/tournaments", b'{"bots": ["random", "random"], "sets": NaN}'),
            ("/api/tournaments", b'{"bots": ["random", "random"], "deals_per_set": -1}'),
            ("/api/tournaments", b'{"bots": ["random", "random"], "sets": 1' + b"0" * 5000 + b"}"),
            ("/api/tournaments/play", b'{"token": "x", "wait": 1e308}'),
            ("/lobby/new", b'{"variant": "standard", "seed": -1}'),
            ("/lobby/new", b'{"variant": "standard", "seed": 18446744073709551616}'),
        ):
            r = await c.post(path, content=raw, headers=h)
            assert r.status_code == 400, (path, raw[:80], r.text)
        assert await tournaments(app) == 0


# ------------------------------------------------------------------ the fuzzer
GAME_FIELDS = ["id", "card", "cards", "claimer", "message"]
ROUTES = {
    "/lobby/new": ["rules", "variant", "seed", "practice"],
    "/lobby/join": ["id", "rules"],
    "/lobby/add_bot": ["id", "rules", "algorithm"],
    "/lobby/leave": ["id"],
    "/lobby/chat": ["message"],
    **{
        f"/game/{k}": GAME_FIELDS for k in ("pass", "charge", "expose", "play", "claim", "accept_claim", "reject_claim")
    },
    "/game/chat": GAME_FIELDS,
    "/api/tournaments": ["variant", "sets", "deals_per_set", "seed", "bots", "externals", "filler"],
    "/api/tournaments/play": ["token", "wait"],
    "/api/names/recover": ["name", "code"],
}
POSTS = list(ROUTES)
BAD_TEXT = ["\ud800", "\udfff\ud800", "", " ", "x" * 5000, "\x00", "<b>", "é" * 41]
FIELD_VALUES: dict[str, list[Any]] = {
    "token": ["x", *BAD_TEXT],
    "wait": [0, 1, -1, 10**30, 1.5, "5", None, True],
    "bots": [
        ["heuristic --foo 1", "random"],
        ["random", "random"],
        ["nosuchbot", "random"],
        ["search --think-ms abc", "random"],
        ["heuristic --weights 1", "random"],
        ["search --network /etc/passwd", "random"],
        ["learned --temperature nan", "random"],
        ["random --x", "random"],
        ["a=random", "a=random"],
        ["random", "\ud800"],
        ["random"] * 41,
        "random",
    ],
    "externals": [["alice"], ["\ud800"], ["alice", "alice"], [""], ["x" * 65], [5], "alice"],
    "filler": ["nosuchbot", "heuristic", "random", "heuristic --foo 1", "", "\ud800", 5],
    "sets": [0, 1, 2, 1001, 10**30, -1, 1.0, "1", True],
    "deals_per_set": [0, 1, 53, -1, 2.5],
    "seed": [0, 1, 2**62, 2**62 + 1, -1, 10**30, 1e300, "1"],
    "practice": [True, False, "true", 1, None, [True]],
    "variant": ["standard", "turbo", "kierki", "omnibus", "trend", "gym", "nosuch", "STANDARD", "\ud800", 5],
    "rules": ["classic", "blind", "chain", "bridge", "nosuch", 5, "\ud800"],
    "algorithm": ["random", "heuristic", "search", "nosuch", "heuristic --foo 1", "\ud800"],
    "card": ["QS", "2C", "AH", "10H", "TH", "XX", "", "\ud800", 12, ["QS"]],
    "cards": [["2C", "3C", "4C"], ["QS"], ["AH", "AH", "AH"], [], "QS", ["\ud800"], [1, 2, 3]],
    "claimer": [0, 1, 3, 4, -1, "N", "north", None, 2**70],
    "message": ["hi", *BAD_TEXT, "x" * 2000],
    "name": ["alice", "fuzzer", *BAD_TEXT, "x (bot)"],
    "code": ["AAAA-AAAA-AAAA-AAAA-AAAA", *BAD_TEXT],
    "id": ["nope", *BAD_TEXT],
}
OTHER_FIELDS = ["playerNumber", "seat", "name", "player", "__proto__", ""]
GETS = [
    "/api/me", "/api/variants", "/api/bots", "/api/levels", "/api/games", "/api/games/{x}", "/api/tournaments",
    "/api/tournaments/{x}", "/api/tournaments/{x}/results", "/api/tournaments/{x}/standings.png", "/leaderboard",
    "/leaderboard/games", "/lobby", "/game", "/history", "/tournaments", "/static/{x}", "/{x}",
]  # fmt: skip
STREAMS = ["/lobby/subscribe", "/game/subscribe/{x}"]
QUERY = ["limit", "offset", "variant", "player", "bot", "format"]
GOOD = [
    "standard", "turbo", "classic", "chain", "random", "heuristic", "QS", "2C", ["2C", "3C", "4C"], 0, 1, 3, "N",
    ["random", "random"], ["heuristic --foo 1"], ["search --think-ms 5", "random"], "nosuchbot", "\ud800", "x" * 300,
    "level:2", "level:99", "level:", ["level:1", "level:3 --think-ms 5"],
    "<script>alert(1)</script>", "../../etc/passwd", 10**30, -1, 1e308, True, None, "alice", "AAAA-AAAA-AAAA-AAAA-AAAA",
]  # fmt: skip
NAMES = ["fuzzer", "fuzzer", "fuzzer", "Fuzzer", "ｆｕｚｚｅｒ", "x (bot)", "", " ", "%FF", "a%00", "\u00e9", "z" * 50]


def valid_body(path: str, ids: list[str]) -> dict[str, Any]:
    """A body the route takes (``ids``: two games, a tournament, its token)."""
    gid = ids[0] if ids else "x"
    bodies: dict[str, dict[str, Any]] = {
        "/lobby/new": {"variant": "standard", "rules": "classic"},
        "/lobby/add_bot": {"id": gid, "algorithm": "random"},
        "/lobby/chat": {"message": "hi"},
        "/game/pass": {"id": gid, "cards": ["2C", "3C", "4C"]},
        "/game/play": {"id": gid, "card": "2C"},
        "/game/accept_claim": {"id": gid, "claimer": 1},
        "/game/chat": {"id": gid, "message": "hi"},
        "/api/tournaments": {"variant": "standard", "sets": 1, "bots": ["random", "random"], "filler": "random"},
        "/api/tournaments/play": {"token": ids[-1] if ids else "x", "wait": 0},
        "/api/names/recover": {"name": "fuzzer", "code": "AAAA-AAAA-AAAA-AAAA-AAAA"},
    }
    return dict(bodies.get(path, {"id": gid}))


def field_value(rng: random.Random, key: str, ids: list[str]) -> Any:
    extra = [*GOOD, *ids]
    pick = rng.random()
    if pick < 0.7 and key in FIELD_VALUES:
        return rng.choice(FIELD_VALUES[key] + (ids if key in ("id", "token") else []))
    return rng.choice(extra) if pick < 0.75 else json_value(rng, 2, extra)


def body_for(rng: random.Random, path: str, ids: list[str]) -> bytes:
    roll = rng.random()
    extra = [*GOOD, *ids]
    if roll < 0.5:  # a good body with one or two things wrong
        body = valid_body(path, ids)
        fields = ROUTES[path] if rng.random() < 0.85 else OTHER_FIELDS
        for key in rng.sample(fields, min(len(fields), rng.randint(1, 2))):
            if rng.random() < 0.15:
                body.pop(key, None)
            else:
                body[key] = field_value(rng, key, ids)
        return json.dumps(body, ensure_ascii=rng.random() < 0.5, allow_nan=True).encode("utf-8", "surrogatepass")
    if roll < 0.75:
        body: dict[str, Any] = {}
        for key in ROUTES[path] + rng.sample(OTHER_FIELDS, rng.randint(0, 2)):
            if rng.random() < 0.8:
                body[key] = field_value(rng, key, ids)
        if "id" in body and ids and rng.random() < 0.5:
            body["id"] = rng.choice(ids)
        raw = json.dumps(body, ensure_ascii=rng.random() < 0.5, allow_nan=True).encode("utf-8", "surrogatepass")
        return mutate(rng, raw) if rng.random() < 0.15 else raw
    if roll < 0.82:
        return json.dumps(json_value(rng, 3, extra), allow_nan=True).encode("utf-8", "surrogatepass")
    if roll < 0.92:
        return mutate(rng, b'{"id": "' + (rng.choice(ids) if ids else "x").encode() + b'", "card": "QS"}')
    return rng.choice([b"", b"{", b"{}" * 3, b"[" * 3000, b'{"a": ' * 2000, b"\xff\xfe", b"1" * 6000, b'"\\ud800"'])


def request_for(
    rng: random.Random, ids: list[str], post: str | None = None
) -> tuple[str, str, bytes | None, dict[str, str], dict[str, str]]:
    """One request: a POST to ``post`` (or, when None, to any route, or a GET)."""
    cookies: dict[str, str] = {}
    name = rng.choice(NAMES)
    if name:
        cookies["name"] = (
            quote(name, safe="%") if rng.random() < 0.8 else "".join(rng.choice("%;=,\"'\\ab") for _ in range(6))
        )
    if rng.random() < 0.2:
        cookies["moonshot_session"] = rng.choice(["x", "e30.x", "W10.abc.def", "%" * 10])
    x = rng.choice([*ids, "t0", "..%2F..", "x" * 300, "%ff", "0", "a b"]) if rng.random() < 0.9 else "nope"
    kind = 0.0 if post is not None else rng.random()
    if kind < 0.5:
        path = post or rng.choice(POSTS)
        return "POST", path, body_for(rng, path, ids), cookies, {}
    params = {
        k: str(json_value(rng, 0, ["standard", "csv", "json", "1"])) for k in rng.sample(QUERY, rng.randint(0, 3))
    }
    path = rng.choice(STREAMS if kind > 0.95 else GETS).replace("{x}", quote(x, safe=""))
    return "GET", path, None, cookies, params


async def send(base: str, req: tuple[str, str, bytes | None, dict[str, str], dict[str, str]]) -> int:
    method, path, body, cookies, params = req
    headers = {"Origin": base, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}
    headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    async with (
        httpx.AsyncClient(base_url=base, timeout=30) as c,
        c.stream(method, path, content=body, headers=headers, params=params) as r,
    ):
        return r.status_code  # a stream's status is enough: its body never ends


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


@pytest.mark.fuzz
def test_fuzzing_every_http_route_never_gets_a_5xx(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    errors = Errors()
    logging.getLogger("moonshot").addHandler(errors)
    cm = serve(tmp_path, fill_wait=None)
    try:
        app = loop.run_until_complete(cm.__aenter__())
        base = f"http://127.0.0.1:{app.http_port}"

        async def setup() -> list[str]:
            async with browser(app, "fuzzer") as c:
                gids = [(await c.post("/lobby/new", json={"variant": v})).json() for v in ("standard", "turbo")]
                r = await c.post("/api/tournaments", json={"bots": ["random"] * 2, "externals": ["fuzzer"], "sets": 1})
                assert r.status_code == 201
                return [*gids, r.json()["id"], r.json()["tokens"]["fuzzer"]]

        ids = loop.run_until_complete(setup())
        seen: dict[int, int] = {}
        sent = 0

        @settings(
            max_examples=max(1, REQUESTS // BATCH),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.integers(min_value=0, max_value=2**64))
        def batch(seed: int) -> None:
            nonlocal sent
            rng = random.Random(seed)
            # every POST route in every batch, then anything
            reqs = [request_for(rng, ids, p) for p in POSTS]
            reqs += [request_for(rng, ids) for _ in range(BATCH - len(reqs))]

            async def all_of() -> list[int]:
                return list(await asyncio.gather(*(send(base, r) for r in reqs)))

            statuses = loop.run_until_complete(all_of())
            for req, status in zip(reqs, statuses):
                seen[status] = seen.get(status, 0) + 1
                assert status < 500, (status, req)
            sent += len(reqs)

        batch()
        assert sent >= REQUESTS - BATCH
        assert errors.records == [], errors.records[:5]
        assert seen.get(400, 0) > 0 and seen.get(200, 0) > 0, seen  # it reached the handlers
    finally:
        loop.run_until_complete(cm.__aexit__(None, None, None))
        logging.getLogger("moonshot").removeHandler(errors)
        loop.close()


def test_the_fuzzer_makes_what_it_claims() -> None:
    rng = random.Random(5)
    reqs = [request_for(rng, ["g1", "t1"]) for _ in range(400)]
    assert {r[1] for r in reqs} >= set(POSTS)
    assert any(r[0] == "GET" for r in reqs)
    bodies: list[Any] = [r[2] for r in reqs if r[2] is not None]
    assert any(b"\\ud800" in b for b in bodies) and any(b[:1] == b"{" for b in bodies)


NODE_ROUTES = {
    "/api/seats": ["seats"],
    "/api/human": ["playerNumber"],
    "/game/play": GAME_FIELDS,
    "/game/pass": GAME_FIELDS,
    "/game/chat": GAME_FIELDS,
}
NODE_VALUES: dict[str, list[Any]] = {
    "seats": [
        [{"kind": "dummy", "bot": "random"}] * 4,
        [{"kind": "human"}] * 4,
        [{"kind": "nosuch"}] * 4,
        [{"kind": "dummy", "bot": "heuristic --foo 1"}] * 4,
        [{"kind": "dummy", "bot": "\ud800"}] * 4,
        [None] * 4,
        [],
        {},
    ],
    "playerNumber": [1, 4, 0, 5, "1", 1.0, True, 10**30, None],
}


@pytest.mark.fuzz
def test_fuzzing_the_trend_nodes_routes_never_gets_a_5xx() -> None:
    from moonshot.server.trend_node import NodeConfig, NodeServer

    loop = asyncio.new_event_loop()
    errors = Errors()
    logging.getLogger("moonshot").addHandler(errors)
    server = NodeServer(NodeConfig(port=0, seed=3))
    try:
        port = loop.run_until_complete(server.start())
        base = f"http://127.0.0.1:{port}"
        seen: dict[int, int] = {}

        def node_request(rng: random.Random) -> tuple[str, str, bytes | None, dict[str, str], dict[str, str]]:
            cookies = {"name": quote(rng.choice(NAMES), safe="%")}
            if rng.random() < 0.2:
                return (
                    "GET",
                    rng.choice(["/api/state", "/api/me", "/api/variants", "/", "/game", "/lobby"]),
                    None,
                    cookies,
                    {},
                )
            path = rng.choice(list(NODE_ROUTES))
            if rng.random() < 0.8:
                body: dict[str, Any] = {}
                for key in NODE_ROUTES[path]:
                    if rng.random() < 0.85:
                        values = NODE_VALUES.get(key) or FIELD_VALUES.get(key) or GOOD
                        body[key] = rng.choice(values) if rng.random() < 0.6 else json_value(rng, 2, GOOD)
                raw = json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass")
            else:
                raw = rng.choice([b"", b"[" * 3000, b"\xff", b"null", mutate(rng, b'{"seats": [], "playerNumber": 1}')])
            return "POST", path, raw, cookies, {}

        @settings(
            max_examples=max(1, REQUESTS // 5 // BATCH),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.integers(min_value=0, max_value=2**64))
        def batch(seed: int) -> None:
            rng = random.Random(seed)
            reqs = [node_request(rng) for _ in range(BATCH)]

            async def all_of() -> list[int]:
                return list(await asyncio.gather(*(send(base, r) for r in reqs)))

            for req, status in zip(reqs, loop.run_until_complete(all_of())):
                seen[status] = seen.get(status, 0) + 1
                assert status < 500, (status, req)

        batch()
        assert errors.records == [], errors.records[:5]
        assert seen.get(400, 0) > 0, seen
    finally:
        loop.run_until_complete(server.stop())
        logging.getLogger("moonshot").removeHandler(errors)
        loop.close()


@pytest.mark.asyncio
async def test_deeply_nested_json_at_the_trend_nodes_seat_page_is_a_400() -> None:
    from moonshot.server.trend_node import NodeConfig, NodeServer

    server = NodeServer(NodeConfig(port=0))
    port = await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as c:
            h = {"Content-Type": "application/json"}
            for raw, status in ((b"[" * 5000, 400), (b'{"seats": ' + b"[" * 5000 + b"}", 400), (b"x" * 70_000, 413)):
                r = await c.post("/api/seats", content=raw, headers=h)
                assert r.status_code == status and "error" in r.json(), raw[:20]
    finally:
        await server.stop()
