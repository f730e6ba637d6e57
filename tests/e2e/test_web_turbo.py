"""Turbo Hearts in the browser: a person charges a card, claims, and the bots answer the claim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e.webkit import Person, chromium, click_card, dom_hand, expect, my_seat, next_frame, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ("north", "east", "south", "west")
RANKS = "23456789TJQKA"
CHARGEABLE = {"QS", "AH", "JD", "TC"}


def all_boss(state: dict[str, Any], seat: str) -> bool:
    """Every card in ``seat``'s hand beats every card of its suit still out: a sure claim on lead."""
    mine = set(state["hands"][seat])
    played = {c for s in SEATS for c in state["taken"][s]} | {p["card"] for p in state["trick"]}
    out = {r + s for r in RANKS for s in "CDHS"} - mine - played
    return all(not any(o[1] == c[1] and RANKS.index(o[0]) > RANKS.index(c[0]) for o in out) for c in mine)


async def events(person: Person) -> list[dict[str, Any]]:
    return [e["event"] for e in await person.page.evaluate("window.moonshotEvents")]


async def test_a_turbo_hand_with_a_charge_and_a_claim(tmp_path: Path) -> None:
    async with web_server(tmp_path, seed=11) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        game_id = await alice.create_game("turbo", "classic")
        await alice.add_bots(game_id, "heuristic", 3)
        await alice.open_table(game_id)
        page = alice.page
        seat = await my_seat(page)
        state = await alice.state()
        assert state["variant"] == "turbo" and state["rules"] == "classic"

        # pass three cards that cannot be charged, so there is something to charge
        await page.wait_for_selector("[data-action=pass]")
        keep = [c for c in await dom_hand(page) if c not in CHARGEABLE][:3]
        for card in keep:
            await click_card(page, card)
        await page.click("[data-action=pass]:not([disabled])")

        # charging: only the chargeable cards in the hand are offered
        await page.wait_for_selector("[data-action=no-charge]")
        state = await alice.state()
        mine = sorted(CHARGEABLE & set(state["hands"][seat]))
        assert mine, "the seed deals alice a chargeable card"
        offered = await page.eval_on_selector_all(
            ".my-hand button.card:not([disabled])", "els => els.map(e => e.dataset.card)"
        )
        assert sorted(offered) == mine
        charge = mine[0]
        await click_card(page, charge)
        button = page.locator("[data-action=charge]")
        assert charge[0] in await button.inner_text()
        await button.click()
        await page.wait_for_function("([s, c]) => window.moonshotState.charged[s].includes(c)", arg=[seat, charge])
        # the page shows it (drawn at the next animation frame): on the card and on the plate
        await page.locator(f".my-hand .card.charged[data-card='{charge}']").wait_for()
        await expect(page.locator(".seat-area.pos-bottom .badge.charged")).to_have_count(1)
        await alice.shot("table-turbo-charged")
        # classic charging: everyone passes once more after the last charge. alice answers each
        # time the state asks her and the page (as it stands, a frame later) offers "No charge"
        asked = """(s) => { const st = window.moonshotState;
            return st.phase !== 'charging' || (!st.chargeDone[s] && (!st.nextCharger || st.nextCharger === s)
              && document.querySelector('[data-action=no-charge]')); }"""
        answered = """(s) => { const st = window.moonshotState;
            return st.phase !== 'charging' || st.chargeDone[s] || (st.nextCharger && st.nextCharger !== s); }"""
        while True:
            await page.wait_for_function(asked, arg=seat)
            await next_frame(page)
            if (await alice.state())["phase"] != "charging":
                break
            await page.click("[data-action=no-charge]")
            await page.wait_for_function(answered, arg=seat)

        # play; claim once early (not sure: a bot rejects it) and again once every card is a winner
        claimed_early = claimed_sure = False
        while not (await alice.state())["handScores"]:
            await page.wait_for_function(
                "(s) => window.moonshotState.handScores.length > 0 || "
                "(window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal'))",
                arg=seat,
            )
            # the page as it stands (a frame after the state): not the cards of alice's last
            # turn, drawn before her card reached the state
            await next_frame(page)
            state = await alice.state()
            if state["handScores"]:
                break
            leading = not state["trick"]
            if leading and all_boss(state, seat) and not claimed_sure:
                claimed_sure = True
                await page.click("[data-action=claim]")
                await page.wait_for_function("window.moonshotState.handScores.length > 0")
                break
            if leading and state["trickNo"] >= 3 and not claimed_early and not all_boss(state, seat):
                claimed_early = True
                await page.click("[data-action=claim]")
                await page.wait_for_function(
                    "(s) => window.moonshotEvents.some(e => e.event.type === 'reject_claim' && e.event.claimer === s)",
                    arg=seat,
                )
                continue
            before = len(state["hands"][seat])
            await click_card(
                page,
                (await page.eval_on_selector_all(".my-hand button.card.legal", "els => els.map(e => e.dataset.card)"))[
                    0
                ],
            )
            await page.wait_for_function(
                "([s, n]) => window.moonshotState.hands[s].length < n || window.moonshotState.handScores.length",
                arg=[seat, before],
            )

        seen = await events(alice)
        claims = [e for e in seen if e["type"] == "claim"]
        assert claimed_early and claims[0]["seat"] == seat
        # the claimer's hand is revealed to everyone in the claim, and a bot turned the unsure one down
        assert any(e["type"] == "reject_claim" and e["claimer"] == seat for e in seen)
        if claimed_sure:
            last = claims[-1]
            assert last["seat"] == seat and last["hand"]
            accepted = {e["acceptor"] for e in seen if e["type"] == "accept_claim" and e["claimer"] == seat}
            assert accepted == set(SEATS) - {seat}
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        state = await alice.state()
        scores = state["handScores"][0]
        assert any(scores[s] for s in SEATS)
        assert claimed_sure, "the seed gives alice a sure claim on lead"
        assert alice.errors == []
        await alice.close()
