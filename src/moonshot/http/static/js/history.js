// The history page: /history lists the stored games (GET /api/games, a page at a time), each
// finished one with Replay and Review links, and /history#<id> replays a finished one
// (GET /api/games/<id>) on the table component in spectator mode, stepping by card, by trick or by
// hand; /history?review#<id> opens the replay with its review asked for (review.js).

import { Announcer } from "./a11y.js";
import { ApiError, getJson } from "./api.js";
import { el, errorText, topbar } from "./common.js";
import { formatDate, formatNumber, t } from "./i18n.js";
import { foldEvents } from "./state.js";
import { Table } from "./table.js";
import { variantLabel } from "./labels.js";
import { ReviewPanel } from "./review.js";

const PAGE = 20;

function when(text) {
  if (!text) return "";
  return formatDate(text);
}

function playerName(p) {
  if (!p) return "?";
  return typeof p === "string" ? p : p.name || "?";
}

// ---- the list ------------------------------------------------------------------------------

async function showList(box, offset) {
  box.hidden = false;
  box.innerHTML = "";
  const panel = el("section", "panel");
  panel.append(el("h1", null, t("history.title")));
  box.append(panel);
  let games;
  try {
    games = await getJson(`/api/games?limit=${PAGE + 1}&offset=${offset}`);
  } catch (err) {
    const e = el("div", "error", errorText(err));
    e.setAttribute("role", "alert");
    panel.append(e);
    return;
  }
  const more = games.length > PAGE;
  games = games.slice(0, PAGE);
  if (!games.length) {
    panel.append(el("p", "empty-note", offset ? t("history.no_more") : t("history.none")));
  } else {
    const table = el("table", "games");
    table.id = "games-table";
    const head = el("tr");
    for (const [key, cls] of [["history.when", ""], ["history.variant", ""], ["history.players", ""], ["history.status", "wide"], ["", ""]]) {
      const th = el("th", cls, key ? t(key) : "");
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    for (const g of games) body.append(gameRow(g));
    table.append(thead, body);
    panel.append(table);
  }
  const pager = el("div", "pager");
  const prev = el("a", "btn small", t("history.newer"));
  prev.href = `/history?offset=${Math.max(0, offset - PAGE)}`;
  prev.hidden = offset === 0;
  const next = el("a", "btn small", t("history.older"));
  next.href = `/history?offset=${offset + PAGE}`;
  next.hidden = !more;
  pager.append(prev, el("span", "muted", games.length ? t("history.range", { from: offset + 1, to: offset + games.length }) : ""), next);
  panel.append(pager);
}

function gameRow(g) {
  const tr = el("tr");
  tr.dataset.id = g.id;
  tr.append(el("td", null, when(g.finished || g.created)));
  tr.append(el("td", null, variantLabel(g.variant)));
  const who = el("td");
  const winners = new Set(g.winners || []);
  (g.players || []).forEach((p, s) => {
    const span = el("span", winners.has(s) ? "won" : null, `${playerName(p)}${g.totals ? ` ${formatNumber(g.totals[s])}` : ""}`);
    if (s) who.append(document.createTextNode(" \u00b7 "));
    who.append(span);
  });
  tr.append(who);
  const st = el("td", "wide");
  st.append(el("span", `status-pill ${g.status}`, t(`status.${g.status}`, {}, g.status)));
  tr.append(st);
  const act = el("td");
  if (g.status === "finished") {
    const a = el("a", "btn small primary", t("common.replay"));
    a.href = `/history#${encodeURIComponent(g.id)}`;
    a.dataset.action = "replay";
    act.append(a);
    if (g.reviewable !== false) {
      // the review straight from the list: the replay opens with the review of the viewer's seat asked for
      const r = el("a", "btn small", t("history.review"));
      r.href = `/history?review#${encodeURIComponent(g.id)}`;
      r.dataset.action = "review";
      r.title = t("review.button.title");
      r.setAttribute("aria-label", t("history.review.label", { players: (g.players || []).map(playerName).join(", ") }));
      act.classList.add("row-actions");
      act.append(r);
    }
  } else if (g.status === "running") {
    const a = el("a", "btn small", t("lobby.watch"));
    a.href = `/game#${encodeURIComponent(g.id)}`;
    act.append(a);
  }
  tr.append(act);
  return tr;
}

// ---- the replay viewer -----------------------------------------------------------------------

const STOP_LEVELS = {
  deal: ["hand", "trick", "card"],
  end_trick: ["trick", "card"],
  play: ["card"],
  hand_complete: ["hand", "trick", "card"],
  game_complete: ["hand", "trick", "card"],
};

/** The points a replay can stop at: [{at: events folded, levels}], the first being the deal. */
export function replayStops(events) {
  const stops = [];
  let firstTrick = false;
  events.forEach((ev, i) => {
    let levels = STOP_LEVELS[ev.type];
    if (ev.type === "deal") firstTrick = true;
    if (ev.type === "start_trick" && firstTrick) {
      firstTrick = false;
      levels = ["trick", "card"]; // passes and charges done, the first lead to come
    }
    // the last card of a trick and the trick's end are one step: the finished trick
    if (ev.type === "end_trick" && stops.length && stops[stops.length - 1].type === "play") stops.pop();
    if (levels) stops.push({ at: i + 1, levels, type: ev.type });
  });
  return stops;
}

class Replay {
  constructor(box, game) {
    this.game = game;
    this.events = game.events || [];
    this.stops = replayStops(this.events);
    this.index = 0;
    this.timer = null;
    this.box = box;
    box.hidden = false;
    box.innerHTML = "";
    const bar = el("div", "replay-bar");
    bar.id = "replay-bar";
    const back = el("a", "btn small", t("history.all_games_back"));
    back.href = "/history";
    const mk = (text, action, fn, title) => {
      const b = el("button", "btn small", text);
      b.type = "button";
      b.dataset.action = action;
      b.title = title;
      b.addEventListener("click", () => {
        this.stopAuto();
        fn();
      });
      return b;
    };
    this.where = el("span", "where");
    this.where.id = "replay-where";
    this.slider = el("input");
    this.slider.type = "range";
    this.slider.min = "0";
    this.slider.max = String(Math.max(0, this.stops.length - 1));
    this.slider.setAttribute("aria-label", t("replay.position"));
    this.slider.addEventListener("input", () => {
      this.stopAuto();
      this.go(Number(this.slider.value));
    });
    this.autoButton = el("button", "btn small primary", t("replay.play"));
    this.autoButton.type = "button";
    this.autoButton.dataset.action = "auto";
    this.autoButton.addEventListener("click", () => (this.timer ? this.stopAuto() : this.startAuto()));
    bar.append(
      back,
      mk(t("replay.prev_hand"), "prev-hand", () => this.step(-1, "hand"), t("replay.prev_hand.title")),
      mk(t("replay.prev_trick"), "prev-trick", () => this.step(-1, "trick"), t("replay.prev_trick.title")),
      mk(t("replay.prev_card"), "prev-card", () => this.step(-1, "card"), t("replay.prev_card.title")),
      this.where,
      mk(t("replay.next_card"), "next-card", () => this.step(1, "card"), t("replay.next_card.title")),
      mk(t("replay.next_trick"), "next-trick", () => this.step(1, "trick"), t("replay.next_trick.title")),
      mk(t("replay.next_hand"), "next-hand", () => this.step(1, "hand"), t("replay.next_hand.title")),
      this.autoButton,
      this.slider,
    );
    const tableRoot = el("div");
    tableRoot.id = "table";
    box.append(bar, tableRoot);
    this.bar = bar;
    this.table = new Table(tableRoot, { me: null, actions: null, links: [{ href: "/history", text: t("history.all_games") }] });
    const first = this.events.find((e) => e.type === "sit");
    const variant = first ? first.variant || "turbo" : "turbo";
    this.table.setOptions({ highestWins: variant === "trend", claims: variant === "turbo" });
    document.addEventListener("keydown", (e) => this.onKey(e));
    // screen-reader mode (a setting): each step said in the live region, as at a live table
    this.announcer = new Announcer(() => null);
    getJson("/api/variants")
      .then((list) => this.announcer.setScoring((list.find((v) => v.name === variant) || {}).scoring))
      .catch(() => {});
    window.moonshotReplay = this;
    this.go(0);
  }

  onKey(e) {
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target !== this.slider) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
    if (!(e.key in moves)) return;
    const level = e.key.startsWith("Page") ? "hand" : e.shiftKey ? "card" : "trick";
    this.stopAuto();
    this.step(moves[e.key], level);
    e.preventDefault();
  }

  step(direction, level) {
    let i = this.index + direction;
    while (i >= 0 && i < this.stops.length && !this.stops[i].levels.includes(level)) i += direction;
    if (i < 0) i = 0;
    if (i >= this.stops.length) i = this.stops.length - 1;
    this.go(i);
  }

  /** Show the game after its first `at` events (the moment of a decision, maybe between stops). */
  showMoment(at) {
    this.stopAuto();
    let i = 0;
    while (i + 1 < this.stops.length && this.stops[i + 1].at <= at) i += 1;
    this.go(i, at);
  }

  go(i, at = null) {
    if (!this.stops.length) return;
    const shownAt = this.shownAt;
    this.index = i;
    const stop = this.stops[i];
    this.shownAt = at ?? stop.at;
    const state = foldEvents(this.events, this.shownAt);
    state.replayDone = true;
    this.state = state;
    this.table.update(state);
    this.slider.value = String(i);
    const name = (seat) => (state.players[seat] ? state.players[seat].name : seat);
    let trick = t("replay.the_deal");
    if (state.trickWinner) trick = t("replay.trick_to", { trick: state.trickNo, name: name(state.trickWinner) });
    else if (state.trickNo && !state.trick.length) trick = t("replay.trick_leads", { trick: state.trickNo, name: name(state.leader) });
    else if (state.trickNo) trick = t("replay.trick", { trick: state.trickNo });
    if (state.complete) this.where.textContent = t("replay.game_over");
    else if (state.phase === "hand_over") this.where.textContent = t("replay.hand_over", { hand: state.handNo });
    else this.where.textContent = `${t("replay.hand", { hand: state.handNo })} \u00b7 ${trick}`;
    document.body.dataset.replayIndex = String(i);
    if (shownAt !== undefined) this.announcer.replayStep(this.events, shownAt, this.shownAt, this.where.textContent);
  }

  startAuto() {
    this.autoButton.textContent = t("replay.pause");
    this.timer = setInterval(() => {
      if (this.index >= this.stops.length - 1) this.stopAuto();
      else this.step(1, "card");
    }, 600);
  }

  stopAuto() {
    clearInterval(this.timer);
    this.timer = null;
    this.autoButton.textContent = t("replay.play");
  }
}

