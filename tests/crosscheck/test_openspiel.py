"""Cross-check the engine against OpenSpiel's Hearts on random deals.

OpenSpiel (``pyspiel.load_game("hearts")``) is an independent implementation of one deal of
Hearts. For each random deal we drive OpenSpiel with random choices, rebuild the same deal in
moonshot (``DealSpec`` from OpenSpiel's dealt hands, the chance-chosen pass direction as a
one-entry pass cycle) and require, at every step, the same legal passes and plays, and at the
end the same points.

OpenSpiel in brief: a chance node picks the pass direction (0 none, 1 left, 2 across, 3 right:
the receiver is ``(seat + dir) % 4``, moonshot's offsets), 52 chance steps deal card ``i`` to
seat ``i % 4``, seats N, E, S, W then pass 3 cards one at a time, and play begins with the 2C.
``returns()`` is ``26 - points`` per seat, where points are hearts 1, QS 13, JD -10 with
``jd_bonus``, and a moon adds 26 to each other seat and -26 to the shooter.

OpenSpiel parameters moonshot's ``Rules`` cannot express, so not cross-checked here:

* ``can_lead_any_club``: moonshot's first lead is the 2C (``two_of_clubs_leads``) or any card
  from a given leader, never "any club".
* ``avoid_all_tricks_bonus`` (-5 for a seat that takes no trick): ``Scoring`` has per-trick and
  trick-number points but no bonus for taking none.
* ``can_lead_hearts_instead_of_qs`` (may lead hearts before they are broken when the QS is the
  only other card): moonshot has no such exception.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from moonshot.core.actions import Pass, Play
from moonshot.core.cards import card_list, format_card, parse_card
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.events import DealEnded
from moonshot.core.rules import OMNIBUS_SCORING, EndRule, PassDirection, Rules

pyspiel: Any = pytest.importorskip("pyspiel")

# OpenSpiel's pass-direction chance outcomes, by action id.
DIRECTIONS = (PassDirection.HOLD, PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT)


@dataclass(frozen=True)
class Combo:
    """One rule set, as OpenSpiel parameters and as the moonshot Rules that should match them."""

    name: str
    params: dict[str, bool]
    rules: Rules


BASE = Rules(end=EndRule.DEALS, deals=1)

COMBOS = [
    Combo(
        "standard",
        {"must_break_hearts": True, "qs_breaks_hearts": False, "no_pts_on_first_trick": True},
        BASE,
    ),
    Combo("queen-breaks-hearts", {"qs_breaks_hearts": True}, BASE.replace(queen_breaks_hearts=True)),
    Combo(
        "jack-of-diamonds",
        {"jd_bonus": True, "qs_breaks_hearts": False},
        BASE.replace(scoring=(OMNIBUS_SCORING,)),
    ),
    Combo(
        "points-on-first-trick",
        {"no_pts_on_first_trick": False, "qs_breaks_hearts": False},
        BASE.replace(first_trick_forbidden=0),
    ),
    Combo(
        "hearts-need-not-break",
        {"must_break_hearts": False, "qs_breaks_hearts": False},
        BASE.replace(hearts_must_be_broken=False),
    ),
    Combo(
        "everything-loose",
        {"must_break_hearts": False, "no_pts_on_first_trick": False, "jd_bonus": True, "qs_breaks_hearts": True},
        BASE.replace(
            hearts_must_be_broken=False,
            first_trick_forbidden=0,
            scoring=(OMNIBUS_SCORING,),
            queen_breaks_hearts=True,
        ),
    ),
]


def _card_map() -> tuple[list[int], dict[int, int]]:
    """OpenSpiel action id -> moonshot card, and back, matched by the card's text ("TH")."""
    state = pyspiel.load_game("hearts").new_initial_state()
    state.apply_action(0)  # the first action is named as a pass direction, later ones as cards
    to_card = [parse_card(state.action_to_string(a)) for a in range(52)]
    assert sorted(to_card) == list(range(52))
    return to_card, {c: a for a, c in enumerate(to_card)}


TO_CARD, TO_ACTION = _card_map()


def _mask(actions: list[int]) -> int:
    m = 0
    for a in actions:
        m |= 1 << TO_CARD[a]
    return m


