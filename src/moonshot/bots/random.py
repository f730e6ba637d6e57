"""The uniform random bot: a legal action chosen uniformly (cards for passes, uniformly too)."""

from __future__ import annotations

import random
from typing import Any, Final

from moonshot.bots.heuristic import claim_is_sure
from moonshot.core.actions import AcceptClaim, Action, Claim, Pass, Play, RejectClaim
from moonshot.core.cards import CardSet, card_list, count
from moonshot.core.engine import Phase
from moonshot.core.views import SeatView

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - without mypy nothing is compiled, and the mark has no use

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


# module constants: compiled, ``Phase.PLAY`` is a lookup on the class at every use
_PLAY: Final = Phase.PLAY
_PASS: Final = Phase.PASS
_PILE: Final = Phase.PILE


# the method itself, called with the RNG (exactly a random.Random here): compiled, ``rng.getrandbits``
# would look it up by name on every call
_getrandbits: Final = random.Random.getrandbits


def choose_card(cards: CardSet, rng: random.Random) -> int:
    """``rng.choice(card_list(cards))`` (``cards`` not empty), the same card for the same RNG state,
    without the list: for a plain ``random.Random``, ``choice(seq)`` is ``seq[i]`` with ``i`` drawn
    by ``getrandbits`` as below (``Random._randbelow_with_getrandbits``), and ``seq[i]`` is the
    set's ``i``-th lowest card. tests/bots/test_random.py holds the two to the same answers."""
    if type(rng) is not random.Random:  # a subclass may draw otherwise: ask it
        return rng.choice(card_list(cards))
    n = count(cards)
    k = n.bit_length()
    i = _getrandbits(rng, k)
    while i >= n:
        i = _getrandbits(rng, k)
    while i:
        cards &= cards - 1
        i -= 1
    return (cards & -cards).bit_length() - 1


def sample_cards(cards: CardSet, k: int, rng: random.Random) -> CardSet:
    """The cards of ``rng.sample(card_list(cards), k)`` as a set: the same cards for the same RNG
    state. ``random.sample`` is Python code (a pass of the random bot cost more than the rest of
    its deal's decisions); for a plain ``random.Random``, a population of at most 21 and
    ``k <= 5`` it draws from a pool as below (``Random.sample``'s small-population branch, with
    ``_randbelow_with_getrandbits``). tests/bots/test_random.py holds the two to the same answers."""
    if type(rng) is not random.Random or k > 5 or not 0 <= k <= count(cards) <= 21:
        return sum(1 << c for c in rng.sample(card_list(cards), k))
    pool = card_list(cards)
    n = len(pool)
    out = 0
    for i in range(k):
        m = n - i
        bits = m.bit_length()
        j = _getrandbits(rng, bits)
        while j >= m:
            j = _getrandbits(rng, bits)
        out |= 1 << pool[j]
        pool[j] = pool[m - 1]  # the last card not chosen takes the place of the chosen one
    return out


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, it may still be subclassed in Python
class RandomBot:
    """Plays a uniformly random legal card; passes random cards; never claims; accepts a claim
    only when it is sure (:func:`~moonshot.bots.heuristic.claim_is_sure`): conceding at random
    would hand points away for nothing."""

    name = "random"

    def answer_claim(self, view: SeatView, claimer: int, rng: random.Random) -> bool:
        return claim_is_sure(view, claimer, view.revealed[claimer] & ~view.played)

    def act(self, view: SeatView, rng: random.Random) -> Action:
        phase = view.phase
        if phase is _PLAY and view.legal_plays:
            return Play.of(view.seat, choose_card(view.legal_plays, rng))
        if phase is _PASS or phase is _PILE:
            return Pass(view.seat, sample_cards(view.hand, view.rules.pass_count, rng))
        options = [a for a in view.legal if not isinstance(a, Claim)]
        if not options:
            raise ValueError(f"seat {view.seat} has nothing to do in phase {view.phase.value}")
        claimer = view.claimer
        if claimer is not None:  # a blocking claim waits for our answer
            ok = self.answer_claim(view, claimer, rng)
            return AcceptClaim(view.seat, claimer) if ok else RejectClaim(view.seat, claimer)
        return rng.choice(options)
