"""The operator's decisions about clients: bans of names and addresses (networks, IPv6 /64s),
their ends, mutes, drain, what is kept across a restart, and that the ClientGuard and the lobby
(what every protocol asks when it admits a client or seats one) enforce them."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.bots.random import RandomBot
from moonshot.runtime.controls import Ban, Controls, duration, name_key, network
from moonshot.runtime.limits import ClientGuard, address_of
from moonshot.runtime.lobby import Candidate, GameType, Lobby, LobbyError
from moonshot.runtime.table import BotSeat
from runtime.test_table import Remote


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_an_address_ban_covers_its_network_and_ends_on_time() -> None:
    clock = Clock()
    c = Controls(clock)
    c.ban("address", "198.51.100.0/24", 3600, "flooding", "alice@host")
    assert c.refusal("198.51.100.77") is not None and "flooding" in (c.refusal("198.51.100.1") or "")
    assert c.refusal("198.51.101.1") is None and c.refusal("203.0.113.5") is None
    clock.now += 3599
    assert c.address_ban("198.51.100.2") is not None
    clock.now += 2
    assert c.address_ban("198.51.100.2") is None and c.active() == []


def test_an_ipv6_ban_reaches_the_clients_counted_under_its_prefix() -> None:
    c = Controls(Clock())
    c.ban("address", "2001:db8:1:2::99", None)
    assert c.address_ban(address_of(("2001:db8:1:2::1", 5000))) is not None  # the /64 a client is counted by
    assert c.address_ban(address_of(("2001:db8:1:3::1", 5000))) is None
    c.ban("address", "::ffff:203.0.113.9", None)  # IPv4-mapped: the IPv4 client
    assert c.address_ban("203.0.113.9") is not None


def test_name_bans_compare_names_as_people_write_them() -> None:
    c = Controls(Clock())
    c.ban("name", "Mallory", None, "cheating")
    for seen in ("mallory", "MALLORY", " Ｍallory ", "mallory(12)"):  # NFKC, case, a Sessions tag's id
        assert c.name_ban(seen) is not None, seen
    assert c.name_ban("mallory2") is None and c.name_ban("") is None
    assert c.unban("name", "MALLORY") is not None and c.name_ban("mallory") is None
    assert c.unban("name", "mallory") is None


def test_bad_bans_are_refused_with_a_reason() -> None:
    c = Controls(Clock())
    with pytest.raises(ValueError, match="not an address"):
        c.ban("address", "example.com", None)
    with pytest.raises(ValueError, match="name or an address"):
        c.ban("planet", "x", None)
    with pytest.raises(ValueError, match="positive"):
        c.ban("name", "x", 0)
    with pytest.raises(ValueError, match="empty name"):
        c.ban("name", "  ", None)


def test_bans_and_mutes_survive_a_restart_through_their_json() -> None:
    clock = Clock()
    c = Controls(clock)
    c.ban("name", "mallory", None, "cheating")
    c.ban("address", "203.0.113.0/28", 60)
    c.mute("trudy", 600, "spam")
    c.ban("name", "short", 10)
    clock.now += 30  # "short" has ended: not kept
    kept = json.loads(json.dumps(c.to_json()))
    again = Controls(clock)
    again.load(kept)
    assert again.name_ban("Mallory") is not None and again.address_ban("203.0.113.3") is not None
    assert again.muted("TRUDY") is not None and again.name_ban("short") is None
    again.load({"bans": [{"kind": "name"}], "mutes": "junk"})  # a damaged row is skipped, not fatal


def test_durations() -> None:
    assert duration("90s") == 90 and duration("30m") == 1800 and duration("12h") == 43200
    assert duration("7d") == 7 * 86400 and duration("permanent") is None and duration(None) is None
    with pytest.raises(ValueError, match="not a duration"):
        duration("soon")


@given(st.text(max_size=30))
def test_name_keys_are_stable(name: str) -> None:
    assert name_key(name_key(name)) == name_key(name)


def test_network_normalises() -> None:
    assert str(network("198.51.100.7/24")) == "198.51.100.0/24"


def test_the_client_guard_refuses_a_banned_address_before_counting_it() -> None:
    guard = ClientGuard()
    guard.controls.ban("address", "192.0.2.1", None, "abuse")
    hold, _, why = guard.admit("192.0.2.1")
    assert hold is None and why is not None and why.startswith("banned permanently: abuse")
    assert guard.connections.count("192.0.2.1") == 0 and guard.refused == 1
    hold, _, why = guard.admit("192.0.2.2")
    assert hold is not None and why is None


@pytest.mark.asyncio
async def test_the_lobby_gives_a_banned_name_no_chair_and_nobody_a_new_game_while_draining() -> None:
    lobby = Lobby(lambda seats: None, lambda: BotSeat(RandomBot(), name="filler"), None)  # type: ignore[arg-type,return-value]
    lobby.controls = Controls(Clock())
    lobby.controls.ban("name", "mallory", None, "cheating")
    with pytest.raises(LobbyError, match="banned permanently: cheating"):
        lobby.join(Candidate(Remote(name="mallory(7)"), GameType.ANY))
    lobby.join(Candidate(Remote(name="alice(8)"), GameType.ANY))
    assert lobby.waiting() == 1
    lobby.controls.closed = "the server is draining"
    with pytest.raises(LobbyError, match="draining"):
        lobby.join(Candidate(Remote(name="bob(9)"), GameType.ANY))
    await asyncio.sleep(0)


@given(
    st.sampled_from(["name", "address"]),
    st.text(min_size=1, max_size=20).filter(lambda t: bool(name_key(t))),
    st.ip_addresses(),
    st.none() | st.floats(1, 1e9),
    st.text(max_size=20),
)
def test_a_ban_read_back_from_its_row_is_the_same_ban(
    kind: str, name: str, addr: object, seconds: float | None, reason: str
) -> None:
    c = Controls(Clock())
    b = c.ban(kind, name if kind == "name" else str(addr), seconds, reason, "ops")
    again = Ban.from_json(json.loads(json.dumps(b.to_json())))
    assert again == b and again.key() == b.key()
