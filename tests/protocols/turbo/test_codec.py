"""The Turbo codec: engine events as Turbo JSON per viewer, matched against the reference's
recorded streams; request bodies to actions with clear errors."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamekit import charge, pass_all, play_seated
from gamekit import play_random_game as random_game
from moonshot.core.actions import AcceptClaim, Charge, Claim, Expose, Pass, Play, RejectClaim
from moonshot.core.cards import parse_card, parse_card_set
from moonshot.core.engine import Game
from moonshot.core.rules import ChargingOrder
from moonshot.core.variants import find_variant
from moonshot.protocols.turbo.codec import (
    Message,
    Player,
    RequestError,
    TranslationError,
    TurboTranslator,
    action_from_request,
    parse_charging,
    parse_event_id,
    parse_json,
    translate_log,
    turbo_cards,
)
from protocols.turbo.recorded import RECORDINGS, as_later_reference, canonical, digest, reference
from turbo_records import RECORDED_TURBO

PLAYERS = [Player("ann"), Player("bob"), Player("cy", "bot", "random"), Player("di")]


def recorded_game(order: str) -> tuple[Game, list[object]]:
    rules = find_variant("turbo" if order == "classic" else "turbo-" + order)
    deals = RECORDED_TURBO["classic" if order == "blind" else order]
    specs = [d.spec() for d in deals]
    g = Game(rules, 0, specs)
    for d in deals:
        if d.passes is not None:
            pass_all(g, d.passes)
        charge(g, d.charges)
        play_seated(g, d.plays)
    return g, specs  # type: ignore[return-value]


def stream(g: Game, specs: list[object], viewer: int | None) -> list[dict[str, object]]:
    msgs = translate_log(g.rules, 0, PLAYERS, g.log, specs)  # type: ignore[arg-type]
    return [d for d in (m.for_viewer(viewer) for m in msgs) if d is not None]


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_streams_match_the_reference_recordings_field_by_field(name: str) -> None:
    order, viewer, count, expected = RECORDINGS[name]
    g, specs = recorded_game(order)
    mine = canonical(as_later_reference(stream(g, specs, viewer)))  # type: ignore[arg-type]
    ref = reference(name)
    if ref is not None:  # say which event differs first
        for i, (a, b) in enumerate(zip(mine, ref, strict=False)):
            assert a == b, f"event {i + 1}: moonshot {a} != reference {b}"
    assert len(mine) == count
    assert digest(mine) == expected


def test_sit_names_seats_as_the_seed_does() -> None:
    g, specs = recorded_game("bridge")
    sit = stream(g, specs, None)[0]
    assert sit == {
        "type": "sit",
        "north": {"type": "human", "name": "ann"},
        "east": {"type": "human", "name": "bob"},
        "south": {"type": "bot", "name": "cy", "algorithm": "random"},
        "west": {"type": "human", "name": "di"},
        "rules": "bridge",
    }


def test_a_seat_never_sees_a_hidden_card() -> None:
    """Over random games: what a seat sees never names a card it could not know."""
    rules = find_variant("turbo-blind")
    for seed in range(5):
        g = random_game(rules, seed)
        msgs = translate_log(rules, seed, PLAYERS, g.log)
        for viewer in range(4):
            for m in msgs:
                d = m.for_viewer(viewer)
                if d is None:
                    continue
                t = d["type"]
                if t == "deal":
                    seats = ["north", "east", "south", "west"]
                    assert all(d[s] == [] for i, s in enumerate(seats) if i != viewer)
                elif t in ("send_pass", "recv_pass"):
                    who = d.get("from", d.get("to"))
                    # the seed's redaction: another seat's pass comes with no cards
                    assert who == ["north", "east", "south", "west"][viewer] or d["cards"] == []
                elif t == "charge":
                    assert d["seat"] == ["north", "east", "south", "west"][viewer]
                elif t == "play_status" and d["legal_plays"]:
                    assert d["next_player"] == ["north", "east", "south", "west"][viewer]


@pytest.mark.parametrize("variant", ["standard", "omnibus", "trend", "kierki", "turbo-chain"])
def test_every_variant_translates_and_ends_with_game_complete(variant: str) -> None:
    rules = find_variant(variant)
    g = random_game(rules, 3)
    msgs = translate_log(rules, 3, PLAYERS, g.log)
    types = [m.data["type"] for m in msgs]
    assert types[0] == "sit" and types[-1] == "game_complete"
    sit = msgs[0].data
    assert ("variant" in sit) == (not variant.startswith("turbo"))
    deals = [m.data for m in msgs if m.data["type"] == "deal"]
    if variant == "kierki":
        assert [d["kind"] for d in deals] == [1, 2, 3, 4, 5, 6, 7]
        assert deals[1]["kind_name"] == "no hearts" and all(d["pass"] == "keeper" for d in deals)
    if variant == "trend":
        assert "start_exposing" in types
        exposes = [m.data for m in msgs if m.data["type"] == "expose"]
        assert exposes and all(set(e) == {"type", "seat", "cards"} for e in exposes)
        assert all(e["cards"] in ([], ["AH"]) for e in exposes)
    if variant == "standard":
        assert [d["pass"] for d in deals[:4]] == ["left", "right", "across", "keeper"]
    # ids: unique, increasing stream positions
    positions = [m.position for m in msgs]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_claims_translate() -> None:
    rules = find_variant("turbo")
    g = Game(rules, 1)
    rng = random.Random(1)
    while g.phase.value != "play":
        s = g.to_act()[0]
        g.apply(rng.choice(g.legal_actions(s)))
    claimer = g.turn
    g.apply(Claim(claimer))
    other = (claimer + 1) % 4
    g.apply(RejectClaim(other, claimer))
    msgs = translate_log(rules, 1, PLAYERS, g.log)
    names = ["north", "east", "south", "west"]
    claim = next(m.data for m in msgs if m.data["type"] == "claim")
    assert claim["seat"] == names[claimer] and len(claim["hand"]) == 13  # type: ignore[arg-type]
    rej = next(m.data for m in msgs if m.data["type"] == "reject_claim")
    assert rej == {"type": "reject_claim", "claimer": names[claimer], "acceptor": names[other]}


def test_feeding_in_pieces_skips_repeats_and_refuses_gaps() -> None:
    g = random_game(find_variant("turbo"), 2)
    whole = translate_log(g.rules, 2, PLAYERS, g.log)
    t = TurboTranslator(g.rules, 2, PLAYERS)
    pairs = [(i + 1, e) for i, e in enumerate(g.log)]
    got: list[Message] = []
    for start in range(0, len(pairs), 37):
        got += t.feed(pairs[: start + 37])  # the past again each time, as a re-watch gives it
    assert [m.data for m in got] == [m.data for m in whole]
    t2 = TurboTranslator(g.rules, 2, PLAYERS)
    with pytest.raises(TranslationError):
        t2.feed(pairs[3:])


def test_cards_in_turbo_order() -> None:
    assert turbo_cards(parse_card_set(["2C", "AS", "TD", "QH", "3S"])) == ["AS", "3S", "QH", "TD", "2C"]
    assert turbo_cards(0) == [] and turbo_cards(None) == []


def test_event_ids_round_trip() -> None:
    m = Message(12, 0, {"type": "play"})
    assert m.event_id == "12" and parse_event_id("12") == (12, 0)
    assert Message(12, 3, {}).event_id == "12.3" and parse_event_id("12.3") == (12, 3)
    for junk in (None, "", "x", "1.y", "-3", "1.-1"):
        assert parse_event_id(junk) is None


def test_json_for_encodes_once_per_view() -> None:
    g, specs = recorded_game("classic")
    deal = next(m for m in translate_log(g.rules, 0, PLAYERS, g.log, specs) if m.data["type"] == "deal")  # type: ignore[arg-type]
    north = json.loads(deal.json_for(0) or "")
    assert north["east"] == [] and len(north["north"]) == 13
    assert deal.json_for(0) is deal.json_for(0)
    assert len(json.loads(deal.json_for(None) or "")["east"]) == 13


# ---------------------------------------------------------------- requests
def test_actions_from_requests() -> None:
    assert action_from_request("play", 2, {"card": "QS"}) == Play.of(2, parse_card("QS"))
    assert action_from_request("pass", 1, {"cards": ["2C", "3C", "4C"]}) == Pass(1, parse_card_set(["2C", "3C", "4C"]))
    assert action_from_request("charge", 0, {"cards": []}) == Charge(0, 0)
    assert action_from_request("expose", 3, {"cards": ["AH"]}) == Expose(3, parse_card_set(["AH"]))
    assert action_from_request("claim", 1, {}) == Claim(1)
    assert action_from_request("accept_claim", 1, {"claimer": "west"}) == AcceptClaim(1, 3)
    assert action_from_request("reject_claim", 1, {"claimer": "North"}) == RejectClaim(1, 0)


@pytest.mark.parametrize(
    ("kind", "body", "words"),
    [
        ("play", {}, "missing field 'card'"),
        ("play", {"card": 7}, "must be a string"),
        ("play", {"card": "ZZ"}, "bad card"),
        ("pass", {"cards": "QS"}, "list of cards"),
        ("pass", {"cards": ["QS", "QS", "2C"]}, "twice"),
        ("pass", {"cards": [1, 2, 3]}, "card strings"),
        ("accept_claim", {"claimer": "up"}, "one of north"),
        ("accept_claim", {}, "missing field 'claimer'"),
    ],
)
def test_bad_request_bodies_are_400_with_the_reason(kind: str, body: dict[str, object], words: str) -> None:
    with pytest.raises(RequestError) as e:
        action_from_request(kind, 0, body)
    assert e.value.status == 400 and words in str(e.value)


def test_parse_json_and_charging_names() -> None:
    assert parse_json(b'{"a": 1}') == {"a": 1}
    for raw in (b"", b"{", b"[1]", b'"x"', b"[" * 100000):
        with pytest.raises(RequestError) as e:
            parse_json(raw)
        assert e.value.status == 400
    assert parse_charging("blind_bridge") is ChargingOrder.BLIND_BRIDGE
    assert parse_charging("blind-chain") is ChargingOrder.BLIND_CHAIN
    assert parse_charging(None) is ChargingOrder.CLASSIC
    with pytest.raises(RequestError):
        parse_charging("hearts")


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["pass", "charge", "expose", "play", "claim", "accept_claim", "reject_claim"]),
    body=st.dictionaries(
        st.sampled_from(["card", "cards", "claimer", "id"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=5),
            lambda c: st.lists(c, max_size=4),
            max_leaves=6,
        ),
    ),
)
def test_any_body_is_an_action_or_a_request_error(kind: str, body: dict[str, object]) -> None:
    try:
        action_from_request(kind, 1, body)
    except RequestError as e:
        assert e.status == 400


@pytest.mark.fuzz
def test_fuzz_request_bodies() -> None:
    """FUZZ_MESSAGES generated and mutated bodies: each is an action or a 400, never a crash."""
    from fuzzing import FUZZ_MESSAGES

    rng = random.Random(2024)
    seeds = [
        b'{"id": "g", "card": "QS"}',
        b'{"id": "g", "cards": ["QS", "AH", "2C"]}',
        b'{"id": "g", "claimer": "west"}',
        b'{"id": "g", "cards": []}',
    ]
    kinds = ["pass", "charge", "expose", "play", "claim", "accept_claim", "reject_claim"]
    actions = 0
    for _ in range(FUZZ_MESSAGES):
        raw = bytearray(rng.choice(seeds))
        for _ in range(rng.randrange(1, 4)):
            op = rng.randrange(3)
            pos = rng.randrange(len(raw) + 1)
            if op == 0:
                raw[pos:pos] = bytes([rng.randrange(256)])
            elif op == 1 and raw:
                del raw[min(pos, len(raw) - 1)]
            elif raw:
                raw[min(pos, len(raw) - 1)] = rng.choice(b'"{}[],:QSAHTC0123456789 \\')
        try:
            body = parse_json(bytes(raw))
            action_from_request(rng.choice(kinds), rng.randrange(4), body)
            actions += 1
        except RequestError as e:
            assert e.status == 400
    assert actions > 0


@pytest.mark.parametrize(("variant", "hold"), [("standard", True), ("trend", True), ("turbo", False), ("kierki", True)])
def test_a_hand_without_passing_says_keeper_and_hold(variant: str, hold: bool) -> None:
    """Turbo's keeper hand (a charge round, maybe a pile) and a hand with no pass at all both say
    ``"pass": "keeper"`` (what Turbo's clients know); only the latter adds ``"hold": true``, read
    from the deal's pass direction, so a page can tell them apart."""
    rules = find_variant(variant)
    g = random_game(rules, 2)
    deals = [m.data for m in translate_log(rules, 2, PLAYERS, g.log) if m.data["type"] == "deal"]
    keepers = [d for d in deals if d["pass"] == "keeper"]
    assert keepers
    assert all(d.get("hold", False) is hold for d in keepers)
    assert not any("hold" in d for d in deals if d["pass"] != "keeper")


@pytest.mark.parametrize(
    "raw",
    [b'{"token": "\\ud800"}', b'{"a": ["x", {"b": "\\udfff"}]}', b'{"\\ud83d": 1}', b'{"m": "\xed\xa0\x80"}'],
)
def test_a_body_with_a_lone_surrogate_is_a_400(raw: bytes) -> None:
    with pytest.raises(RequestError) as e:
        parse_json(raw)
    assert e.value.status == 400 and "surrogate" in str(e.value)


def test_escaped_characters_that_are_unicode_are_fine() -> None:
    assert parse_json(b'{"m": "\\ud83d\\ude00 \\u00e9"}') == {"m": "\U0001f600 é"}
