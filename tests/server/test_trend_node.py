"""The node's pieces without sockets: seat settings, tokens files, pacing, the match's seating."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from moonshot.core.events import CardPlayed, DealEnded, TrickEnded
from moonshot.protocols.trend import codec as tc
from moonshot.server.trend_node import (
    NodeConfig,
    SeatSetting,
    TrendNode,
    load_tokens,
    node_app,
    pacing,
    parse_seats,
    refusal_body,
)


def test_parse_seats() -> None:
    assert parse_seats("empty,dummy,human,dummy:search") == [
        SeatSetting("empty", "heuristic"),
        SeatSetting("dummy", "heuristic"),
        SeatSetting("human", "heuristic"),
        SeatSetting("dummy", "search"),
    ]
    for bad in ("empty,dummy", "empty,robot,empty,empty", "human:search,empty,empty,empty", "dummy:nope,e,e,e"):
        with pytest.raises(ValueError):
            parse_seats(bad)


def test_load_tokens(tmp_path: Path) -> None:
    f = tmp_path / "t"
    f.write_text("1 a\n# comment\n\n4=b c\n")
    assert load_tokens(f) == {1: "a", 4: "b c"}
    for bad in ("5 x\n", "1\n", "x y\n"):
        f.write_text(bad)
        with pytest.raises(ValueError, match="PLAYER_NUMBER TOKEN"):
            load_tokens(f)


def test_pacing_follows_the_seed_intervals() -> None:
    pause = pacing(NodeConfig(command_interval=0.5, round_interval=2.0, deal_interval=3.0))
    card = CardPlayed(0, 5, 1)
    trick = TrickEnded(1, 0, (1, 2, 3, 4), (0, 1, 2, 3), 0)
    deal = DealEnded(0, (0, 0, 0, 0), (0, 0, 0, 0), None, (0, 0, 0, 0), 13, False)
    assert pause([card]) == 0.5
    assert pause([card, trick]) == 2.0
    assert pause([card, trick, deal]) == 3.0
    assert pause([]) == 0.0
    assert pacing(NodeConfig(command_interval=0, round_interval=0, deal_interval=0))([card, trick, deal]) == 0


@pytest.mark.asyncio
async def test_players_rotate_through_the_chairs_game_by_game() -> None:
    node = TrendNode(NodeConfig(seats=parse_seats("dummy,dummy,dummy,dummy")))
    seen = []
    for k in range(4):
        node.game_index = k
        seen.append([i.name if i else None for i in node._infos()])
    assert seen[0] == ["player1", "player2", "player3", "player4"]
    assert seen[1] == ["player4", "player1", "player2", "player3"]
    for name in ("player1", "player2", "player3", "player4"):
        assert sorted(s.index(name) for s in seen) == [0, 1, 2, 3]


@pytest.mark.asyncio
async def test_seat_settings_cannot_change_during_a_match() -> None:
    node = TrendNode(NodeConfig(seats=parse_seats("empty,empty,empty,empty")))
    assert node.apply_settings(parse_seats("dummy,empty,empty,human")) is None
    assert [s["kind"] for s in node.describe()["seats"]] == ["dummy", "empty", "empty", "human"]
    node.state = "playing"
    why = node.apply_settings(parse_seats("empty,empty,empty,empty"))
    assert why is not None
    # with its code for the seat page's catalogue (error.trend_seats_locked)
    assert (getattr(why, "code", None), refusal_body(why)["code"]) == ("trend_seats_locked", "trend_seats_locked")


@pytest.mark.asyncio
async def test_a_malformed_seat_request_answers_its_code_and_args_beside_the_english() -> None:
    """The seat page says the node's 400s in its language from the code (error.<code>, args)."""
    node = TrendNode(NodeConfig(seats=parse_seats("empty,empty,empty,empty")))
    transport = httpx.ASGITransport(app=node_app(node))
    async with httpx.AsyncClient(transport=transport, base_url="http://node", cookies={"name": "ann"}) as c:
        empty = {"kind": "empty", "bot": "heuristic"}
        cases = [
            ({"seats": [empty] * 3}, "trend_seats_four", None),
            ({"seats": "four"}, "trend_seats_four", None),
            ({"seats": [empty, empty, 7, empty]}, "trend_seat_not_object", {"n": 3}),
            ({"seats": [empty, {"kind": "robot"}, empty, empty]}, "trend_unknown_seat_kind", {"n": 2, "kind": "robot"}),
            ({"seats": [{"kind": "dummy", "bot": "nope"}, empty, empty, empty]}, "unknown_bot", {"bot": "nope"}),
        ]
        for body, code, args in cases:
            r = await c.post("/api/seats", json=body)
            said = r.json()
            assert r.status_code == 400 and said["code"] == code and said.get("args") == args, said
            assert said["error"]  # the English stays for programs
        r = await c.post("/api/seats", content=b"[1, 2]", headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        r = await c.post("/api/seats", content=b"x" * 70_000, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["code"] == "body_too_large" and r.json()["args"] == {"kb": 64}
        r = await c.post("/api/human", json={"playerNumber": "one"})
        assert r.status_code == 400 and r.json()["code"] == "trend_bad_player_number"
    assert [s.kind for s in node.settings] == ["empty"] * 4  # nothing changed


class FakePeer:
    """A socket as the node sees it: what was sent to it, and whether it is closed."""

    def __init__(self, name: str) -> None:
        self.addr = name
        self.ip = name.rpartition(":")[0]  # its share key, as the node counts wrong tokens by
        self.closed = False
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any], on_sent: Any = None) -> None:
        self.sent.append(message)

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = True


