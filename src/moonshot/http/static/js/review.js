// The game review on the history page: a Review button in the replay bar asks
// GET /api/games/<id>/review?seat=N, shows the queue and the progress while the server answers
// 202, then one seat's decisions as a timeline coloured by grade (with a symbol and words too),
// each decision's options with their expected points, and the summary. A decision moves the
// replay to the moment it was made; "Learn from your mistakes" (learn.js) replays the flagged ones
// as exercises in the same panel. The panel is a modal dialog like the table's overlays (dialog.js).
// The review's numbers are the server's (docs/review.md); this page only shows them.

import { ApiError, getName, readError } from "./api.js";
import { cardName, cardText, isRed } from "./cards.js";
import { el, ensureName, errorText } from "./common.js";
import { closeModal, openModal } from "./dialog.js";
import { formatNumber, formatOrdinal, has, t } from "./i18n.js";
import { SEATS } from "./state.js";

/** The five grades, best first: a symbol and a word for each, so colour is never the only cue
 * (the word is the catalogue's grade.<name>). */
export const GRADES = {
  best: { symbol: "\u2605", text: t("grade.best") },
  good: { symbol: "\u2713", text: t("grade.good") },
  inaccuracy: { symbol: "?!", text: t("grade.inaccuracy") },
  mistake: { symbol: "?", text: t("grade.mistake") },
  blunder: { symbol: "??", text: t("grade.blunder") },
};
export const FLAGGED = new Set(["inaccuracy", "mistake", "blunder"]);

/** "QS AH" (a label of the review) -> the cards, ["QS", "AH"]. */
export function labelCards(label) {
  return String(label || "")
    .split(/[\s,]+/)
    .filter((c) => /^[2-9TJQKA][CDHS]$/.test(c));
}

/** Cards as text with their suit symbols, red suits in red: a <span> for "QS AH". */
export function cardsSpan(label) {
  const cards = labelCards(label);
  const span = el("span", "cards-text");
  if (!cards.length) {
    span.textContent = label === "-" || label === "" ? t("review.nothing") : String(label ?? "");
    return span;
  }
  cards.forEach((c, i) => {
    if (i) span.append(document.createTextNode(" "));
    const one = el("span", isRed(c) ? "red" : "black", cardText(c));
    one.title = cardName(c);
    one.dataset.card = c; // the four-colour deck colours it by suit
    span.append(one);
  });
  span.setAttribute("aria-label", cards.map(cardName).join(", "));
  return span;
}

/** The same cards, however a label orders them. */
export function sameCards(a, b) {
  const x = labelCards(a).sort().join(" ");
  if (x !== labelCards(b).sort().join(" ")) return false;
  return x !== "" || String(a ?? "").trim() === String(b ?? "").trim(); // "-": no cards, both
}

/** "to the left", "across": where a pass goes. */
export function passTo(direction) {
  return t(`review.pass_to.${direction}`, {}, direction || "?");
}

