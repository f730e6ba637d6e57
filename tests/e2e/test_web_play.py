"""A person plays in the browser: the lobby, a standard game against three bots, a whole hand by
clicking (and by keyboard), the score sheet, and what the table shows on the way."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from e2e.webkit import (
    PHONE,
    Person,
    chromium,
    click_card,
    dom_hand,
    expect,
    my_seat,
    next_frame,
    pass_three,
    raised_cards,
    web_server,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]


async def test_a_person_plays_a_standard_hand_against_three_bots(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        alice = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "alice")
        await alice.enter_lobby()
        game_id = await alice.create_game("standard")
        await alice.shot("lobby-desktop")
        await alice.add_bots(game_id, "random", 3)
        row = alice.page.locator(f"#games li[data-id='{game_id}']")
        await expect(row.locator(".chip:not(.empty)")).to_have_count(4)
        assert "Standard" in await row.locator(".game-title").inner_text()
        await alice.open_table(game_id)
        page = alice.page
        seat = await my_seat(page)
        assert seat in ("north", "east", "south", "west")

        # 13 cards, sorted by suit (clubs, diamonds, spades, hearts) then rank, all selectable to pass
        hand = await dom_hand(page)
        assert len(hand) == 13
        suits = "CDSH"
        ranks = "23456789TJQKA"
        assert hand == sorted(hand, key=lambda c: (suits.index(c[1]), ranks.index(c[0])))
        assert "to the left" in await page.inner_text(".action-bar")
        passed = await pass_three(alice)
        state = await alice.state()
        assert not set(passed) & set(state["hands"][seat])
        assert len(state["hands"][seat]) in (10, 13)  # the pass from the right may already be in

        # play the hand: legal cards raised and the rest dimmed; every other card by keyboard
        turns = 0
        while not (await alice.state())["handScores"]:
            await page.wait_for_function(
                "(s) => window.moonshotState.handScores.length > 0 || "
                "(window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal'))",
                arg=seat,
            )
            # the page as it stands: the legal cards above may still be the last turn's, drawn
            # before alice's card reached the state and her turn came round again
            await next_frame(page)
            state = await alice.state()
            if state["handScores"]:
                break
            raised = await raised_cards(page)
            assert sorted(raised) == sorted(state["legalPlays"])
            dimmed = await page.eval_on_selector_all(".my-hand .card.dimmed", "els => els.map(e => e.dataset.card)")
            assert sorted(dimmed + raised) == sorted(state["hands"][seat])
            if turns == 5:
                await alice.shot("table-desktop")
            before = len(state["hands"][seat])
            if turns % 2:
                await page.keyboard.press("ArrowRight")  # focuses the first raised card
                card = await page.evaluate("document.activeElement.dataset.card")
                assert card == raised[0]
                await page.keyboard.press("Enter")
            else:
                card = raised[-1]
                await click_card(page, card)
            await page.wait_for_function(
                "([s, n]) => window.moonshotState.hands[s].length < n || window.moonshotState.handScores.length",
                arg=[seat, before],
            )
            # the card leaves the hand on the page (drawn at the next animation frame)
            await page.wait_for_function(
                "(c) => !document.querySelector(`.my-hand [data-card='${c}']`) || window.moonshotState.handNo > 1",
                arg=card,
            )
            turns += 1
        assert turns == 13

        # the score sheet opens by itself with the hand's row and the totals
        sheet = page.locator(".dialog-scores")
        await sheet.wait_for()
        assert "Hand 1 is over" in await sheet.inner_text()
        state = await alice.state()
        row1 = state["handScores"][0]
        points = [row1[s] for s in ("north", "east", "south", "west")]
        assert sum(points) in (26, 78)  # 26 points a hand, or 3 x 26 after a moon
        cells = await sheet.locator("tbody tr").first.locator("td").all_inner_texts()
        assert cells[1:] == [str(p) for p in points]
        await alice.shot("table-score-sheet")
        await sheet.locator("[data-action=close-sheet]").click()
        await sheet.wait_for(state="detached")
        # the next hand is dealt and passes to the right
        await page.wait_for_function("window.moonshotState.handNo === 2")
        await page.locator(".action-bar", has_text="to the right").wait_for()
        assert alice.errors == []
        await alice.close()


async def test_the_table_fits_a_phone_and_an_illegal_card_shows_the_engine_reason(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        bob = await Person.open(browser, base, "bob", viewport=PHONE, pace="normal")  # as people see it
        await bob.enter_lobby()
        await bob.shot("lobby-phone", full_page=True)
        game_id = await bob.create_game("standard")
        await bob.add_bots(game_id, "random", 3)
        await bob.open_table(game_id)
        page = bob.page
        seat = await my_seat(page)
        await pass_three(bob)
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        await bob.shot("table-phone", full_page=True)
        # nothing on the page is wider than the phone
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"]
        # every card of the hand is on screen
        boxes = await page.eval_on_selector_all(
            ".my-hand .card", "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"
        )
        assert all(left >= 0 and right <= PHONE["width"] for left, right in boxes)

        # a card the page would not offer, sent anyway: the server's reason is shown to the person
        state = await bob.state()
        illegal = [c for c in state["hands"][seat] if c not in state["legalPlays"]]
        if illegal:
            play = "(c) => window.moonshotTable.run(() => window.moonshotTable.actions.play(c))"
            await page.evaluate(play, illegal[0])
            alert = page.locator(".action-bar [role=alert]")
            await alert.wait_for()
            text = await alert.inner_text()
            # the engine's reason by its code, in the page's words ("You may not play 5♦: you must follow ♣")
            assert text.startswith("You may not ") and "N may not" not in text
            assert illegal[0] in await dom_hand(page)  # and nothing was played
        await asyncio.sleep(0)
        assert bob.errors == []
        await bob.close()


async def test_a_dropped_stream_reconnects_without_applying_anything_twice(tmp_path: Path) -> None:
    async with web_server(tmp_path) as app, chromium() as browser:
        carl = await Person.open(browser, f"http://127.0.0.1:{app.http_port}", "carl")
        await carl.enter_lobby()
        game_id = await carl.create_game("omnibus")
        await carl.add_bots(game_id, "random", 3)
        await carl.open_table(game_id)
        page = carl.page
        seat = await my_seat(page)
        await pass_three(carl)
        await page.fill(".chat-form input", "hello table")
        await page.press(".chat-form input", "Enter")
        await page.locator(".chat-log li", has_text="hello table").wait_for()
        before = await carl.state()
        received = await page.evaluate("window.moonshotEvents.filter(e => e.event.type !== 'end_replay').length")
        # the stream drops for good (as when the server restarts): the page opens a fresh one,
        # which replays the whole game; nothing it already had is applied again
        await page.evaluate("window.moonshotSubscription.source.close(); window.moonshotSubscription.open()")
        await page.wait_for_function("window.moonshotSubscription.source.readyState === EventSource.OPEN")
        # the fresh stream's replay has come in to its end (what it had already is dropped, the
        # end of the replay with it when no new event has come since: it is counted all the same)
        await page.wait_for_function(
            """() => [...window.moonshotSubscription.connSeen.values()]
                 .some((copies) => [...copies.keys()].some((data) => data.includes('"end_replay"')))"""
        )
        await next_frame(page)
        after = await carl.state()
        # end_replay has no id of its own (an EventSource repeats the last one): every other
        # message is there once
        ids = await page.evaluate("window.moonshotEvents.filter(e => e.event.type !== 'end_replay').map(e => e.id)")
        assert len(ids) == len(set(ids)) and len(ids) >= received
        assert after["chat"] == before["chat"] == [{"name": "carl", "message": "hello table"}]
        assert after["handNo"] == before["handNo"] == 1
        assert len(after["hands"][seat]) <= 13 and after["counts"] == {
            s: len(after["hands"][s]) or after["counts"][s] for s in after["counts"]
        }
        await expect(page.locator(".chat-log li")).to_have_count(1)
        # and play goes on
        await page.wait_for_function(
            "(s) => window.moonshotState.nextPlayer === s && document.querySelector('.my-hand button.card.legal')",
            arg=seat,
        )
        card = (await raised_cards(page))[0]
        await click_card(page, card)
        await page.wait_for_function(
            "(c) => !window.moonshotState.hands[Object.keys(window.moonshotState.hands)"
            ".find(s => window.moonshotState.players[s].name === 'carl')].includes(c)",
            arg=card,
        )
        assert carl.errors == []
        await carl.close()