def join(number: int, name: str) -> tc.Join:
    return tc.Join(number, str(number), name, "token-" + name)


@pytest.mark.asyncio
async def test_new_peer_for_the_next_game_never_goes_to_the_old_socket() -> None:
    """After ``game_end`` SDK bots close and join again; until a close arrives the old socket
    still looks open. The next game's ``new_peer`` frames go to the sockets joined since."""
    seats = parse_seats("empty,empty,empty,dummy")
    cfg = NodeConfig(seats=seats, rejoin_settle=0.01, rejoin_wait=60, deal_interval=0.0)
    node = TrendNode(cfg)
    old = {n: FakePeer(f"old{n}") for n in (1, 2, 3)}
    for n, p in old.items():
        node.join(p, join(n, f"bot{n}"))  # type: ignore[arg-type]
    assert all(any(m["eventName"] == "new_peer" for m in p.sent) for p in old.values())
    node.table = None  # the first game is over: as _game_done leaves the contestants
    node.state = "between"
    for c in node.contestants.values():
        c.seat, c.rejoined = None, False
    for p in old.values():
        p.sent.clear()
    new1, new2 = FakePeer("new1"), FakePeer("new2")
    node.join(new1, join(1, "bot1"))  # type: ignore[arg-type]
    node.join(new2, join(2, "bot2"))  # type: ignore[arg-type]
    assert [m["eventName"] for m in new1.sent] == ["new_peer", "new_peer"]
    assert [m["eventName"] for m in new2.sent] == ["new_peer"]
    assert all(p.sent == [] for p in old.values())  # 1 and 2 moved on, 3 has not re-joined yet
    # a player that keeps its socket past rejoin_settle: that socket is the next game's after all
    node.game_index = 1
    node._start_game = lambda: None  # type: ignore[method-assign]  # the wait is what is tested
    await node._next_game()
    assert [m["eventName"] for m in old[3].sent] == ["new_peer"]
    assert old[1].sent == old[2].sent == []


def test_a_dummy_may_be_a_level() -> None:
    assert parse_seats("dummy:level:2,empty,empty,empty")[0] == SeatSetting("dummy", "level:2")
    assert parse_seats("dummy,empty,empty,human", default_bot="level:4")[0] == SeatSetting("dummy", "level:4")
    with pytest.raises(ValueError, match="unknown level level:9"):
        parse_seats("dummy:level:9,empty,empty,empty")
    state = TrendNode(NodeConfig(seats=parse_seats("dummy:level:2,empty,empty,empty"))).describe()
    assert state["seats"][0]["bot"] == "level:2" and "level:6" in state["bots"]
    assert state["levels"][1]["key"] == "level:2" and state["levels"][1]["name"] == "Novice"  # the page's labels