const fixed = (x, digits) => formatNumber(x, { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const points = (x) => (Number.isFinite(x) ? fixed(x, 1) : "?");
export const points2 = (x) => (Number.isFinite(x) ? fixed(x, 2) : "?");
const percent = (x) => (Number.isFinite(x) ? formatNumber(x, { style: "percent", maximumFractionDigits: 0 }) : "?");

/** "Hand 2 · trick 5" or "Hand 1 · pass to the left": where a decision was made. */
export function decisionPlace(d) {
  const hand = t("table.hand", { hand: d.deal + 1 });
  if (d.kind === "pass") return `${hand} \u00b7 ${t("review.place.pass")}${d.pass_direction ? ` (${passTo(d.pass_direction)})` : ""}`;
  if (d.kind === "charge") return `${hand} \u00b7 ${t("review.place.charge")}`;
  if (d.kind === "expose") return `${hand} \u00b7 ${t("review.place.expose")}`;
  return d.trick ? `${hand} \u00b7 ${t("replay.trick", { trick: d.trick })}` : hand;
}

/** What the seat did, in words: "played Q♠", "passed Q♠ A♥ K♥". */
export function verb(kind) {
  return t(`review.verb.${kind}`, {}, t("review.verb.other"));
}

/** A grade's badge: the symbol and the word, coloured. */
export function gradeBadge(grade, extra = "") {
  const g = GRADES[grade] || { symbol: "", text: grade || "?" };
  const b = el("span", `grade-badge grade-${grade}`);
  b.append(el("span", "grade-symbol", g.symbol), document.createTextNode(` ${g.text}${extra}`));
  return b;
}

// an action of the game's list -> the event of the Turbo stream it made (the stream the replay folds)
const EVENT_OF = {
  pass: (a, e) => e.type === "send_pass" && e.from === SEATS[a.s],
  charge: (a, e) => e.type === "charge" && e.seat === SEATS[a.s],
  expose: (a, e) => e.type === "expose" && e.seat === SEATS[a.s],
  play: (a, e) => e.type === "play" && e.seat === SEATS[a.s] && e.card === a.c,
  claim: (a, e) => e.type === "claim" && e.seat === SEATS[a.s],
  accept: (a, e) => e.type === "accept_claim" && e.acceptor === SEATS[a.s],
  reject: (a, e) => e.type === "reject_claim" && e.acceptor === SEATS[a.s],
};

/**
 * For each action of the game's list, how many events of its stream come before the event that
 * action made: folding that many events shows the moment the decision was taken. The events come
 * in the actions' order, so one pass over both lines them up (null where no event matches).
 */
export function actionMoments(events, actions) {
  const out = [];
  let j = 0;
  for (const a of actions || []) {
    const match = EVENT_OF[a && a.t];
    if (!match) {
      out.push(null);
      continue;
    }
    let k = j;
    while (k < events.length && !match(a, events[k])) k += 1;
    if (k < events.length) {
      out.push(k);
      j = k + 1;
    } else {
      out.push(null);
    }
  }
  return out;
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new DOMException("stopped", "AbortError"));
    });
  });
}

function retryAfter(resp) {
  const s = Number(resp.headers.get("Retry-After"));
  return Number.isFinite(s) && s > 0 ? Math.min(s, 30) : 1;
}

/**
 * Ask for a review until it is done: resolves with the review JSON, calls `onWait(body)` with each
 * 202 answer ({status, progress: {done, total}, position}), waits the Retry-After between polls,
 * and rejects with an ApiError (the server's status and reason), a TypeError (no answer) or an
 * AbortError (stopped).
 */
export async function fetchReview(gameId, seat, { signal, onWait = () => {} } = {}) {
  const url = `/api/games/${encodeURIComponent(gameId)}/review?seat=${encodeURIComponent(seat)}`;
  for (;;) {
    const resp = await fetch(url, { credentials: "same-origin", signal });
    if (resp.status === 202) {
      let body = {};
      try {
        body = await resp.json();
      } catch {
        /* no body: still waiting */
      }
      onWait(body);
      await sleep(retryAfter(resp) * 1000, signal);
      continue;
    }
    if (!resp.ok) {
      const err = await readError(resp);
      err.retryAfter = resp.headers.get("Retry-After");
      throw err;
    }
    const body = await resp.json();
    if (!body || !body.review) throw new ApiError(500, "the server's answer holds no review", "no_review");
    return body.review;
  }
}

/** A person's words for why there is no review (or no hint): every status the API answers. */
export function reviewError(err, what = "review") {
  if (err instanceof ApiError) {
    const reason = errorText(err);
    const why = reason ? ` (${reason})` : "";
    if (err.status === 409) return t(`${what}.error.not_over`);
    if (err.status === 403 && err.code && has(`error.${err.code}`)) return reason; // the server's words for why
    if (err.status === 403) return t(`${what}.error.forbidden`, { why });
    if (err.status === 404) return t("review.error.unknown_game", { why });
    if (err.status === 429) {
      const s = Number(err.retryAfter);
      return s > 0 ? t(`${what}.error.too_many_in`, { seconds: s }) : t(`${what}.error.too_many`);
    }
    if (err.status === 503) return t(`${what}.error.off`);
    return t(`${what}.error.failed`, { reason });
  }
  return t("review.error.no_answer", { reason: err && err.message ? err.message : t("review.error.network") });
}

