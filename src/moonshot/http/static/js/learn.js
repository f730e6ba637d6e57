// "Learn from your mistakes": the review's flagged decisions (inaccuracies, mistakes, blunders)
// as exercises. Each shows the position as the seat saw it (its hand, the cards on the table or
// the pass's direction); the person picks a card (or three to pass) with the mouse or the
// keyboard, then reads the answer by the review's own numbers: the best option, or what the choice
// gives up against it, or plainly that the review did not evaluate that choice.

import { cardFace, cardName, sortCards } from "./cards.js";
import { el } from "./common.js";
import { t } from "./i18n.js";
import { SEATS } from "./state.js";
import { GRADES, cardsSpan, decisionPlace, gradeBadge, labelCards, points, positionLine, sameCards, verb } from "./review.js";

const PASS_COUNT = 3;

/** The cards a play may be, as far as the page can tell: the review's `legal` list when it gives
 * one, else the suit led when the hand holds it (following suit is every variant's first rule). */
export function playable(d) {
  const hand = d.hand || [];
  if (Array.isArray(d.legal) && d.legal.length) return new Set(d.legal);
  if (d.kind === "charge" || d.kind === "expose") {
    // the cards one may charge or expose: those the review's options (every subset) are made of
    return new Set((d.options || []).flatMap((o) => labelCards(o.label)));
  }
  const trick = d.trick_cards || [];
  if (d.kind === "play" && trick.length) {
    const led = trick[0].card[1];
    const follow = hand.filter((c) => c[1] === led);
    if (follow.length) return new Set(follow);
  }
  return new Set(hand);
}

/** What the review says of `choice` (a label): {kind: "best"|"worse"|"unknown", option?, cost?}. */
export function judge(d, choice) {
  const options = d.options || [];
  if (!options.length) return { kind: "unknown" };
  const best = options[0];
  const match = options.find((o) => sameCards(o.label, choice) || o.label === choice);
  if (!match) return { kind: "unknown", best };
  const cost = match.expected - best.expected;
  if (match === best || cost < 0.05) return { kind: "best", option: match, best, cost };
  return { kind: "worse", option: match, best, cost };
}

export class Learn {
  constructor(box, decisions, { players, seat, title, onDone }) {
    this.box = box;
    this.decisions = decisions;
    this.players = players;
    this.seat = seat;
    this.title = title;
    this.onDone = onDone;
    this.i = 0;
    window.moonshotLearn = this;
    this.draw();
  }

  get decision() {
    return this.decisions[this.i];
  }

  draw() {
    const d = this.decision;
    this.selected = new Set();
    this.answered = false;
    const box = this.box;
    box.innerHTML = "";
    const head = el("div", "review-head");
    const h = el("h2", null, this.title);
    h.id = "review-title";
    const back = el("button", "btn small", t("learn.back"));
    back.type = "button";
    back.dataset.action = "learn-back";
    back.addEventListener("click", () => this.onDone());
    head.append(h, back);
    box.append(head);
    const step = el("p", "learn-step");
    step.id = "learn-step";
    step.tabIndex = -1;
    step.append(el("b", null, t("learn.step", { n: this.i + 1, total: this.decisions.length })), document.createTextNode(` \u00b7 ${decisionPlace(d)}`));
    box.append(step, positionLine(d, this.players));
    if (d.kind === "play" && (d.trick_cards || []).length) {
      const trick = el("div", "learn-trick");
      trick.setAttribute("aria-hidden", "true"); // the line above says it in words
      for (const played of d.trick_cards) {
        const cell = el("div", "learn-trick-card");
        cell.append(cardFace(played.card), el("div", "who", this.players[played.seat] ?? SEATS[played.seat] ?? ""));
        trick.append(cell);
      }
      box.append(trick);
    }
    const multi = d.kind !== "play";
    const ask = el("p", "learn-ask");
    ask.id = "learn-ask";
    ask.textContent =
      d.kind === "pass"
        ? t("learn.ask.pass")
        : d.kind === "play"
          ? t("learn.ask.play")
          : t(`learn.ask.${d.kind}`, {}, t("learn.ask.other"));
    box.append(ask);

    this.hand = el("div", "learn-hand");
    this.hand.setAttribute("role", "group");
    this.hand.setAttribute("aria-label", t("table.your_hand"));
    this.hand.setAttribute("aria-describedby", "learn-ask");
    const allowed = playable(d);
    for (const card of sortCards(d.hand || [])) {
      const face = cardFace(card, { interactive: true });
      face.disabled = d.kind !== "pass" && !allowed.has(card);
      if (face.disabled) face.classList.add("dimmed");
      if (multi) face.setAttribute("aria-pressed", "false");
      face.addEventListener("click", () => this.pick(card));
      this.hand.append(face);
    }
    this.hand.addEventListener("keydown", (e) => this.onKey(e));
    box.append(this.hand);

    this.controls = el("div", "learn-controls");
    if (multi) {
      this.check = el("button", "btn primary", this.checkText());
      this.check.type = "button";
      this.check.dataset.action = "learn-check";
      this.check.disabled = d.kind === "pass";
      this.check.addEventListener("click", () => this.answer(sortCards([...this.selected]).join(" ") || "-"));
      this.controls.append(this.check);
    }
    box.append(this.controls);
    this.result = el("div", "learn-answer");
    this.result.id = "learn-answer";
    this.result.setAttribute("aria-live", "polite");
    box.append(this.result);
    document.body.dataset.learnStep = String(this.i);
    const first = this.hand.querySelector("button.card:not([disabled])");
    if (first) first.focus();
  }

