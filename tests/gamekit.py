"""Shared helpers for the core tests: card strings to sets and deals, scripted and random play.

Not a test module: ``from gamekit import ...`` works because pytest puts ``tests/`` on the path.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from moonshot.core.actions import Action, Charge, Pass, Play
from moonshot.core.cards import CardSet, parse_card, parse_card_set
from moonshot.core.engine import DealSpec, Game, Phase
from moonshot.core.events import Event
from moonshot.core.rules import ClaimFlow, Rules

SEAT_LETTERS = "NESW"


def cs(text: str) -> CardSet:
    """A card set from whitespace-separated cards: ``cs("2C QS AH")``."""
    return parse_card_set(text.split())


def c(text: str) -> int:
    return parse_card(text)


def deal(n: str, e: str, s: str, w: str, kind: int = 0, leader: int | None = None) -> DealSpec:
    return DealSpec((cs(n), cs(e), cs(s), cs(w)), kind, leader)


# Each seat holds one whole suit: North clubs, East diamonds, South hearts, West spades.
# Nobody can ever follow, so whoever leads first takes all 13 tricks.
SUIT_PER_SEAT = deal(
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
    "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
)


def seat(letter: str) -> int:
    return SEAT_LETTERS.index(letter)


def play(game: Game, cards: str) -> list[Event]:
    """Play the cards in order, each by the seat whose turn it is."""
    events: list[Event] = []
    for text in cards.split():
        events += game.apply(Play.of(game.turn, c(text)))
    return events


def play_seated(game: Game, moves: str) -> None:
    """Play ``"S2C W5C ..."``: each move names its seat, which must be the seat to play."""
    for move in moves.split():
        who = seat(move[0])
        assert game.turn == who, f"{move}: it is {SEAT_LETTERS[game.turn]}'s turn"
        game.apply(Play.of(who, c(move[1:])))


def charge(game: Game, moves: str) -> None:
    """Apply ``"N- EQS N-"``: a seat letter then the cards charged run together (``-``: none)."""
    for move in moves.split():
        body = move[1:]
        cards = 0 if body == "-" else cs(" ".join(body[i : i + 2] for i in range(0, len(body), 2)))
        game.apply(Charge(seat(move[0]), cards))


def pass_all(game: Game, passes: Iterable[str]) -> None:
    for s, text in enumerate(passes):
        game.apply(Pass(s, cs(text)))


def lowest_play(game: Game) -> None:
    """Play the lowest-numbered legal card of the seat to play."""
    mask = game.legal_play_mask(game.turn)
    game.apply(Play.of(game.turn, (mask & -mask).bit_length() - 1))


def random_action(game: Game, rng: random.Random) -> Action:
    """A uniformly random legal action of a random seat to act (plays via the fast mask)."""
    seats = game.to_act()
    who = seats[rng.randrange(len(seats))]
    if game.phase is Phase.PLAY and game.claimer is None:
        r = rng.random()
        if r < 0.1 and game.rules.claims and game.rules.claim_flow is ClaimFlow.CONCURRENT:
            # nobody is waited on for claims: any seat may claim, accept or reject at any time
            # (often enough that some claims collect all three accepts before the hand ends)
            anyone = rng.randrange(4)
            return rng.choice([a for a in game.legal_actions(anyone) if not isinstance(a, Play)])
        mask = game.legal_play_mask(who) if r >= 0.02 else 0
        if mask:
            bits = [i for i in range(52) if mask >> i & 1]
            return Play.of(who, rng.choice(bits))
    if game.phase in (Phase.PASS, Phase.PILE):
        hand = [i for i in range(52) if game.hands[who] >> i & 1]
        return Pass(who, sum(1 << x for x in rng.sample(hand, game.rules.pass_count)))
    options = game.legal_actions(who)
    return rng.choice(options)


def play_random_game(rules: Rules, seed: int, deals: list[DealSpec] | None = None, max_deals: int = 50) -> Game:
    """Play a whole game (or ``max_deals`` deals) with random legal actions seeded by ``seed``."""
    game = Game(rules, seed, deals)
    rng = random.Random(seed)
    while not game.over and game.deal_index < max_deals:
        game.apply(random_action(game, rng))
    return game


def state(game: Game) -> tuple[object, ...]:
    """Everything an illegal action must leave unchanged."""
    return (
        len(game.log),
        tuple(game.hands),
        tuple(game.actions),
        game.phase,
        game.to_act(),
        tuple(game.trick_cards),
        tuple(game.totals),
        tuple(game.charged),
        tuple(game.passed),
        game.claimer,
        game.claiming,
        tuple(game.claim_accepts),
        tuple(game.legal_actions(s) for s in range(4)) if game.phase is not Phase.PASS else (),
    )


@dataclass(frozen=True)
class RecordedDeal:
    """One Turbo Hearts hand as the reference engine played it (see test_engine)."""

    hands: tuple[str, str, str, str]
    charges: str
    plays: str
    scores: tuple[int, int, int, int]
    passes: tuple[str, str, str, str] | None = None

    def spec(self) -> DealSpec:
        return deal(*self.hands)