/** The seat a person most likely wants reviewed: their own if they played, else the first. */
export function defaultSeat(players, me = getName()) {
  const mine = (me || "").toLocaleLowerCase();
  const i = (players || []).findIndex((p) => mine && String((p && p.name) || p || "").toLocaleLowerCase() === mine);
  return i >= 0 ? i : 0;
}

/** The review of a finished game on the history page's replay. */
export class ReviewPanel {
  constructor(replay, game) {
    this.replay = replay;
    this.game = game;
    this.moments = actionMoments(game.events || [], game.actions || []);
    this.abort = null;
    this.review = null;
    this.selected = -1;
    this.players = (game.players || []).map((p, s) => (p && p.name) || p || SEATS[s]);
    window.addEventListener("pagehide", () => this.stop());

    // the bar: the seat and the button
    const box = el("span", "review-control");
    const label = el("label", null, t("review.label"));
    label.htmlFor = "review-seat";
    this.seatSelect = el("select");
    this.seatSelect.id = "review-seat";
    this.players.forEach((name, s) => {
      const o = el("option", null, `${name} (${t(`seat.${SEATS[s]}`)})`);
      o.value = String(s);
      this.seatSelect.append(o);
    });
    this.seatSelect.value = String(defaultSeat(game.players));
    this.button = el("button", "btn small primary", t("review.button"));
    this.button.type = "button";
    this.button.dataset.action = "review";
    this.button.title = t("review.button.title");
    this.button.addEventListener("click", () => this.start(Number(this.seatSelect.value)));
    box.append(label, this.seatSelect, this.button);
    replay.bar.append(box);

    // the panel, between the bar and the table (beside the table on a wide screen): a modal
    // dialog named by its heading (the review's, or the exercise's while learning)
    this.panel = el("section", "review-panel panel");
    this.panel.id = "review";
    this.panel.setAttribute("role", "dialog");
    this.panel.setAttribute("aria-modal", "true");
    this.panel.setAttribute("aria-labelledby", "review-title");
    this.panel.hidden = true;
    this.live = el("div", "sr-only");
    this.live.setAttribute("aria-live", "polite");
    this.live.id = "review-live";
    replay.bar.after(this.panel);
    this.panel.before(this.live);
    window.moonshotReview = this;
  }

  stop() {
    if (this.abort) this.abort.abort();
    this.abort = null;
  }

  /** Show the panel as a modal (dialog.js, as the table's overlays and Settings): Tab stays
   * inside, the page behind is inert (the replay still shows each decision's moment), Escape
   * closes it, and the focus goes back to the Review button. `focus`: what gets the focus now. */
  open(focus) {
    this.panel.hidden = false;
    this.replay.box.classList.add("reviewing");
    openModal(this.panel, { onClose: () => this.escape(), focus, opener: this.button, fallback: () => this.button });
  }

  close() {
    this.stop();
    this.learn = null;
    this.panel.hidden = true;
    this.replay.box.classList.remove("reviewing", "learning");
    closeModal(this.panel); // the page comes back; the focus goes back to the Review button
  }

  /** Escape: from an exercise back to the review (as its Back button), else the panel closes. */
  escape() {
    if (this.learn) this.backToReview();
    else this.close();
  }

  header(title) {
    const head = el("div", "review-head");
    const h = el("h2", null, title);
    h.id = "review-title";
    h.tabIndex = -1;
    const close = el("button", "btn small", t("common.close_button"));
    close.type = "button";
    close.dataset.action = "close-review";
    close.setAttribute("aria-label", t("review.close"));
    close.addEventListener("click", () => this.close());
    head.append(h, close);
    return head;
  }

