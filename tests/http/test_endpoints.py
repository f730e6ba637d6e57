"""A refusal's JSON: ``error`` (the English every API client reads) and, where the server gives
one, ``code`` and ``args`` (the web app's catalogue key error.<code> and its arguments); every code
the HTTP side can answer has its message in the web app's catalogues."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

import moonshot
from moonshot.bots.registry import bot_names, make_bot
from moonshot.core.refusals import REASON_CODES
from moonshot.http.endpoints import endpoint, error_body
from moonshot.http.identity import Identity
from moonshot.http.lobby import TurboLobby
from moonshot.http.webapp import STATIC_DIR
from moonshot.protocols.turbo.codec import RequestError

SRC = Path(moonshot.__file__).parent


def test_an_error_body_has_its_code_and_args_only_when_given() -> None:
    assert error_body("the game is full") == {"error": "the game is full"}
    assert error_body("the game is full", "game_full") == {"error": "the game is full", "code": "game_full"}
    with_args = {"error": "no game 'x'", "code": "no_game", "args": {"id": "x"}}
    assert error_body("no game 'x'", "no_game", {"id": "x"}) == with_args


@pytest.mark.asyncio
async def test_a_route_answers_a_refusal_with_its_code_and_args() -> None:
    async def refuse(request: Request, caller: Any) -> Any:
        raise RequestError(409, "alice is already in this game", "already_in_game", {"name": "alice"})

    async def plain(request: Request, caller: Any) -> Any:
        raise RequestError(400, "something else")

    async def crash(request: Request, caller: Any) -> Any:
        raise RuntimeError("boom")

    identity = Identity("secret")
    app = Starlette(
        routes=[
            Route(path, endpoint(handler, lambda: identity, anonymous=True))
            for path, handler in (("/refuse", refuse), ("/plain", plain), ("/crash", crash))
        ]
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        r = await client.get("/refuse")
        assert r.status_code == 409
        said = r.json()
        assert said == {"error": "alice is already in this game", "code": "already_in_game", "args": {"name": "alice"}}
        r = await client.get("/plain")
        assert r.status_code == 400 and r.json() == {"error": "something else"}
        r = await client.get("/crash")
        assert r.status_code == 500 and r.json()["code"] == "internal" and "boom" not in r.text


def lobby() -> TurboLobby:
    return TurboLobby(secret="s", make_bot=make_bot, bot_names=bot_names())


def refusal(fn: Any, *args: Any) -> RequestError:
    with pytest.raises(RequestError) as e:
        fn(*args)
    return e.value


@pytest.mark.asyncio
async def test_the_lobbys_refusals_carry_codes_the_web_app_knows() -> None:
    lob = lobby()
    e = refusal(lob.new_game, "ann", {"clock": 0})  # a rated game must have a clock
    assert (e.status, e.code) == (400, "rated_needs_clock")
    e = refusal(lob.new_game, "ann", {"variant": "bridge"})
    assert (e.code, e.params) == ("unknown_variant", {"variant": "bridge"})
    gid = lob.new_game("ann", {})
    e = refusal(lob.join, "ann", {"id": gid})
    assert (e.status, e.code, e.params) == (409, "already_in_game", {"name": "ann"})
    e = refusal(lob.add_bot, "ann", {"id": gid, "algorithm": "nonsense"})
    assert (e.code, e.params) == ("unknown_bot", {"bot": "nonsense"})
    e = refusal(lob.add_bot, "bob", {"id": gid})
    assert (e.status, e.code, e.params) == (403, "not_in_game", {"name": "bob"})
    e = refusal(lob.join, "bob", {"id": "nope"})
    assert (e.status, e.code, e.params) == (404, "no_game", {"id": "nope"})


# ---- every code has its words -------------------------------------------------------------------

MESSAGE = r"""(?:f?"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.]*(?:\([^()]*\))?)"""
CODE_SITES = [
    # RequestError(status, message, "code" ...)
    re.compile(r"RequestError\(\s*\d{3},\s*" + MESSAGE + r',\s*"([a-z_]+)"', re.S),
    # ClockError / NameRefused (message, "code" ...) and their default codes
    re.compile(r"(?:ClockError|NameRefused)\(\s*" + MESSAGE + r',\s*"([a-z_]+)"', re.S),
    re.compile(r'code: str = "([a-z_]+)"'),
    # the HTTP guard's answers: _answer(send, status, message, retry, "code" ...), and its
    # operator refusals: code, args = "code", {...}
    re.compile(r"_answer\(\s*send,\s*\d{3},\s*" + MESSAGE + r',\s*[\w.]+,\s*"([a-z_]+)"', re.S),
    re.compile(r'code, args = "([a-z_]+)"'),
    # the Trend node's refusals of a seat (Reason(message, "code" ...)): its seat page shows them
    re.compile(r"Reason\(\s*" + MESSAGE + r',\s*"([a-z_]+)"', re.S),
    # the web app's own (an ApiError made in the page)
    re.compile(r'new ApiError\(\d{3},\s*"(?:[^"\\]|\\.)*",\s*"([a-z_]+)"'),
]


def codes_in(paths: list[Path]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for site in CODE_SITES:
            found.update(site.findall(text))
    return found


def test_every_error_code_the_server_answers_has_words_in_every_catalogue() -> None:
    paths = [
        *sorted((SRC / "http").glob("*.py")),
        SRC / "protocols" / "turbo" / "codec.py",
        SRC / "runtime" / "clock.py",
        SRC / "server" / "trend_node.py",
        *sorted((STATIC_DIR / "js").glob("*.js")),
    ]
    codes = codes_in(paths)
    # the scan finds the codes where they are made (so this test cannot pass on an empty scan)
    assert {"game_full", "no_game", "rated_needs_clock", "bad_name", "banned", "rate_limited", "no_review"} <= codes
    assert {"trend_seats_locked", "trend_seat_taken"} <= codes
    # the node's answers to a malformed seat request (POST /api/seats, /api/human)
    assert {"trend_seats_four", "trend_seat_not_object", "trend_unknown_seat_kind", "trend_bad_player_number"} <= codes
    for lang in ("en", "pl"):
        catalogue = json.loads((STATIC_DIR / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        missing = sorted(c for c in codes if f"error.{c}" not in catalogue)
        assert not missing, f"{lang}.json has no error.<code> for {missing}"


def test_every_reason_the_engine_refuses_with_has_words_in_every_catalogue() -> None:
    # a refused move answers error.illegal.<code> (http/games.py refused): every code the engine
    # raises (tests/core/test_refusals.py holds REASON_CODES to engine.py) is translated, and a
    # message uses only the arguments its code carries
    assert len(REASON_CODES) > 20
    for lang in ("en", "pl"):
        catalogue = json.loads((STATIC_DIR / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        missing = sorted(c for c in REASON_CODES if f"error.illegal.{c}" not in catalogue)
        assert not missing, f"{lang}.json has no error.illegal.<code> for {missing}"
        for code, params in REASON_CODES.items():
            used = set(re.findall(r"\{(\w+)\s*[,}]", catalogue[f"error.illegal.{code}"]))
            assert used <= set(params), (lang, code, used - set(params))


def test_a_refused_move_answers_its_reason_code_and_args() -> None:
    from moonshot.core.refusals import Reason
    from moonshot.http.games import refused

    err = refused(
        Reason("N may not play 5D: must follow spades", "must_follow", {"seat": 0, "card": "5D", "suit": "spades"})
    )
    assert (err.status, str(err), err.code) == (409, "N may not play 5D: must follow spades", "illegal.must_follow")
    assert err.params == {"seat": 0, "card": "5D", "suit": "spades"}
    other = refused("the table has ended (closed)")
    assert (other.code, other.params) == ("action_refused", {"reason": "the table has ended (closed)"})
