// Screen-reader mode of the table page: the game said in words into live regions. With the
// preference on (settings.js "announce"), each card played ("West plays the queen of spades"),
// each trick's taker and its points ("North takes the trick, 2 points"), on the viewer's turn
// their hand and the cards they may play, the pass, and each hand's and the game's scores go to a
// polite region (#announce); "Your turn" alone goes to an assertive one (#announce-turn). The
// regions are on the page for everyone from the start (a live region must exist before it
// speaks); with the mode off they stay empty, and the table's own polite status line still speaks.
//
// A replay (history.js) says the same words as it steps (Announcer.replayStep).
//
// It owns the spoken words (card, seat and score phrases through the catalogue) and the regions;
// it reads the folded state (state.js) and events, and never changes the game or the table.

import { closeModal, isModalOpen, openModal } from "./dialog.js";
import { t } from "./i18n.js";
import { onSettings, setting } from "./settings.js";
import { SEATS, applyEvent, foldEvents } from "./state.js";

const KEEP = 40; // messages kept in the polite region (older ones are dropped from the DOM)
const SUIT_ORDER = ["C", "D", "S", "H"];
const RANK_ORDER = "23456789TJQKA";
const EN_RANK = { 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
const EN_SUIT = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const EN_SEAT = { north: "North", east: "East", south: "South", west: "West" };
const EN_PASS = { left: "to the left", right: "to the right", across: "across" };

/** A rank as a word: `form` "name" (a card named alone) or "object" (the card played: Polish
 * puts it in the accusative, "damę"). */
export function rankWord(rank, form = "name") {
  const key = form === "object" ? `a11y.rank.object.${rank}` : `a11y.rank.${rank}`;
  return t(key, {}, EN_RANK[rank] || rank);
}

export function suitWord(suit) {
  return t(`a11y.suit.${suit}`, {}, EN_SUIT[suit] || suit);
}

/** "QS" -> "queen of spades" ("dama pik"); form "object" -> the card as what is played ("damę pik"). */
export function spokenCard(card, form = "name") {
  return t(form === "object" ? "a11y.card.object" : "a11y.card", { rank: rankWord(card[0], form), suit: suitWord(card[1]) }, "{rank} of {suit}");
}

/** Cards grouped by suit, low to high: "clubs: 2, 7, king; hearts: queen". */
export function spokenCards(cards) {
  const groups = [];
  for (const suit of SUIT_ORDER) {
    const ranks = cards.filter((c) => c[1] === suit).sort((a, b) => RANK_ORDER.indexOf(a[0]) - RANK_ORDER.indexOf(b[0]));
    if (ranks.length) groups.push(t("a11y.suit_group", { suit: suitWord(suit), ranks: ranks.map((c) => rankWord(c[0])).join(", ") }, "{suit}: {ranks}"));
  }
  return groups.length ? groups.join("; ") : t("a11y.no_cards", {}, "no cards");
}

export function seatWord(seat) {
  return t(`a11y.seat.${seat}`, {}, EN_SEAT[seat] || seat);
}

/** The points a trick's cards carry by the variant's scoring (before the deal's doublings and the
 * moon): `scoring` is /api/variants' list for the game's variant, indexed by the deal's kind. */
export function trickPoints(scoring, kind, trickNo, cards) {
  if (!Array.isArray(scoring) || !scoring.length) return null;
  const sc = scoring.length > 1 ? scoring[kind || 0] : scoring[0];
  if (!sc) return null;
  let points = sc.per_trick || 0;
  for (const c of cards) points += (sc.cards || {})[c] || 0;
  points += (sc.trick_number || {})[String(trickNo)] || 0;
  return points;
}

export class Announcer {
  /** `me`: () => the viewer's seat or null. Makes the two live regions at the end of <body>. */
  constructor(me) {
    this.me = me;
    this.scoring = null;
    this.polite = document.getElementById("announce") || region("announce", "polite");
    this.assertive = document.getElementById("announce-turn") || region("announce-turn", "assertive");
    this.on = setting("announce");
    this.turnSaid = null; // the decision "Your turn" was said for
    onSettings((s) => {
      this.on = Boolean(s.announce);
    });
    window.moonshotAnnouncer = this;
  }

  setScoring(scoring) {
    this.scoring = Array.isArray(scoring) ? scoring : null;
  }

  say(text) {
    if (!this.on || !text) return;
    const p = document.createElement("p");
    p.textContent = text;
    this.polite.append(p);
    while (this.polite.childElementCount > KEEP) this.polite.firstElementChild.remove();
  }

  sayNow(text) {
    if (!this.on || !text) return;
    // a new node each time, so the same words said twice are read twice
    this.assertive.textContent = "";
    const p = document.createElement("p");
    p.textContent = text;
    this.assertive.append(p);
  }

  who(state, seat) {
    return seat === this.me() ? t("a11y.you", {}, "You") : seatWord(seat);
  }

  /** A live event, folded into `state` already. */
  event(ev, state) {
    if (!this.on || !state.replayDone) return;
    const me = this.me();
    switch (ev.type) {
      case "play": {
        const card = spokenCard(ev.card, "object");
        this.say(ev.seat === me ? t("a11y.play.you", { card }, "You play the {card}") : t("a11y.play", { seat: seatWord(ev.seat), card }, "{seat} plays the {card}"));
        break;
      }
      case "end_trick": {
        const cards = (state.lastTrick ? state.lastTrick.plays : []).map((p) => p.card);
        const points = trickPoints(this.scoring, state.kind, state.trickNo, cards);
        const mine = ev.winner === me;
        if (points === null) {
          this.say(mine ? t("a11y.trick.you", {}, "You take the trick") : t("a11y.trick", { seat: seatWord(ev.winner) }, "{seat} takes the trick"));
        } else {
          this.say(
            mine
              ? t("a11y.trick.you.points", { points }, "You take the trick, {points, plural, one {# point} other {# points}}")
              : t("a11y.trick.points", { seat: seatWord(ev.winner), points }, "{seat} takes the trick, {points, plural, one {# point} other {# points}}"),
          );
        }
        break;
      }
      case "deal":
        this.say(t("a11y.dealt", { hand: state.handNo }, "Hand {hand} is dealt."));
        break;
      case "hand_complete": {
        const row = state.handScores[state.handScores.length - 1] || {};
        this.say(
          t(
            "a11y.hand_over",
            { hand: row.hand ?? state.handNo, points: this.scoreList((s) => row[s]), totals: this.scoreList((s) => state.totals[s]) },
            "Hand {hand} is over. Points: {points}. Totals: {totals}.",
          ),
        );
        break;
      }
      case "game_complete":
        this.say(t("a11y.game_over", { totals: this.scoreList((s) => state.totals[s]) }, "Game over. Totals: {totals}."));
        break;
      default:
        break;
    }
  }

  /** The replay (history.js) stepped from its first `from` events to its first `to`: forward
   * by a card or a trick, each card played and the trick's taker are said as in live play (by
   * event(), the same words); a longer step (a hand) or a step back says where the replay
   * stands now. */
  replayStep(events, from, to, where) {
    if (!this.on || from === to) return;
    const passed = events.slice(Math.min(from, to), Math.max(from, to));
    const tricks = passed.filter((e) => e.type === "end_trick").length;
    if (to > from && tricks <= 1 && !passed.some((e) => e.type === "deal")) {
      const state = foldEvents(events, from);
      state.replayDone = true;
      for (let i = from; i < to; i += 1) {
        applyEvent(state, events[i]);
        this.event(events[i], state);
      }
    } else if (where) {
      this.say(where);
    }
  }

  scoreList(value) {
    return SEATS.map((s) => `${this.who(null, s)} ${value(s) ?? 0}`).join(", ");
  }

  /** After each redraw: on a decision that just became the viewer's, "Your turn" (assertive) and
   * what it is, with their hand and the cards they may play (polite). */
  turn(state) {
    const me = this.me();
    if (!this.on || !me || !state.replayDone || state.complete) return;
    const key = decisionKey(state, me);
    if (!key) {
      this.turnSaid = null;
      return;
    }
    if (key === this.turnSaid) return;
    this.turnSaid = key;
    this.sayNow(t("a11y.turn", {}, "Your turn"));
    const hand = spokenCards(state.hands[me] || []);
    if (state.phase === "playing") {
      this.say(t("a11y.turn.play", { legal: spokenCards(state.legalPlays || []), hand }, "You may play: {legal}. Your hand: {hand}."));
    } else if (state.phase === "passing") {
      const direction = t(`a11y.pass.${state.pass}`, {}, EN_PASS[state.pass] || state.pass || "");
      this.say(t("a11y.turn.pass", { direction, hand }, "Pick three cards to pass {direction}. Your hand: {hand}."));
    } else if (state.phase === "charging") {
      this.say(t("a11y.turn.charge", { hand }, "Charge cards, or charge nothing. Your hand: {hand}."));
    } else if (state.phase === "exposing") {
      this.say(t("a11y.turn.expose", { hand }, "Expose the ace of hearts, or not. Your hand: {hand}."));
    }
  }
}

function decisionKey(state, me) {
  if (state.phase === "playing" && state.nextPlayer === me && !state.trickWinner) return `play:${state.handNo}:${state.trickNo}`;
  if (state.phase === "passing" && !state.passDone[me]) return `pass:${state.handNo}`;
  if (state.phase === "charging" && !state.chargeDone[me] && (!state.nextCharger || state.nextCharger === me)) return `charge:${state.handNo}:${state.charged[me].length}`;
  if (state.phase === "exposing" && !state.exposeDone[me]) return `expose:${state.handNo}`;
  return null;
}

function region(id, politeness) {
  const box = document.createElement("div");
  box.id = id;
  box.className = "sr-only";
  box.setAttribute("aria-live", politeness);
  box.setAttribute("aria-atomic", "false");
  box.setAttribute("aria-relevant", "additions");
  document.body.append(box);
  return box;
}

// ---- keyboard focus on the table ---------------------------------------------------------------
// The table redraws its parts from the state, which would drop the keyboard focus whenever the
// focused control is drawn anew or goes (a card played, the Pass button after the pass). These
// keep it: what had the focus is found again, else the hand itself holds it, and a person playing
// by keyboard finds a playable card focused when their turn comes.

/** What has the focus inside `root` now, by the marks a redraw keeps (card, action, id). */
export function focusMemo(root) {
  const active = document.activeElement;
  if (!active || active === document.body || !root.contains(active)) return { inRoot: false };
  const data = active.dataset || {};
  return { inRoot: true, card: data.card || null, action: data.action || null, id: active.id || null, node: active };
}

/** Only one card of the hand is in the Tab order (the focused one, else a playable one); the
 * arrow keys move among them. */
export function rovingHand(hand) {
  const cards = [...hand.querySelectorAll("button.card")];
  if (!cards.length) return;
  const active = cards.find((c) => c === document.activeElement && !c.disabled);
  const current = active || hand.querySelector("button.card.legal:not([disabled])") || cards.find((c) => !c.disabled);
  for (const c of cards) c.tabIndex = c === current ? 0 : -1;
  if (!hand.dataset.roving) {
    hand.dataset.roving = "true";
    hand.addEventListener("focusin", (e) => {
      if (!e.target.matches || !e.target.matches("button.card")) return;
      for (const c of hand.querySelectorAll("button.card")) c.tabIndex = c === e.target ? 0 : -1;
    });
  }
}

/** After a redraw of `table` (table.js): the focus back where it was, or on the hand. */
export function restoreFocus(table, memo, mode) {
  const hand = table.handBox;
  rovingHand(hand);
  const active = document.activeElement;
  const lost = !active || active === document.body || !active.isConnected;
  const firstLegal = () => hand.querySelector("button.card.legal:not([disabled])");
  if (memo.inRoot && lost) {
    let target = null;
    if (memo.card) target = hand.querySelector(`button.card[data-card="${memo.card}"]:not([disabled])`);
    if (!target && memo.action) target = table.root.querySelector(`[data-action="${memo.action}"]:not([disabled])`);
    if (!target && memo.id) target = document.getElementById(memo.id);
    if (!target && mode === "play") target = firstLegal();
    if (!target && table.overlay) target = table.overlayBox.querySelector(".dialog"); // drawn anew
    if (!target) target = hand;
    if (target === hand) hand.tabIndex = -1;
    target.focus({ preventScroll: true });
  }
  // someone playing by keyboard finds a card focused again when their turn comes back
  const now = document.activeElement;
  if (table.keyboard && mode === "play" && (now === hand || now === document.body || !now)) {
    const first = firstLegal();
    if (first) first.focus({ preventScroll: true });
  }
}

/** A table overlay (the score sheet, the last trick, game over) drawn just now: named by its
 * heading, a modal dialog (dialog.js: Tab stays inside, the table behind is inert, Escape closes
 * it), given the focus when it opens; the focus goes back to its opener, else the hand, on close. */
export function overlayDrawn(table, dialog) {
  const heading = dialog.querySelector("h2");
  if (heading) {
    heading.id = `overlay-title-${table.overlay}`;
    dialog.setAttribute("aria-labelledby", heading.id);
  }
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-modal", "true");
  dialog.tabIndex = -1;
  const close = dialog.querySelector("button.close");
  if (close && !close.dataset.action) close.dataset.action = "close-overlay";
  if (table.overlayShown !== table.overlay) {
    table.overlayShown = table.overlay;
    const first = dialog.querySelector("[data-action=close-sheet], #rematch, .btn.primary") || dialog;
    if (isModalOpen(table.overlayBox)) {
      first.focus({ preventScroll: true }); // one overlay replaced another
    } else {
      openModal(table.overlayBox, { onClose: () => table.closeOverlay(), focus: first, fallback: () => handTarget(table) });
    }
  }
}

/** The table's overlay closed: forget it, so the next one takes the focus again. */
export function overlayClosed(table) {
  if (table.overlayShown === null || table.overlayShown === undefined) return;
  table.overlayShown = null;
  closeModal(table.overlayBox);
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  handTarget(table).focus({ preventScroll: true });
}

function handTarget(table) {
  const hand = table.handBox;
  const target = hand.querySelector("button.card.legal:not([disabled])") || hand;
  if (target === hand) hand.tabIndex = -1;
  return target;
}