  async start(seat) {
    this.stop();
    const abort = new AbortController();
    this.abort = abort;
    this.seat = seat;
    this.review = null;
    this.learn = null;
    this.replay.box.classList.remove("learning");
    const name = this.players[seat] || SEATS[seat];
    this.panel.innerHTML = "";
    this.panel.dataset.state = "waiting";
    this.panel.append(this.header(t("review.of", { name })));
    this.open(this.panel.querySelector("h2"));
    if (!this.named) {
      // reviews are asked for under a name (the server counts each name's): the usual name prompt
      const who = el("div", "review-name");
      this.panel.append(who);
      await ensureName(who, t("review.name_intro"));
      who.remove();
      this.named = true;
      if (this.abort !== abort) return; // another review was asked for meanwhile
    }
    const status = el("p", "review-status", t("review.asking"));
    status.id = "review-status";
    const bar = el("div", "review-progress");
    bar.id = "review-progress";
    bar.setAttribute("role", "progressbar");
    bar.setAttribute("aria-label", t("review.progress"));
    bar.setAttribute("aria-valuemin", "0");
    const fill = el("div", "fill");
    bar.append(fill);
    bar.hidden = true;
    this.panel.append(status, bar);
    this.panel.querySelector("h2").focus();
    try {
      const review = await fetchReview(this.game.id, seat, {
        signal: abort.signal,
        onWait: (body) => {
          const done = Number(body.progress?.done) || 0;
          const total = Number(body.progress?.total) || 0;
          bar.hidden = false;
          bar.setAttribute("aria-valuemax", String(Math.max(total, 1)));
          bar.setAttribute("aria-valuenow", String(done));
          bar.setAttribute("aria-valuetext", total ? t("review.progress.value", { done, total }) : t("review.progress.waiting"));
          fill.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
          const position = Number(body.position) || 0;
          if (body.status === "queued") {
            status.textContent = position > 0 ? t("review.queued_at", { position: formatOrdinal(position) }) : t("review.queued");
          } else {
            status.textContent = total ? t("review.reviewing_n", { done, total }) : t("review.reviewing");
          }
        },
      });
      if (abort.signal.aborted) return;
      this.abort = null;
      this.show(review);
    } catch (err) {
      if (err && err.name === "AbortError") return;
      this.abort = null;
      this.panel.dataset.state = "error";
      bar.hidden = true;
      status.remove();
      const e = el("div", "error", reviewError(err));
      e.id = "review-error";
      e.setAttribute("role", "alert");
      const again = el("button", "btn small", t("common.try_again"));
      again.type = "button";
      again.dataset.action = "review-again";
      again.addEventListener("click", () => this.start(seat));
      this.panel.append(e, again);
    }
  }

  // ---- the review ----------------------------------------------------------------------------

  show(review) {
    this.review = review;
    this.learn = null;
    this.replay.box.classList.remove("learning");
    const decisions = review.decisions || [];
    const name = this.players[review.seat] ?? this.players[this.seat] ?? SEATS[this.seat];
    this.panel.innerHTML = "";
    this.panel.dataset.state = "done";
    this.panel.append(this.header(t("review.of", { name })));
    this.live.textContent = t("review.ready", { count: decisions.length, name });
    this.panel.append(this.summary(review));
    if (!decisions.length) {
      this.panel.append(el("p", "empty-note", t("review.no_decisions")));
      return;
    }
    this.panel.append(el("h3", null, t("review.decisions")), this.legend(), this.timeline(review));
    this.details = el("div", "review-details");
    this.details.id = "review-details";
    this.details.setAttribute("aria-live", "polite");
    this.details.append(el("p", "muted", t("review.pick")));
    this.panel.append(this.details, this.biggestList(review), this.dealTable(review));
    this.panel.querySelector("h2").focus();
  }