  onKey(e) {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight" && e.key !== "Home" && e.key !== "End") return;
    e.preventDefault();
    e.stopPropagation(); // the replay steps with the arrows: not while choosing a card here
    const cards = [...this.hand.querySelectorAll("button.card:not([disabled])")];
    if (!cards.length) return;
    const i = cards.indexOf(document.activeElement);
    let next;
    if (e.key === "Home") next = 0;
    else if (e.key === "End") next = cards.length - 1;
    else if (e.key === "ArrowRight") next = (i + 1) % cards.length;
    else next = i <= 0 ? cards.length - 1 : i - 1;
    cards[next].focus();
  }

  pick(card) {
    if (this.answered) return;
    const d = this.decision;
    if (d.kind === "play") {
      this.answer(card);
      return;
    }
    const limit = d.kind === "pass" ? PASS_COUNT : 4;
    if (this.selected.has(card)) this.selected.delete(card);
    else if (this.selected.size < limit) this.selected.add(card);
    for (const b of this.hand.querySelectorAll("button.card")) {
      const on = this.selected.has(b.dataset.card);
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
    if (this.check) {
      this.check.disabled = d.kind === "pass" ? this.selected.size !== PASS_COUNT : false;
      this.check.textContent = this.checkText();
    }
  }

  checkText() {
    const n = this.selected.size;
    if (n) return t("learn.check_n", { count: n });
    return this.decision.kind === "pass" ? t("learn.check") : t("learn.check_none");
  }

  answer(choice) {
    const d = this.decision;
    this.answered = true;
    const verdict = judge(d, choice);
    const mine = new Set(labelCards(choice));
    const best = new Set(labelCards(d.best || verdict.best?.label));
    for (const b of this.hand.querySelectorAll("button.card")) {
      b.disabled = true;
      b.classList.toggle("picked", mine.has(b.dataset.card));
      b.classList.toggle("best", best.has(b.dataset.card));
      if (best.has(b.dataset.card)) b.setAttribute("aria-label", t("learn.best_card", { card: cardName(b.dataset.card) }));
    }
    if (this.check) this.check.hidden = true;
    const box = this.result;
    box.innerHTML = "";
    box.dataset.verdict = verdict.kind;
    const head = el("p", "learn-verdict");
    head.id = "learn-verdict";
    head.tabIndex = -1;
    if (verdict.kind === "best") {
      head.classList.add("right");
      head.append(el("span", "grade-symbol", GRADES.best.symbol), document.createTextNode(` ${t("learn.right")} `), cardsSpan(choice), document.createTextNode(` ${t("learn.right_best")}`));
    } else if (verdict.kind === "worse") {
      head.classList.add("wrong");
      head.append(
        cardsSpan(choice),
        document.createTextNode(` ${t("review.verdict.cost", { points: points(verdict.cost) })} `),
        cardsSpan(verdict.best.label),
        document.createTextNode(` ${t("learn.expected", { mine: points(verdict.option.expected), best: points(verdict.best.expected) })}`),
      );
    } else {
      head.classList.add("unknown");
      const n = (d.options || []).length;
      head.append(
        document.createTextNode(`${t("learn.unknown")} `),
        cardsSpan(choice),
        document.createTextNode(
          d.complete === false
            ? t(d.kind === "pass" ? "learn.unknown.partial_passes" : "learn.unknown.partial", { count: n })
            : t("learn.unknown.rest"),
        ),
        cardsSpan(d.best || (d.options || [])[0]?.label),
        document.createTextNode("."),
      );
    }
    box.append(head);
    const game = el("p", "learn-game");
    game.append(document.createTextNode(`${t("learn.in_game")} ${verb(d.kind)} `), cardsSpan(d.chosen), document.createTextNode(", "), gradeBadge(d.grade, `, ${t("review.given_up", { points: points(d.cost) })}`), document.createTextNode("."));
    box.append(game);
    const buttons = el("div", "learn-controls");
    const again = el("button", "btn", t("common.try_again"));
    again.type = "button";
    again.dataset.action = "learn-again";
    again.addEventListener("click", () => this.draw());
    const last = this.i + 1 >= this.decisions.length;
    const next = el("button", "btn primary", last ? t("learn.done") : t("learn.next"));
    next.type = "button";
    next.dataset.action = last ? "learn-done" : "learn-next";
    next.addEventListener("click", () => {
      if (last) this.onDone();
      else {
        this.i += 1;
        this.draw();
      }
    });
    buttons.append(again, next);
    box.append(buttons);
    head.focus();
  }
}
