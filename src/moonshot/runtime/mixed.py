"""Which protocol can seat a player at a table with which rules (mixed tables).

A table may seat players that came over different protocols when each protocol can express the
table's rules: every decision the rules ask for must have a message in the protocol, and the
protocol must be able to tell the player what happened. :func:`refusal` says why a protocol
cannot (``None`` when it can):

* ``http`` (Turbo HTTP + the web app) expresses every moonshot variant;
* ``sessions`` has ``donated_cards`` (three cards) and ``decided_move`` only: no exposure, no
  charging, no claims, no Kierki contracts;
* ``trend`` has ``pass_my_cards`` (three cards), ``expose_my_cards`` and ``pick_card``: no
  charging, no claims, no Kierki contracts (its exposure is the ace of hearts only);
* ``kierki`` plays only the Kierki game (contracts, no passing).

Server bots (``server``) play anything. The rules are data (``Rules``), so the checks are about
features, never variant names.
"""

from __future__ import annotations

from moonshot.core.cards import ACE_HEARTS
from moonshot.core.rules import PassDirection, Rules

PROTOCOLS = ("http", "sessions", "trend", "kierki", "server")


def _features(rules: Rules) -> list[str]:
    """The rule features a simple trick-taking protocol may lack, as words for a refusal."""
    out = []
    if rules.chargeable or rules.charging is not None:
        out.append("charging cards")
    if rules.claims:
        out.append("claims")
    if len(set(rules.deal_kinds)) > 1 or rules.deal_kinds != (0,):
        out.append("Kierki contracts")
    if rules.pass_count != 3 and any(d is not PassDirection.HOLD for d in rules.pass_cycle):
        out.append(f"passing {rules.pass_count} cards")
    if PassDirection.KEEPER in rules.pass_cycle:
        out.append("Turbo's keeper hand")
    return out


def refusal(protocol: str, rules: Rules) -> str | None:
    """Why a player over ``protocol`` cannot sit at a table with ``rules``; ``None``: it can."""
    if protocol in ("http", "server"):
        return None
    if protocol == "kierki":
        if rules.deal_kinds != (0,) and not rules.two_of_clubs_leads:
            return None
        return f"the Kierki protocol plays only the Kierki game, not {rules.name!r}"
    if protocol not in ("sessions", "trend"):
        return f"unknown protocol {protocol!r}"
    missing = _features(rules)
    if protocol == "sessions" and rules.exposable:
        missing.insert(0, "exposing cards")
    if protocol == "trend" and rules.exposable & ~(1 << ACE_HEARTS):
        missing.insert(0, "exposing cards other than the ace of hearts")
    if missing:
        name = "Sessions" if protocol == "sessions" else "Trend"
        return f"the {name} protocol cannot express the {rules.name!r} rules ({', '.join(missing)})"
    return None


__all__ = ["PROTOCOLS", "refusal"]