  summary(review) {
    const s = review.summary || {};
    const box = el("div", "review-summary");
    box.id = "review-summary";
    const figures = el("dl", "review-figures");
    const fig = (term, value) => {
      const d = el("div");
      d.append(el("dt", null, term), el("dd", null, value));
      figures.append(d);
    };
    fig(t("review.points_given_up"), points(s.points_given_up));
    fig(t("review.accuracy"), percent(s.accuracy));
    fig(t("review.decisions"), formatNumber(s.decisions ?? (review.decisions || []).length));
    box.append(figures);
    const counts = el("ul", "grade-counts");
    counts.setAttribute("aria-label", t("review.by_grade"));
    for (const grade of Object.keys(GRADES)) {
      const li = el("li");
      li.append(gradeBadge(grade, `: ${formatNumber((s.by_grade || {})[grade] ?? 0)}`));
      counts.append(li);
    }
    box.append(counts);
    const decisions = review.decisions || [];
    const flagged = decisions.filter((d) => FLAGGED.has(d.grade));
    const learn = el("button", "btn primary", t("review.learn", { count: flagged.length }));
    learn.type = "button";
    learn.dataset.action = "learn";
    learn.disabled = !flagged.length;
    learn.addEventListener("click", () => this.startLearning());
    box.append(learn);
    if (!flagged.length) box.append(el("p", "muted", t("review.nothing_to_learn")));
    return box;
  }

  /** The largest costs, as links to their decisions. */
  biggestList(review) {
    const box = el("div", "review-biggest");
    box.id = "review-biggest";
    const decisions = review.decisions || [];
    const biggest = (review.summary?.biggest || []).map((i) => decisions[i]).filter((d) => d && FLAGGED.has(d.grade));
    if (biggest.length) {
      box.append(el("h3", null, t("review.biggest")));
      const list = el("ol", "biggest");
      for (const d of biggest) {
        const li = el("li");
        const a = el("a", null);
        a.href = `#${encodeURIComponent(this.game.id)}`;
        a.dataset.decision = String(d.index);
        a.append(document.createTextNode(`${decisionPlace(d)}: ${verb(d.kind)} `), cardsSpan(d.chosen), document.createTextNode(`, ${t("review.given_up", { points: points(d.cost) })} (${(GRADES[d.grade] || {}).text || d.grade})`));
        a.addEventListener("click", (e) => {
          e.preventDefault();
          this.select(decisions.indexOf(d), { focus: true });
        });
        li.append(a);
        list.append(li);
      }
      box.append(list);
    }
    return box;
  }

  legend() {
    const p = el("p", "grade-legend muted");
    p.append(document.createTextNode(`${t("review.grades")} `));
    for (const grade of Object.keys(GRADES)) p.append(gradeBadge(grade), document.createTextNode(" "));
    return p;
  }

  timeline(review) {
    const decisions = review.decisions || [];
    const outer = el("ol", "review-timeline");
    outer.id = "review-timeline";
    outer.setAttribute("aria-label", t("review.timeline"));
    this.decisionButtons = [];
    let deal = null;
    let inner = null;
    decisions.forEach((d, i) => {
      if (d.deal !== deal || !inner) {
        deal = d.deal;
        const li = el("li", "timeline-deal");
        li.append(el("span", "timeline-hand", t("table.hand", { hand: d.deal + 1 })));
        inner = el("ol", "timeline-decisions");
        li.append(inner);
        outer.append(li);
      }
      const g = GRADES[d.grade] || { symbol: "", text: d.grade };
      const li = el("li");
      const b = el("button", `decision grade-${d.grade}`);
      b.type = "button";
      b.dataset.index = String(i);
      b.dataset.grade = d.grade;
      b.tabIndex = i === 0 ? 0 : -1;
      const what = d.kind === "play" ? cardsSpan(d.chosen) : el("span", null, t(`review.kind.${d.kind}`, {}, d.kind));
      b.append(what, el("span", "grade-symbol", g.symbol));
      const cost = FLAGGED.has(d.grade) || d.grade === "good" ? `, ${t("review.given_up", { points: points(d.cost) })}` : "";
      b.setAttribute("aria-label", `${decisionPlace(d)}: ${verb(d.kind)} ${labelCards(d.chosen).map(cardName).join(", ") || d.chosen}, ${g.text}${cost}`);
      b.title = `${decisionPlace(d)}: ${g.text}${cost}`;
      b.addEventListener("click", () => this.select(i));
      li.append(b);
      inner.append(li);
      this.decisionButtons.push(b);
    });
    outer.addEventListener("keydown", (e) => this.onTimelineKey(e));
    return outer;
  }