async function showReplay(box, id) {
  let game;
  try {
    game = await getJson(`/api/games/${encodeURIComponent(id)}`);
  } catch (err) {
    box.hidden = false;
    box.innerHTML = "";
    const panel = el("div", "panel page-error");
    const e = el("div", "error", err instanceof ApiError ? errorText(err) : String(err));
    e.setAttribute("role", "alert");
    const back = el("a", null, t("history.all_games_back"));
    back.href = "/history";
    panel.append(e, el("p"), back);
    box.append(panel);
    return;
  }
  document.title = t("replay.page_title", { variant: variantLabel(game.variant) });
  const replay = new Replay(box, game);
  if (game.status === "finished" && game.reviewable !== false) {
    const panel = new ReviewPanel(replay, game);
    // the list's Review link (/history?review#<id>): ask for the review of the default seat at once
    if (new URLSearchParams(location.search).has("review")) panel.start(Number(panel.seatSelect.value));
  }
  return replay;
}

async function main() {
  topbar("history");
  const id = decodeURIComponent(location.hash.slice(1));
  window.addEventListener("hashchange", () => location.reload());
  const list = document.getElementById("games-page");
  const replay = document.getElementById("replay");
  if (id) {
    await showReplay(replay, id);
  } else {
    const offset = Number(new URLSearchParams(location.search).get("offset")) || 0;
    await showList(list, Math.max(0, offset));
  }
  document.body.dataset.ready = "true";
}

main();
