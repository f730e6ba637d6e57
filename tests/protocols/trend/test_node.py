"""The node's pieces without sockets: seat settings, tokens files, pacing, the match's seating."""

from __future__ import annotations

from pathlib import Path

import pytest

from moonshot.events import CardPlayed, DealEnded, TrickEnded
from moonshot.protocols.trend.node import NodeConfig, SeatSetting, TrendNode, load_tokens, pacing, parse_seats


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
    assert node.apply_settings(parse_seats("empty,empty,empty,empty")) is not None