  onTimelineKey(e) {
    const buttons = this.decisionButtons;
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    let next = null;
    if (e.key in moves) next = Math.max(0, Math.min(buttons.length - 1, i + moves[e.key]));
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = buttons.length - 1;
    else return;
    e.preventDefault();
    e.stopPropagation(); // the replay's own arrow keys step the game: not while in the timeline
    this.focusDecision(next);
    this.select(next);
  }

  focusDecision(i) {
    this.decisionButtons.forEach((b, j) => {
      b.tabIndex = j === i ? 0 : -1;
    });
    this.decisionButtons[i]?.focus();
  }

  /** Show decision `i`: its options, and the replay at the moment it was made. */
  select(i, { focus = false } = {}) {
    const decisions = this.review?.decisions || [];
    const d = decisions[i];
    if (!d) return;
    if (this.learn) this.backToReview();
    this.selected = i;
    this.decisionButtons.forEach((b, j) => {
      if (j === i) b.setAttribute("aria-current", "step");
      else b.removeAttribute("aria-current");
      b.tabIndex = j === i ? 0 : -1;
    });
    if (focus) this.decisionButtons[i].focus();
    const at = this.moments[d.action_index];
    if (at !== null && at !== undefined) this.replay.showMoment(at);
    this.drawDetails(d);
    this.reveal(this.details);
    document.body.dataset.reviewDecision = String(i);
  }

  /** Bring `node` into view: within the panel where it scrolls by itself (beside the table on a
   * wide screen), else the page (a phone), moving as little as it can. */
  reveal(node) {
    const panel = this.panel;
    if (panel.scrollHeight > panel.clientHeight + 1 && getComputedStyle(panel).overflowY !== "visible") {
      const r = node.getBoundingClientRect();
      const p = panel.getBoundingClientRect();
      if (r.bottom > p.bottom) panel.scrollTop += Math.min(r.top - p.top, r.bottom - p.bottom);
      else if (r.top < p.top) panel.scrollTop -= p.top - r.top;
    } else {
      node.scrollIntoView({ block: "nearest" });
    }
  }

  drawDetails(d) {
    const box = this.details;
    box.innerHTML = "";
    const name = this.players[this.review.seat] ?? SEATS[this.review.seat];
    const title = el("h3", "decision-title");
    title.append(document.createTextNode(`${decisionPlace(d)}: ${t("review.who_did", { name, verb: verb(d.kind) })} `), cardsSpan(d.chosen));
    box.append(title);
    const verdict = el("p", "decision-verdict");
    verdict.append(gradeBadge(d.grade));
    if (d.grade === "best") verdict.append(document.createTextNode(` ${t("review.verdict.best")}`));
    else {
      verdict.append(document.createTextNode(` ${t("review.verdict.cost", { points: points(d.cost) })} `), cardsSpan(d.best), document.createTextNode("."));
    }
    box.append(verdict, positionLine(d, this.players));
    box.append(optionsTable(d));
    if (d.note) box.append(el("p", "muted note", d.note));
    if (d.complete === false) {
      box.append(el("p", "muted note", t(d.kind === "pass" ? "review.partial.passes" : "review.partial.options", { count: (d.options || []).length })));
    }
  }

  dealTable(review) {
    const deals = review.summary?.deals || [];
    const wrap = el("div", "review-deals");
    if (!deals.length) return wrap;
    wrap.append(el("h3", null, t("review.per_hand")));
    const table = el("table", "games review-deals-table");
    const head = el("tr");
    for (const key of ["table.sheet.hand", "review.decisions", "review.points_given_up", "review.accuracy"]) head.append(el("th", key === "table.sheet.hand" ? null : "num", t(key)));
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    for (const row of deals) {
      const tr = el("tr");
      tr.append(el("td", null, t("table.hand", { hand: row.deal + 1 })), el("td", "num", formatNumber(row.decisions)), el("td", "num", points(row.points_given_up)), el("td", "num", percent(row.accuracy)));
      body.append(tr);
    }
    table.append(thead, body);
    wrap.append(table);
    return wrap;
  }

