"""Search's lookahead: its card playouts see further tricks played by the value network's choices.

``search`` values a root card in a sampled world by playing the rest of the trick greedily and
asking the value network about the position at the trick's end: a fixed depth, so once a decision
has seen enough worlds (a few hundred) more time changes nothing (docs/search.md, "Why more time
buys little"). ``search:lookahead=N`` plays ``N`` more tricks before the network is asked: in each,
the seat to lead leads the card with its own lowest relative cost by the value network (each of
its distinct cards tried, the trick finished by the rollout policy), and every other seat in turn
plays its own best card the same way (:func:`~moonshot.bots.endgame._reply_to_trick_end`). Every
seat choosing for itself in the known world is a deeper perfect-information search with the
network at its leaves; it costs a world many network positions, so it buys fewer worlds. In a
sampled world that search lets the other seats answer as if they saw every hand;
``lookahead_by=self`` has only the bot's own seat choose by the network, the others playing the
rollout policy's card as in any playout.

One network call values every option of one seat's choice in all of a world's root cards at once.
The rollout policy here draws no random numbers (greedy), so a seed gives the same game.
"""

from __future__ import annotations

import random
from typing import Any

from moonshot.core.cards import CardSet

from .endgame import Choice, _choice, _play_best, _reply_to_trick_end, _valued
from .playout import Deal, Policy


def next_tricks(
    deals: list[Deal],
    tricks: int,
    net: Any,
    policy: Policy,
    rng: random.Random,
    weight: float,
    value_cards: int,
    matters: CardSet,
    me: int = -1,
) -> None:
    """Play ``tricks`` more tricks in each of ``deals`` (each between tricks), every seat choosing
    its card by the value network (``me`` a seat: that seat only, the others by ``policy``); a deal
    whose seat to lead holds fewer than ``value_cards`` cards (where the network does not value
    positions) is left as it is."""
    if me >= 0:
        for d in deals:
            _own_tricks(d, tricks, net, policy, rng, weight, value_cards, matters, me)
        return
    for _ in range(tricks):
        leading: list[Choice] = []
        moved: list[Deal] = []
        for d in deals:
            if d.done or d.trick or not _valued(d, value_cards + 1):
                continue
            moved.append(d)
            choice = _choice(d, policy, rng, matters)
            if choice is not None:
                leading.append(choice)
        if not moved:
            return
        _play_best(leading, net, policy, rng, weight, value_cards)
        _reply_to_trick_end(moved, net, policy, rng, weight, value_cards, matters)


def _own_tricks(
    d: Deal,
    tricks: int,
    net: Any,
    policy: Policy,
    rng: random.Random,
    weight: float,
    value_cards: int,
    matters: CardSet,
    me: int,
) -> None:
    """:func:`next_tricks` where only ``me`` chooses by the network: the other seats play
    ``policy``'s card, which reads no hidden hand's content beyond what a playout does."""
    for _ in range(tricks):
        if d.done or d.trick or not _valued(d, value_cards + 1):
            return
        while True:
            if d.turn != me:
                legal = d.legal()
                d.play(policy(d, d.turn, legal, rng) if legal & (legal - 1) else legal.bit_length() - 1)
            else:
                choice = _choice(d, policy, rng, matters)
                if choice is not None:
                    _play_best([choice], net, policy, rng, weight, value_cards)
            if not d.trick or d.done:
                break
