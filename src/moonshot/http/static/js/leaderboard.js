// The leaderboard page: /leaderboard shows every variant's OpenSkill ratings (GET /leaderboard,
// one tab per variant), /leaderboard?variant=V&player=P[&bot=1] one player's rated games, each
// with its replay (/history#<id>).

import { getJson } from "./api.js";
import { el, errorText, replayCell, topbar } from "./common.js";
import { formatDate, formatNumber, formatOrdinal, t } from "./i18n.js";
import { variantLabel } from "./labels.js";

const LIMIT = 100;

function when(text) {
  if (!text) return "";
  return formatDate(text);
}

function num(x, digits = 1) {
  return formatNumber(Number(x), { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function playerHref(variant, player, bot) {
  const q = new URLSearchParams({ variant, player });
  if (bot) q.set("bot", "1");
  return `/leaderboard?${q}`;
}

function who(player, bot) {
  const span = el("span", "player");
  span.append(el("span", "player-name", player));
  if (bot) span.append(el("span", "bot-pill", t("leaderboard.bot")));
  return span;
}

function failed(panel, err) {
  const e = el("div", "error", errorText(err));
  e.setAttribute("role", "alert");
  panel.append(e);
}

function explain() {
  return el("p", "muted rating-note", t("leaderboard.explain"));
}

// ---- every variant's board -----------------------------------------------------------------

async function showBoard(box, wanted) {
  const panel = el("section", "panel");
  panel.append(el("h1", null, t("leaderboard.title")));
  box.append(panel);
  let data;
  try {
    data = await getJson(`/leaderboard?format=json&limit=${LIMIT}`);
  } catch (err) {
    failed(panel, err);
    return;
  }
  const boards = data.leaderboards || {};
  const variants = Object.keys(boards);
  if (!variants.length) {
    panel.append(el("p", "empty-note", t("leaderboard.empty")));
    return;
  }
  const current = variants.includes(wanted) ? wanted : variants[0];
  const tabs = el("div", "variant-tabs");
  tabs.setAttribute("role", "tablist");
  for (const v of variants) {
    const a = el("a", `btn small${v === current ? " primary" : ""}`, variantLabel(v));
    a.href = `/leaderboard?variant=${encodeURIComponent(v)}`;
    a.dataset.variant = v;
    a.setAttribute("role", "tab");
    a.setAttribute("aria-selected", String(v === current));
    tabs.append(a);
  }
  panel.append(tabs);
  const table = el("table", "games ratings");
  table.id = "ratings-table";
  table.dataset.variant = current;
  const head = el("tr");
  for (const [key, cls] of [["#", "num"], ["leaderboard.player", ""], ["leaderboard.rating", "num"], ["\u03bc", "num wide greek"], ["\u03c3", "num wide greek"], ["leaderboard.games", "num"], ["", "wide"]]) {
    head.append(el("th", cls, key.includes(".") ? t(key) : key));
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const r of boards[current]) {
    const tr = el("tr");
    tr.dataset.player = r.player;
    tr.dataset.bot = r.bot ? "1" : "0";
    tr.append(el("td", "num rank", formatNumber(r.rank)));
    const name = el("td");
    const link = el("a", "player-link");
    link.href = playerHref(current, r.player, r.bot);
    link.append(who(r.player, r.bot));
    name.append(link);
    tr.append(name);
    tr.append(el("td", "num rating", num(r.ordinal, 2)));
    tr.append(el("td", "num wide", num(r.mu)));
    tr.append(el("td", "num wide", num(r.sigma, 2)));
    tr.append(el("td", "num", formatNumber(r.games)));
    const act = el("td", "wide");
    const games = el("a", "btn small", t("leaderboard.games"));
    games.href = link.href;
    games.dataset.action = "games";
    act.append(games);
    tr.append(act);
    body.append(tr);
  }
  table.append(thead, body);
  panel.append(table, explain());
}

// ---- one player's games -----------------------------------------------------------------------

async function showPlayer(box, variant, player, bot) {
  const panel = el("section", "panel");
  const back = el("a", "btn small", t("leaderboard.back"));
  back.href = `/leaderboard?variant=${encodeURIComponent(variant)}`;
  const title = el("h1", "player-title");
  title.append(who(player, bot), document.createTextNode(` \u00b7 ${variantLabel(variant)}`));
  panel.append(back, title);
  box.append(panel);
  document.title = t("leaderboard.player_title", { player });
  let data;
  try {
    const q = new URLSearchParams({ variant, player, limit: String(LIMIT) });
    if (bot) q.set("bot", "1");
    data = await getJson(`/leaderboard/games?${q}`);
  } catch (err) {
    failed(panel, err);
    return;
  }
  const games = data.games || [];
  if (!games.length) {
    panel.append(el("p", "empty-note", t("leaderboard.no_games")));
    return;
  }
  const latest = games[0];
  const summary = el("p", "rating-summary");
  summary.id = "player-rating";
  summary.append(
    document.createTextNode(`${t("leaderboard.rating")} `),
    el("b", null, num(latest.mu - 3 * latest.sigma, 2)),
    document.createTextNode(` \u00b7 \u03bc ${num(latest.mu)} \u00b7 \u03c3 ${num(latest.sigma, 2)} \u00b7 ${t("leaderboard.last_games", { count: games.length })}`),
  );
  panel.append(summary);
  const table = el("table", "games");
  table.id = "player-games";
  const head = el("tr");
  for (const [key, cls] of [["history.when", ""], ["leaderboard.place", ""], ["history.players", ""], ["leaderboard.change", "num"], ["", ""]]) {
    head.append(el("th", cls, key ? t(key) : ""));
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const g of games) {
    const tr = el("tr");
    tr.dataset.id = g.game_id;
    tr.append(el("td", null, when(g.finished)));
    tr.append(el("td", g.rank === 1 ? "won" : null, formatOrdinal(g.rank)));
    const seats = el("td");
    const mine = new Set(g.seats || []);
    (g.players || []).forEach((p, s) => {
      if (s) seats.append(document.createTextNode(" \u00b7 "));
      const a = el("a", `seat-link${mine.has(s) ? " me-seat" : ""}`);
      a.href = playerHref(variant, p.name, p.bot);
      a.title = p.seated && p.seated !== p.name ? t("leaderboard.seated_as", { name: p.seated }) : "";
      a.append(document.createTextNode(p.name));
      if (p.bot) a.append(el("span", "bot-pill", t("leaderboard.bot")));
      a.append(document.createTextNode(g.totals ? ` ${formatNumber(g.totals[s])}` : ""));
      seats.append(a);
    });
    tr.append(seats);
    const change = el("td", `num change ${g.change >= 0 ? "up" : "down"}`, `${g.change >= 0 ? "+" : "\u2212"}${num(Math.abs(g.change), 2)}`);
    tr.append(change);
    tr.append(replayCell(g.game_id, "btn small primary"));
    body.append(tr);
  }
  table.append(thead, body);
  // in its own scroller: a row of long bot names is wider than a phone, the page is not
  const scroll = el("div", "table-scroll");
  scroll.append(table);
  panel.append(scroll, explain());
}

async function main() {
  topbar("leaderboard");
  const box = document.getElementById("leaderboard");
  const q = new URLSearchParams(location.search);
  const variant = q.get("variant");
  const player = q.get("player");
  if (variant && player) await showPlayer(box, variant, player, ["1", "true"].includes(q.get("bot") || ""));
  else await showBoard(box, variant);
  document.body.dataset.ready = "true";
}

main();