  // ---- learning ------------------------------------------------------------------------------

  async startLearning() {
    const { Learn } = await import("./learn.js"); // loaded when wanted (it uses this module's helpers)
    const flagged = (this.review.decisions || []).filter((d) => FLAGGED.has(d.grade));
    this.panel.innerHTML = "";
    this.panel.dataset.state = "learn";
    // the exercise shows the position as the seat saw it: the replay (every hand) is put away
    this.replay.box.classList.add("learning");
    const name = this.players[this.review.seat] ?? SEATS[this.review.seat];
    this.learn = new Learn(this.panel, flagged, {
      players: this.players,
      seat: this.review.seat,
      title: t("learn.title_of", { name }),
      onDone: () => this.backToReview(),
    });
  }

  /** The exercises end (Back, Done or Escape): the review again, the focus on the Learn button
   * that opened them. */
  backToReview() {
    const review = this.review;
    this.learn = null;
    this.show(review);
    this.panel.querySelector("[data-action=learn]")?.focus();
  }
}

/** "On the table: K♠ (basil), 7♠ (cleo)" / "A lead: nothing on the table" / "Passing to the left". */
export function positionLine(d, players) {
  const p = el("p", "decision-position");
  if (d.kind === "pass") {
    p.textContent = t("review.position.pass", { direction: passTo(d.pass_direction) });
    return p;
  }
  if (d.kind === "charge" || d.kind === "expose") {
    p.textContent = d.kind === "charge" ? t("review.position.charge") : t("review.position.expose");
    return p;
  }
  if (d.kind !== "play") return p;
  const trick = d.trick_cards || [];
  if (!trick.length) {
    p.textContent = t("review.position.lead");
    return p;
  }
  p.append(document.createTextNode(`${t("review.position.on_table")} `));
  trick.forEach((played, i) => {
    if (i) p.append(document.createTextNode(", "));
    p.append(cardsSpan(played.card), document.createTextNode(` (${players[played.seat] ?? SEATS[played.seat] ?? played.seat})`));
  });
  p.append(document.createTextNode("."));
  return p;
}

/** The options of a decision, best first: expected points, the cost against the best, the moons. */
export function optionsTable(d) {
  const table = el("table", "games review-options");
  table.id = "review-options";
  const cap = el("caption", null, t("review.options.caption"));
  table.append(cap);
  const head = el("tr");
  for (const [key, cls] of [["review.options.option", null], ["review.options.expected", "num"], ["review.options.cost", "num"], ["review.options.moon", "num wide"]]) head.append(el("th", cls, t(key)));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  const options = d.options || [];
  const best = options.length ? options[0].expected : null;
  let chosenShown = false;
  for (const o of options) {
    const chosen = sameCards(o.label, d.chosen) || o.label === d.chosen;
    chosenShown ||= chosen;
    const tr = el("tr", chosen ? "chosen" : null);
    const td = el("td");
    td.append(cardsSpan(o.label));
    // a space before each tag: the cell may wrap there (Polish tags are longer)
    if (o === options[0]) td.append(" ", el("span", "tag-best", t("grade.best")));
    if (chosen) td.append(" ", el("span", "tag-chosen", t("review.chosen")));
    const cost = best === null ? null : o.expected - best;
    const moon = `${percent(o.moon_for)} / ${percent(o.moon_against)}`;
    tr.append(td, el("td", "num", points2(o.expected)), el("td", "num", cost ? `+${points2(cost)}` : "\u2013"), el("td", "num wide", moon));
    body.append(tr);
  }
  if (!chosenShown && d.chosen) {
    const tr = el("tr", "chosen");
    const td = el("td");
    td.append(cardsSpan(d.chosen), " ", el("span", "tag-chosen", t("review.chosen")));
    tr.append(td, el("td", "num", t("review.not_evaluated")), el("td", "num", Number.isFinite(d.cost) ? `+${points2(d.cost)}` : "?"), el("td", "num wide", ""));
    body.append(tr);
  }
  table.append(thead, body);
  return table;
}
