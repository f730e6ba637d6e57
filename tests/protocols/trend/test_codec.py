"""The Trend codec: every event's shape against the seed's tables, redaction over hundreds of
games, replies to actions (dropped, wrong, right), and a fuzz test of the input path."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ_MESSAGES
from moonshot.bots.random import RandomBot
from moonshot.core.actions import Expose, Pass, Play
from moonshot.core.cards import format_cards, parse_card
from moonshot.core.engine import Game, Phase
from moonshot.core.events import DealEnded, HandDealt, TrickEnded
from moonshot.core.variants import TREND
from moonshot.core.views import seat_view
from moonshot.protocols.trend import codec as tc

PLAYERS = [tc.PlayerInfo(str(i + 1), f"p{i + 1}") for i in range(4)]
PRIVATE = ("cards", "pickedCards", "receivedCards", "initialCards")


def play_game(seed: int, codecs: list[tc.TrendCodec] | None = None) -> tuple[Game, list[list[dict[str, Any]]]]:
    """A whole Trend game through four codecs (each fed its chair's redacted events), random bots;
    every tenth decision is marked forced, as a server-random card would be."""
    g = Game(TREND, seed)
    codecs = codecs or [tc.TrendCodec(s, PLAYERS) for s in range(4)]
    frames: list[list[dict[str, Any]]] = [[], [], [], []]
    sent = [0, 0, 0, 0]
    rng, bot = random.Random(seed), RandomBot()
    decisions = 0

    def flush(forced: bool) -> None:
        for s in range(4):
            evs = [e.for_viewer(s) for e in g.log[sent[s] :]]
            sent[s] = len(g.log)
            frames[s].extend(codecs[s].events([(e, forced) for e in evs if e is not None]))

    flush(False)
    while not g.over:
        s = g.to_act()[0]
        req = codecs[s].request(g.phase, g.legal_play_mask(s))
        assert req is not None
        frames[s].append(req)
        g.apply(bot.act(seat_view(g, s), rng))
        codecs[s].answered()
        decisions += 1
        flush(decisions % 10 == 0)
    return g, frames


# ------------------------------------------------------------------ shapes (the seed's tables)
TOP = {
    "new_game": {"players"},
    "new_deal": {"dealNumber", "self", "players"},
    "pass_cards": {"dealNumber", "self", "players", "receiver"},
    "receive_opponent_cards": {"dealNumber", "self", "players", "receivedCards", "sender"},
    "pass_cards_end": {"dealNumber", "players"},
    "expose_cards": {"dealNumber", "self", "players"},
    "expose_cards_end": {"dealNumber", "players"},
    "new_round": {"dealNumber", "roundNumber", "players", "roundPlayers"},
    "turn_end": {"dealNumber", "roundNumber", "players", "roundPlayers", "turnPlayer", "turnCard", "serverRandom"},
    "your_turn": {"dealNumber", "roundNumber", "self", "players", "roundPlayers"},
    "round_end": {"dealNumber", "roundNumber", "players", "roundPlayers", "roundPlayer"},
    "deal_end": {"dealNumber", "players"},
    "game_end": {"players"},
}
PLAYER_TABLE = {"playerNumber", "playerName", "gameScore", "dealScore", "cardsCount", "scoreCards", "exposedCards"}
PLAYER_TABLE |= {"serverRandom", "timeoutCount", "errorCount", "status"}
DEAL_END = PLAYER_TABLE - {"cardsCount"} | {"pickedCards", "receivedCards", "initialCards", "shootingTheMoon"}
GAME_END = {"playerNumber", "playerName", "gameScore", "timeoutCount", "errorCount", "rank", "deals"}


def test_every_event_has_the_seed_fields_in_seed_order() -> None:
    g, frames = play_game(7)
    mine = frames[0]
    counts = Counter(f["eventName"] for f in mine)
    assert counts["new_game"] == 1 and counts["game_end"] == 1
    assert counts["new_deal"] == counts["deal_end"] == counts["expose_cards_end"] == 4
    assert counts["pass_cards"] == counts["receive_opponent_cards"] == counts["pass_cards_end"] == 3
    assert counts["new_round"] == counts["round_end"] == 52 and counts["turn_end"] == 208
    assert counts["your_turn"] == 52
    for f in mine:
        assert set(f) == {"eventName", "data"}
        name, data = f["eventName"], f["data"]
        assert TOP[name] <= set(data), name
        for p in data["players"]:
            want = {"deal_end": DEAL_END, "game_end": GAME_END, "new_game": {"playerNumber", "playerName", "status"}}
            assert want.get(name, PLAYER_TABLE) <= set(p), (name, set(p))
        assert [p["playerName"] for p in data["players"]] == ["p1", "p2", "p3", "p4"]  # N, E, S, W
        if "self" in data:
            assert data["self"]["playerName"] == "p1" and "cards" in data["self"]
        if name in ("your_turn", "pass_cards", "expose_cards"):
            assert set(data["self"]["candidateCards"]) <= set(data["self"]["cards"])
        if name == "expose_cards":
            assert data["self"]["candidateCards"] == ["AH"]
    deals = [f["data"]["dealNumber"] for f in mine if f["eventName"] == "new_deal"]
    assert deals == [1, 2, 3, 4]
    rounds = [f["data"]["roundNumber"] for f in mine if f["eventName"] == "new_round"]
    assert rounds == list(range(1, 14)) * 4
    receivers = [f["data"]["receiver"] for f in mine if f["eventName"] == "pass_cards"]
    assert receivers == ["p2", "p4", "p3"]  # left, right, across
    end = mine[-1]["data"]["players"]
    assert [p["gameScore"] for p in end] == list(g.totals)
    assert all(len(p["deals"]) == 4 and p["deals"][0]["dealNumber"] == 1 for p in end)
    best = max(g.totals)
    assert all((p["rank"] == 1) == (p["gameScore"] == best) for p in end)


def test_turn_end_and_round_end_follow_the_play() -> None:
    g, frames = play_game(11)
    turns = [f["data"] for f in frames[2] if f["eventName"] == "turn_end"]
    plays = [a for a in g.actions if isinstance(a, Play)]
    assert [t["turnCard"] for t in turns] == format_cards([p.card for p in plays])
    assert [t["turnPlayer"] for t in turns] == [PLAYERS[p.seat].name for p in plays]
    forced = [t["serverRandom"] for t in turns]
    assert any(forced) and not all(forced)
    for t in turns:
        me = t["players"][2]
        assert len(me["cards"]) == me["cardsCount"]
        assert any(p.get("roundCard") == t["turnCard"] for p in t["players"])
    ends = [f["data"] for f in frames[2] if f["eventName"] == "round_end"]
    tricks = [e for e in g.log if isinstance(e, TrickEnded)]
    assert [e["roundPlayer"] for e in ends] == [PLAYERS[t.winner].name for t in tricks]
    assert [e["roundPlayers"][0] for e in ends] == [PLAYERS[t.seats[0]].name for t in tricks]


def test_deal_scores_are_negative_and_match_the_engine() -> None:
    for seed in range(20):
        g, frames = play_game(seed)
        deal_ends = [f["data"] for f in frames[1] if f["eventName"] == "deal_end"]
        points = [e.points for e in g.log if isinstance(e, DealEnded)]
        assert [[p["dealScore"] for p in d["players"]] for d in deal_ends] == [list(p) for p in points]
        for d in deal_ends:
            for p in d["players"]:
                assert p["dealScore"] <= 0 or p["shootingTheMoon"]


def test_the_wire_keeps_the_player_number_as_the_client_sent_it() -> None:
    players = [tc.PlayerInfo(1, "a"), tc.PlayerInfo("2", "b"), tc.PlayerInfo(3, "c"), tc.PlayerInfo("4", "d")]
    _, frames = play_game(3, [tc.TrendCodec(s, players) for s in range(4)])
    first = frames[0][0]["data"]["players"]
    assert [p["playerNumber"] for p in first] == [1, "2", 3, "4"]


# ------------------------------------------------------------------ redaction
def test_no_chair_ever_sees_another_chairs_private_fields() -> None:
    """Fifty whole games (200 deals): others' hands, passes and initial cards never reach a chair;
    its own do. (The spectator and leak checks in tests/security and tests/e2e cover more games.)"""
    for seed in range(50):
        g, frames = play_game(seed)
        for s in range(4):
            dealt = [format_cards(e.cards) for e in g.log if isinstance(e, HandDealt) and e.seat == s]
            got = [f["data"]["self"]["cards"] for f in frames[s] if f["eventName"] == "new_deal"]
            assert got == dealt
            for f in frames[s]:
                data = f["data"]
                for i, p in enumerate(data["players"]):
                    if i == s:
                        continue
                    for key in PRIVATE:
                        assert not p.get(key), (seed, s, f["eventName"], key)
                if "self" in data:
                    assert data["self"]["playerName"] == PLAYERS[s].name
                assert "initialCards" not in json.dumps(f) or f["eventName"] == "deal_end"


def test_a_chair_sees_its_own_pass_and_hand_at_deal_end() -> None:
    _, frames = play_game(5)
    deal_ends = [f["data"] for f in frames[3] if f["eventName"] == "deal_end"]
    mine = deal_ends[0]["players"][3]
    assert len(mine["initialCards"]) == 13 and len(mine["pickedCards"]) == 3 and len(mine["receivedCards"]) == 3
    assert set(mine["pickedCards"]) <= set(mine["initialCards"])
    last = deal_ends[3]["players"][3]
    assert last["pickedCards"] == [] and last["receivedCards"] == []  # the no-pass deal
    receive = next(f["data"] for f in frames[3] if f["eventName"] == "receive_opponent_cards")
    own = receive["players"][3]
    assert own["receivedCards"] == receive["receivedCards"] and own["pickedCards"] == mine["pickedCards"]


# ------------------------------------------------------------------ replies
def asked(phase: Phase) -> tuple[Game, tc.TrendCodec, int]:
    g = Game(TREND, 42)
    codecs = [tc.TrendCodec(s, PLAYERS) for s in range(4)]
    rng, bot = random.Random(1), RandomBot()
    for s in range(4):
        codecs[s].events([(e.for_viewer(s), False) for e in g.log if e.for_viewer(s) is not None])  # type: ignore[misc]
    while g.phase is not phase:
        s = g.to_act()[0]
        n = len(g.log)
        g.apply(bot.act(seat_view(g, s), rng))
        for t in range(4):
            codecs[t].events([(e.for_viewer(t), False) for e in g.log[n:] if e.for_viewer(t) is not None])  # type: ignore[misc]
    s = g.to_act()[0]
    codecs[s].request(g.phase, g.legal_play_mask(s))
    return g, codecs[s], s


def test_pick_card_answers() -> None:
    g, c, s = asked(Phase.PLAY)
    legal = g.legal_play_mask(s)
    card = (legal & -legal).bit_length() - 1
    illegal = next(x for x in range(52) if c.hand >> x & 1 and not legal >> x & 1) if c.hand & ~legal else None
    assert c.answer(tc.PickCard(c.deal_number, c.round_number, card)) == Play.of(s, card)
    assert isinstance(c.answer(tc.PickCard(c.deal_number + 1, c.round_number, card)), tc.Dropped)
    assert isinstance(c.answer(tc.PickCard(c.deal_number, c.round_number + 1, card)), tc.Dropped)
    assert isinstance(c.answer(tc.PickCard(None, c.round_number, card)), tc.Dropped)
    assert isinstance(c.answer(tc.PassMyCards(c.deal_number, (1, 2, 3))), tc.Dropped)
    if illegal is not None:
        assert isinstance(c.answer(tc.PickCard(c.deal_number, c.round_number, illegal)), tc.Wrong)
    assert isinstance(c.answer(tc.Malformed("bad card", "pick_card")), tc.Wrong)
    assert isinstance(c.answer(tc.Malformed("bad", "pass_my_cards")), tc.Dropped)
    c.answered()
    assert isinstance(c.answer(tc.PickCard(c.deal_number, c.round_number, card)), tc.Dropped)


def test_pass_and_expose_answers() -> None:
    _, c, s = asked(Phase.PASS)
    hand = [x for x in range(52) if c.hand >> x & 1]
    assert c.answer(tc.PassMyCards(1, tuple(hand[:3]))) == Pass(s, sum(1 << x for x in hand[:3]))
    assert isinstance(c.answer(tc.PassMyCards(1, tuple(hand[:2]))), tc.Wrong)
    assert isinstance(c.answer(tc.PassMyCards(1, (hand[0], hand[0], hand[1]))), tc.Wrong)
    other = next(x for x in range(52) if not c.hand >> x & 1)
    assert isinstance(c.answer(tc.PassMyCards(1, (hand[0], hand[1], other))), tc.Wrong)
    assert isinstance(c.answer(tc.PassMyCards(2, tuple(hand[:3]))), tc.Dropped)
    _, c, s = asked(Phase.EXPOSE)
    ah = parse_card("AH")
    assert c.answer(tc.ExposeMyCards(c.deal_number, (ah,))) == Expose(s, 1 << ah)
    assert c.answer(tc.ExposeMyCards(c.deal_number, ())) == Expose(s, 0)
    assert isinstance(c.answer(tc.ExposeMyCards(c.deal_number, (parse_card("QS"),))), tc.Wrong)
    assert isinstance(c.answer(tc.ExposeMyCards(c.deal_number + 1, (ah,))), tc.Dropped)


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ('{"eventName":"join","data":{"playerNumber":"2","playerName":"x","token":"t"}}', tc.Join(2, "2", "x", "t")),
        ('{"eventName":"join","data":{"playerNumber":3,"playerName":"x","token":"t"}}', tc.Join(3, 3, "x", "t")),
        ('{"eventName":"stop_game","data":{}}', tc.StopGame()),
        ('{"eventName":"stop_game"}', tc.StopGame()),
        (
            '{"eventName":"pick_card","data":{"dealNumber":1,"roundNumber":"2","turnCard":"10H"}}',
            tc.PickCard(1, 2, parse_card("TH")),
        ),
        (
            '{"eventName":"pass_my_cards","data":{"dealNumber":1,"cards":["2C","3C","4C"]}}',
            tc.PassMyCards(1, (0, 1, 2)),
        ),
        ('{"eventName":"expose_my_cards","data":{"dealNumber":1,"cards":[]}}', tc.ExposeMyCards(1, ())),
    ],
)
def test_parse_good_frames(frame: str, expected: tc.ClientEvent) -> None:
    assert tc.parse_frame(frame) == expected


@pytest.mark.parametrize(
    ("frame", "reason", "event"),
    [
        ("not json", "not JSON", None),
        ("[1,2]", "JSON object", None),
        ('{"data":{}}', "missing eventName", None),
        ('{"eventName":"hello"}', "unknown eventName", None),
        ('{"eventName":"join","data":{"playerNumber":5,"playerName":"x","token":"t"}}', "playerNumber", None),
        ('{"eventName":"join","data":{"playerNumber":true,"playerName":"x"}}', "playerNumber", None),
        ('{"eventName":"join","data":{"playerNumber":1,"playerName":""}}', "playerName", None),
        ('{"eventName":"join","data":{"playerNumber":1,"playerName":"x","token":[1]}}', "token", None),
        ('{"eventName":"pick_card","data":{"turnCard":5}}', "turnCard", "pick_card"),
        ('{"eventName":"pick_card","data":{"turnCard":"ZZ"}}', "not a card", "pick_card"),
        ('{"eventName":"pass_my_cards","data":{"cards":"2C"}}', "list", "pass_my_cards"),
        ('{"eventName":"pass_my_cards","data":[]}', "object", "pass_my_cards"),
        ("x" * (tc.MAX_FRAME + 1), "longer than", None),
    ],
)
def test_parse_bad_frames(frame: str, reason: str, event: str | None) -> None:
    got = tc.parse_frame(frame)
    assert isinstance(got, tc.Malformed)
    assert reason in got.reason
    assert got.event_name == event


# ------------------------------------------------------------------ fuzz
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=6,
)
_names = st.sampled_from([*tc.CLIENT_EVENTS, "hello", "", "JOIN"])
_keys = st.sampled_from(["playerNumber", "playerName", "token", "dealNumber", "roundNumber", "turnCard", "cards"])
_frames = st.one_of(
    st.builds(
        lambda n, d: json.dumps({"eventName": n, "data": d}),
        _names,
        st.dictionaries(_keys, _json | st.sampled_from(["AH", "2C", "10H", "1", 1, 2, ["2C", "3C", "4C"]]), max_size=5),
    ),
    _json.map(json.dumps),
    st.binary(max_size=64),
    st.text(max_size=64),
)


@pytest.mark.fuzz
@settings(max_examples=FUZZ_MESSAGES, deadline=None, suppress_health_check=list(HealthCheck))
@given(frame=_frames, phase=st.sampled_from([Phase.PLAY, Phase.PASS, Phase.EXPOSE]))
def test_fuzz_frames_never_raise_and_answers_are_legal_or_refused(frame: str | bytes, phase: Phase) -> None:
    """Whatever arrives: a typed event or Malformed, never an exception; an answer it yields is
    an action the engine accepts, or Dropped/Wrong."""
    msg = tc.parse_frame(frame)
    assert isinstance(msg, tc.Join | tc.PassMyCards | tc.ExposeMyCards | tc.PickCard | tc.StopGame | tc.Malformed)
    if isinstance(msg, tc.PassMyCards | tc.ExposeMyCards | tc.PickCard | tc.Malformed):
        g, c, _ = _ASKED[phase]
        ans = c.answer(msg)
        if not isinstance(ans, tc.Dropped | tc.Wrong):
            assert g.is_legal(ans)


_ASKED = {p: asked(p) for p in (Phase.PLAY, Phase.PASS, Phase.EXPOSE)}


# ------------------------------------------------------------------ shared entries, fast encoding
OLD_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
ODD_NAMES = ["p1", 'q"uote\\back', "café ☕ 名", "tab\tnew\nline\x00\x1f\x7f", "😀 \ud7ff", "", " "]


class StatusCodec(tc.TrendCodec):
    """A codec whose table reports changing status and counts (as timeouts and errors do)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0

    def events(self, events: Any, status: Any = None, counts: Any = None) -> list[dict[str, Any]]:
        self.calls += 1
        k = self.calls // 7
        status = [(k + s) % 3 for s in range(4)]
        counts = [(k // 2 + s, k // 3) for s in range(4)]
        return super().events(events, status, counts)


@pytest.mark.parametrize("seed", range(12))
def test_shared_entries_give_the_same_frames_and_the_same_bytes(seed: int) -> None:
    """Four chairs sharing one EntryCache (as in ``moonshot serve``) send exactly what codecs
    without one send, and ``encode_frame`` writes exactly the bytes ``json`` writes."""
    rng = random.Random(seed)
    names = rng.sample(ODD_NAMES, 4)
    cache = tc.EntryCache(size=[2, 32, 16384][seed % 3])  # a small cache drops entries often
    entries = 0
    for as_text in (False, True):
        players = [tc.PlayerInfo(str(i + 1) if as_text else i + 1, names[i]) for i in range(4)]
        _, old = play_game(seed, [StatusCodec(s, players) for s in range(4)])
        _, new = play_game(seed, [StatusCodec(s, players, cache=cache) for s in range(4)])
        assert old == new
        for chair in range(4):
            for a, b in zip(old[chair], new[chair], strict=True):
                text = OLD_ENCODE(a)
                assert tc.encode_frame(b) == text
                assert OLD_ENCODE(b) == text
                assert tc.encode_frame(a) == text
        entries += sum(len(f["data"].get("players", ())) for chair in new for f in chair)
    if cache.size > 2:  # most entries are found, not built (even with status changing often)
        assert entries > 3 * cache.misses


def test_a_shared_entry_cannot_be_changed() -> None:
    e = tc.Entry({"playerName": "p1", "cards": []})
    assert e == {"playerName": "p1", "cards": []}
    assert e.json == '{"playerName":"p1","cards":[]}'
    with pytest.raises(TypeError):
        e["cards"] = ["AH"]
    with pytest.raises(TypeError):
        e.update(cards=["AH"])
    assert dict(e) == {"playerName": "p1", "cards": []}


@pytest.mark.parametrize(
    "message",
    [
        {"eventName": "x", "data": {}},
        {"eventName": "x", "data": {1: 2, "a": [tc.Entry({"b": 1})]}},
        {"eventName": "x", "data": {"players": []}},
        {"eventName": "x", "data": {"players": [tc.Entry({"b": "é"}), {"c": 1}], "f": 1.5, "n": None}},
        {"data": {"self": tc.Entry({"b": True})}, "eventName": "y"},
        {"eventName": "x", "data": None},
        {"eventName": "x", "data": {}, "more": 1},
        {"error": "z"},
    ],
)
def test_encode_frame_writes_what_json_writes(message: dict[str, Any]) -> None:
    assert tc.encode_frame(message) == OLD_ENCODE(message)