def _show(mask: int) -> str:
    return " ".join(format_card(c) for c in card_list(mask)) or "-"


def crosscheck_deal(os_game: Any, rules: Rules, rng: random.Random) -> DealEnded:
    """Play one random deal in both engines in lock step; return moonshot's end of the deal."""
    st = os_game.new_initial_state()
    direction = rng.choice(st.legal_actions())
    st.apply_action(direction)
    while st.is_chance_node():
        st.apply_action(rng.choice(st.legal_actions()))
    hands = tuple(sum(1 << parse_card(t) for t in h) for h in st.to_struct().hands)
    assert len(hands) == 4
    spec = DealSpec((hands[0], hands[1], hands[2], hands[3]))
    g = Game(rules.replace(pass_cycle=(DIRECTIONS[direction],)), seed=0, deals=[spec])
    trace: list[str] = [f"direction {DIRECTIONS[direction].value}"] + [f"hand {s}: {_show(hands[s])}" for s in range(4)]

    def where() -> str:
        return "\n".join(trace[-12:])

    if direction != 0:
        assert g.phase is Phase.PASS, where()
        for seat in range(4):
            chosen = 0
            for _ in range(3):
                assert st.current_player() == seat, where()
                os_legal = _mask(st.legal_actions())
                ours = g.hands[seat] & ~chosen
                assert os_legal == ours, f"{seat} may pass: openspiel {_show(os_legal)} vs {_show(ours)}\n{where()}"
                a = rng.choice(st.legal_actions())
                chosen |= 1 << TO_CARD[a]
                st.apply_action(a)
            trace.append(f"{seat} passes {_show(chosen)}")
            g.apply(Pass(seat, chosen))
    assert g.phase is Phase.PLAY, where()

    while not st.is_terminal():
        seat = st.current_player()
        assert g.turn == seat, f"turn: openspiel {seat} vs {g.turn}\n{where()}"
        os_legal = _mask(st.legal_actions())
        ours = g.legal_play_mask(seat)
        assert os_legal == ours, (
            f"trick {g.trick_no}, seat {seat}: openspiel {_show(os_legal)} vs {_show(ours)}\n"
            f"hand {_show(g.hands[seat])}\n{where()}"
        )
        a = rng.choice(st.legal_actions())
        trace.append(f"trick {g.trick_no}: {seat} plays {format_card(TO_CARD[a])}")
        st.apply_action(a)
        g.apply(Play.of(seat, TO_CARD[a]))

    assert g.over, where()
    os_points = tuple(round(26 - r) for r in st.returns())
    ours_points = tuple(g.totals)
    assert os_points == ours_points, f"points: openspiel {os_points} vs {ours_points}\n{where()}"
    return next(e for e in g.log if isinstance(e, DealEnded))


def _run(combo: Combo, deals: int, seed: int) -> dict[str, int]:
    os_game = pyspiel.load_game("hearts", combo.params)
    rng = random.Random(f"{combo.name}:{seed}")
    seen = {"moons": 0, "negative": 0}
    for _ in range(deals):
        end = crosscheck_deal(os_game, combo.rules, rng)
        seen["moons"] += end.moon is not None
        seen["negative"] += min(end.points) < 0
    return seen


@pytest.mark.parametrize("combo", COMBOS, ids=[c.name for c in COMBOS])
def test_engine_agrees_with_openspiel(combo: Combo) -> None:
    seen = _run(combo, deals=500, seed=1)
    # random play shoots the moon in about 1% of deals: the moon scoring was compared too
    assert seen["moons"] > 0
    assert (seen["negative"] > 0) == (combo.rules.scoring == (OMNIBUS_SCORING,))


@pytest.mark.slow
@pytest.mark.parametrize("combo", COMBOS, ids=[c.name for c in COMBOS])
def test_engine_agrees_with_openspiel_long(combo: Combo) -> None:
    seen = _run(combo, deals=5_000, seed=2)
    assert seen["moons"] > 0


def test_the_card_mapping_is_by_name() -> None:
    assert format_card(TO_CARD[TO_ACTION[parse_card("QS")]]) == "QS"
    assert {format_card(c) for c in TO_CARD} == {format_card(c) for c in range(52)}
