"""Which protocol can sit at which table (mixed tables)."""

from __future__ import annotations

import pytest

from moonshot.core.variants import VARIANTS, find_variant
from moonshot.protocols.sessions.codec import SESSIONS_RULES
from moonshot.runtime.mixed import refusal


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_http_and_server_bots_express_every_variant(name: str) -> None:
    assert refusal("http", find_variant(name)) is None
    assert refusal("server", find_variant(name)) is None


@pytest.mark.parametrize(
    ("protocol", "variant", "expected"),
    [
        ("sessions", "standard", None),
        ("sessions", "omnibus", None),
        ("sessions", "gym", None),
        ("sessions", "trend", "exposing cards"),
        ("sessions", "turbo", "charging cards"),
        ("sessions", "kierki", "Kierki contracts"),
        ("trend", "trend", None),
        ("trend", "standard", None),
        ("trend", "turbo", "charging cards"),
        ("trend", "turbo-blind", "claims"),
        ("trend", "kierki", "Kierki contracts"),
        ("kierki", "kierki", None),
        ("kierki", "turbo", "only the Kierki game"),
        ("kierki", "standard", "only the Kierki game"),
    ],
)
def test_a_protocol_that_cannot_express_the_rules_says_why(protocol: str, variant: str, expected: str | None) -> None:
    why = refusal(protocol, find_variant(variant))
    if expected is None:
        assert why is None
    else:
        assert why is not None and expected in why and repr(variant) in why


def test_the_sessions_protocols_own_rules_and_tournament_sets_are_expressible() -> None:
    assert refusal("sessions", SESSIONS_RULES) is None
    assert refusal("sessions", find_variant("standard").replace(name="standard-4deals", deals=4)) is None


def test_an_unknown_protocol_is_refused() -> None:
    assert "unknown protocol" in (refusal("carrier-pigeon", find_variant("standard")) or "")
