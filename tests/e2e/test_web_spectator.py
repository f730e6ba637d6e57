"""What each viewer may see: two people at one Turbo table never see a hidden card of another
seat before it is public (not in the page, not in the events their browser receives), while a
spectator, who sits nowhere, sees every hand on a server run with ``--open-spectators`` (without
it a spectator sees only what is public: tests/security/test_spectators.py). A claim shows the
claimer's hand to the others, who answer it on the page."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from e2e.webkit import TIMEOUT_MS, Person, act_if_asked, chromium, my_seat, web_server

pytestmark = [pytest.mark.asyncio, pytest.mark.browser]

SEATS = ("north", "east", "south", "west")


# One look at the page, in one go (no event can land halfway): the card faces drawn where, the
# backs drawn for each other seat, the cards the events received so far made public to everyone
# (plays, charges, exposures, claims), and whether the drawing shows the page's state yet.
LOOK = """(me) => {
  const seats = ["north", "east", "south", "west"];
  const faces = (root, sel) => [...root.querySelectorAll(sel)].map((e) => e.dataset.card);
  const drawn = {
    mine: faces(document, ".my-hand .card.face"),
    trick: faces(document, ".trick-area .card.face"),
    claims: faces(document, ".claims .card.face"),
    others: {},
    backs: {},
  };
  for (const a of document.querySelectorAll(".seat-area")) {
    if (a.dataset.pos === "bottom") { drawn.bottom = a.dataset.seat; continue; }
    drawn.others[a.dataset.seat] = faces(a, ".other-hand .card.face");
    drawn.backs[a.dataset.seat] = a.querySelectorAll(".other-hand .card.back").length;
  }
  const pub = new Set();
  for (const { event: e } of window.moonshotEvents) {
    if (e.type === "play") pub.add(e.card);
    else if (e.type === "charge" || e.type === "expose") e.cards.forEach((c) => pub.add(c));
    else if (e.type === "claim") e.hand.forEach((c) => pub.add(c));
    else if (e.type === "reveal_charges") seats.forEach((s) => e[s].forEach((c) => pub.add(c)));
  }
  const shown = [...drawn.trick, ...drawn.claims];
  for (const s of seats) if (s !== me && drawn.others[s]) shown.push(...drawn.others[s]);
  const st = window.moonshotState;
  const same = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  const drawnCount = (s) => drawn.backs[s] + drawn.others[s].length;
  const shows = (s) => same(s === drawn.bottom ? drawn.mine : drawn.others[s], st.hands[s]);
  const settled = me
    ? same(drawn.mine, st.hands[me]) && seats.every((s) => s === me || drawnCount(s) === st.counts[s])
    : seats.every((s) => shows(s) && st.hands[s].length === st.counts[s]);
  return { leaks: shown.filter((c) => !pub.has(c)), settled, drawn, over: st.handScores.length > 0 };
}"""


async def looks(page: Any, me: str | None) -> AsyncIterator[dict[str, Any]]:
    """LOOK again and again, 50 ms apart, for as long as a browser test waits for anything (a
    loaded machine may be slow to draw the next frame); the caller stops once the page settles."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT_MS / 1000
    while True:
        yield await page.evaluate(LOOK, me)
        if asyncio.get_running_loop().time() > deadline:
            return
        await asyncio.sleep(0.05)


async def check_page_private(person: Person, me: str) -> None:
    """The page draws only this seat's own cards, the cards on the table and public ones, and it
    settles on the seat's state (it draws once per animation frame)."""
    look: dict[str, Any] = {}
    async for look in looks(person.page, me):
        assert look["leaks"] == [], f"{me} sees hidden cards: {look}"
        if look["settled"]:
            return
    raise AssertionError(f"the page does not settle on {me}'s state: {look}")


async def spectator_sees_all(carol: Person) -> bool:
    """Every hand is drawn face up for the spectator; True once the hand is over."""
    look: dict[str, Any] = {}
    async for look in looks(carol.page, None):
        assert all(n == 0 for n in look["drawn"]["backs"].values()), look
        if look["settled"]:
            return bool(look["over"])
    raise AssertionError(f"the spectator's page does not show every hand: {look}")


def check_events_private(seen: list[dict[str, Any]], me: str) -> None:
    """No event this seat received shows another seat's hidden cards."""
    for e in seen:
        t = e["type"]
        if t == "deal":
            assert all(e[s] == [] for s in SEATS if s != me), e
            assert len(e[me]) == 13
        elif t == "send_pass":
            assert e["from"] == me or e["cards"] == [], e
        elif t == "recv_pass":
            assert e["to"] == me or e["cards"] == [], e
        elif t == "play_status" and e["next_player"] != me:
            assert e["legal_plays"] == [], e


async def test_seated_people_never_see_hidden_cards_and_a_spectator_sees_all(tmp_path: Path) -> None:
    # --open-spectators: Turbo's own trust model, where whoever watches sees every hand
    async with web_server(tmp_path, seed=5, open_spectators=True) as app, chromium() as browser:
        base = f"http://127.0.0.1:{app.http_port}"
        alice = await Person.open(browser, base, "alice")
        bob = await Person.open(browser, base, "bob")
        carol = await Person.open(browser, base, "carol")
        await alice.enter_lobby()
        game_id = await alice.create_game("turbo", "classic")
        await bob.enter_lobby()
        row = bob.page.locator(f"#games li[data-id='{game_id}']")
        await row.locator("[data-action=join]").click()
        await row.locator(".chip", has_text="bob").wait_for()
        await alice.page.locator(f"#games li[data-id='{game_id}'] .chip", has_text="bob").wait_for()
        await alice.add_bots(game_id, "heuristic", 2)
        await alice.open_table(game_id)
        await bob.page.locator(f"#games li[data-id='{game_id}'] a[data-action=open]").click()
        await bob.page.wait_for_function("document.body.dataset.replayDone === 'true'")
        # carol, in nobody's chair, watches from the lobby's Watch link
        await carol.enter_lobby()
        await carol.page.locator(f"#games li[data-id='{game_id}'] a[data-action=watch]").click()
        await carol.page.wait_for_function("document.body.dataset.replayDone === 'true'")
        assert await carol.page.evaluate("document.body.dataset.seat") == "spectator"

        people = {await my_seat(alice.page): alice, await my_seat(bob.page): bob}
        assert len(people) == 2
        claimed = False
        acted = True
        for _ in range(2000):
            if not acted:
                await asyncio.sleep(0.05)
                acted = any([await act_if_asked(p) for p in people.values()])
                continue
            for seat, person in people.items():
                await check_page_private(person, seat)
            # a spectator sees every card of every hand, face up
            if await spectator_sees_all(carol):
                break
            acted = False
            for seat, person in people.items():
                state = await person.state()
                # bob claims once he is leading with four or fewer cards; alice answers on her page
                if (
                    person is bob
                    and not claimed
                    and state["phase"] == "playing"
                    and state["nextPlayer"] == seat
                    and not state["trick"]
                    and len(state["hands"][seat]) <= 4
                ):
                    claimed = True
                    await bob.page.click("[data-action=claim]")
                    panel = alice.page.locator(f".claim-panel[data-claimer='{seat}']")
                    await panel.wait_for()
                    shown = await panel.locator(".card").evaluate_all("els => els.map(e => e.dataset.card)")
                    assert sorted(shown) == sorted(state["hands"][seat])
                    await check_page_private(alice, next(s for s, p in people.items() if p is alice))
                    await alice.shot("table-claim")
                    await carol.shot("table-spectator")
                    await panel.locator("[data-action=reject]").click()
                    await panel.wait_for(state="detached")
                    acted = True
                    continue
                acted = await act_if_asked(person) or acted
        else:
            raise AssertionError("the hand did not finish")
        assert claimed

        # the events each browser received: nothing hidden for the seated, everything for carol
        for seat, person in people.items():
            check_events_private([x["event"] for x in await person.page.evaluate("window.moonshotEvents")], seat)
        seen = [x["event"] for x in await carol.page.evaluate("window.moonshotEvents")]
        deal = next(e for e in seen if e["type"] == "deal")
        assert all(len(deal[s]) == 13 for s in SEATS)
        assert not any(e["type"].startswith("hidden_") or e["type"] == "blind_charge" for e in seen)
        assert all(e["legal_plays"] for e in seen if e["type"] == "play_status")
        for p in (alice, bob, carol):
            assert p.errors == []
            await p.close()
