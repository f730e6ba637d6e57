// The tournaments page: /tournaments lists them and creates one (POST /api/tournaments);
// /tournaments#<id> shows one: progress, the standings (mean points per deal with its 95%
// interval, win rate, moons, timeouts, errors, no-shows), the paired differences, the running
// standings plot, exports, and a form for an external entrant to play its next game over HTTP.

import { getJson, post } from "./api.js";
import { el, ensureName, errorText, replayCell, topbar } from "./common.js";
import { formatNumber, t } from "./i18n.js";
import { variantLabel } from "./labels.js";

const REFRESH_MS = 2000;
let timer = null;

function fmt(x, digits = 2) {
  return x === null || x === undefined ? "\u2013" : formatNumber(Number(x), { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pct(x) {
  return x === null || x === undefined ? "\u2013" : formatNumber(x, { style: "percent", maximumFractionDigits: 0 });
}

function alertBox(message) {
  const e = el("div", "error", message);
  e.setAttribute("role", "alert");
  return e;
}

// ---- the list and the form ---------------------------------------------------------------------

async function showList(box) {
  box.innerHTML = "";
  const grid = el("div", "tournament-grid");
  const listPanel = el("section", "panel");
  listPanel.append(el("h1", null, t("tournaments.title")));
  const formPanel = el("section", "panel");
  formPanel.append(el("h2", null, t("tournaments.new")), createForm());
  grid.append(listPanel, formPanel);
  box.append(grid);
  let rows;
  try {
    rows = await getJson("/api/tournaments");
  } catch (err) {
    listPanel.append(alertBox(errorText(err)));
    return;
  }
  if (!rows.length) {
    listPanel.append(el("p", "empty-note", t("tournaments.none")));
    return;
  }
  const table = el("table", "games");
  table.id = "tournaments-table";
  const head = el("tr");
  for (const key of ["tournaments.tournament", "history.variant", "tournaments.entrants", "lobby.games", "history.status"]) head.append(el("th", null, t(key)));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr");
    tr.dataset.id = row.id;
    const link = el("a", null, row.id);
    link.href = `/tournaments#${encodeURIComponent(row.id)}`;
    const first = el("td");
    first.append(link);
    tr.append(first, el("td", null, `${variantLabel(row.variant)} \u00b7 ${t("tournaments.sets", { count: row.sets })}`));
    tr.append(el("td", null, (row.entrants || []).join(", ")));
    tr.append(el("td", null, `${row.games_played}/${row.games_total}`));
    const st = el("td");
    st.append(el("span", `status-pill ${row.status}`, t(`tournaments.status.${row.status}`, {}, row.status)));
    tr.append(st);
    body.append(tr);
  }
  table.append(thead, body);
  listPanel.append(table);
}

/** <input type=number> with its id, bounds (max null: none) and starting value. */
function numberInput(id, min, max, value) {
  const input = el("input");
  input.id = id;
  input.type = "number";
  input.min = String(min);
  if (max !== null) input.max = String(max);
  input.value = String(value);
  return input;
}

function field(form, label, input, hint) {
  const l = el("label", null, label);
  l.htmlFor = input.id;
  form.append(l, input);
  if (hint) {
    const h = el("p", "t-hint full", hint);
    form.append(h);
  }
}

function createForm() {
  const form = el("form", "t-form");
  form.id = "create-tournament";
  const variant = el("select");
  variant.id = "t-variant";
  for (const name of ["standard", "omnibus", "trend", "turbo", "kierki"]) {
    const o = el("option", null, variantLabel(name));
    o.value = name;
    variant.append(o);
  }
  const sets = numberInput("t-sets", 1, 1000, 4);
  const deals = numberInput("t-deals", 0, 52, 0);
  const seed = numberInput("t-seed", 0, null, "");
  seed.placeholder = t("tournaments.seed.placeholder");
  const bots = el("textarea");
  bots.id = "t-bots";
  bots.value = "random\nheuristic\nsearch --think-ms 50";
  const externals = el("input");
  externals.id = "t-externals";
  externals.placeholder = t("tournaments.externals.placeholder");
  field(form, t("lobby.variant"), variant);
  field(form, t("tournaments.sets_label"), sets);
  field(form, t("tournaments.deals_label"), deals, t("tournaments.deals_hint"));
  field(form, t("tournaments.seed"), seed, t("tournaments.seed_hint"));
  const botsLabel = el("label", "full", t("tournaments.bots"));
  botsLabel.htmlFor = bots.id;
  bots.classList.add("full");
  form.append(botsLabel, bots, el("p", "t-hint full", t("tournaments.bots_hint")));
  field(form, t("tournaments.external"), externals, t("tournaments.external_hint"));
  const go = el("button", "btn primary full", t("tournaments.create"));
  go.type = "submit";
  const out = el("div", "full");
  form.append(go, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.innerHTML = "";
    await ensureName(document.getElementById("name-box"), t("tournaments.name_intro"));
    const body = {
      variant: variant.value,
      sets: Number(sets.value),
      deals_per_set: Number(deals.value),
      bots: bots.value.split("\n").map((s) => s.trim()).filter(Boolean),
      externals: externals.value.split(",").map((s) => s.trim()).filter(Boolean),
    };
    if (seed.value.trim() !== "") body.seed = Number(seed.value);
    go.disabled = true;
    try {
      const made = await post("/api/tournaments", body);
      sessionStorage.setItem(`moonshot.tokens.${made.id}`, JSON.stringify(made.tokens || {}));
      location.hash = made.id;
    } catch (err) {
      out.append(alertBox(errorText(err)));
    } finally {
      go.disabled = false;
    }
  });
  return form;
}

// ---- one tournament ----------------------------------------------------------------------------

function standingsTable(st) {
  const table = el("table", "standings");
  table.id = "standings";
  const head = el("tr");
  const cols = ["#", "entrant", "deals", "points", "ci", "win", "moons", "timeouts", "errors", "no_shows"];
  for (const c of cols) head.append(el("th", null, c === "#" ? c : t(`tournaments.col.${c}`)));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const r of st.entrants) {
    const tr = el("tr", `rank-${r.rank}`);
    tr.dataset.entrant = r.entrant;
    const name = el("td", null, r.entrant);
    if (r.kind === "external") name.append(el("span", "kind-tag", t("tournaments.external_tag")));
    tr.append(el("td", null, String(r.rank)), name, el("td", null, String(r.deals)));
    tr.append(el("td", null, fmt(r.mean_points_per_deal)));
    tr.append(el("td", "ci", r.ci_low === null ? "\u2013" : `${fmt(r.ci_low, 1)}\u2026${fmt(r.ci_high, 1)}`));
    tr.append(el("td", null, pct(r.win_rate)), el("td", null, `${r.moons_shot}/${r.moons_conceded}`));
    tr.append(el("td", null, String(r.timeouts)), el("td", null, String(r.errors)), el("td", null, String(r.no_shows)));
    body.append(tr);
  }
  table.append(thead, body);
  return table;
}

function pairedTable(st) {
  const names = st.entrants.map((r) => r.entrant);
  const by = new Map(st.paired.map((p) => [`${p.entrant}\u0000${p.opponent}`, p]));
  const table = el("table", "standings paired");
  table.id = "paired";
  const head = el("tr");
  head.append(el("th", null, ""), el("th", null, t("tournaments.row_minus_column")));
  names.forEach((_, i) => head.append(el("th", null, String(i + 1))));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  names.forEach((a, i) => {
    const tr = el("tr");
    tr.append(el("td", null, String(i + 1)), el("td", null, a));
    for (const b of names) {
      const p = a === b ? null : by.get(`${a}\u0000${b}`);
      const td = el("td", null, p && p.difference !== null ? fmt(p.difference, 1) : "");
      if (p && p.ci_low !== null) {
        td.title = t("tournaments.paired_title", { a, b, difference: fmt(p.difference), low: fmt(p.ci_low), high: fmt(p.ci_high), deals: p.deals });
        // significant either way: better (fewer points, or more where higher wins) or worse
        const sign = p.ci_low > 0 ? 1 : p.ci_high < 0 ? -1 : 0;
        const good = st.lower_is_better ? -1 : 1;
        if (sign) td.className = sign === good ? "neg" : "pos";
      }
      tr.append(td);
    }
    body.append(tr);
  });
  table.append(thead, body);
  return table;
}

function gamesTable(data) {
  const names = data.entrants.map((e) => e.name);
  const table = el("table", "standings games-list");
  table.id = "games";
  const head = el("tr");
  for (const c of ["game", "set", "table", "rotation", "seats", ""]) {
    head.append(el("th", null, c ? t(`tournaments.games.${c}`) : ""));
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const g of [...data.games].reverse()) {
    const tr = el("tr");
    tr.dataset.game = g.game_id;
    tr.append(el("td", null, String(g.number + 1)), el("td", null, String(g.set_index + 1)));
    tr.append(el("td", null, String(g.table + 1)), el("td", null, String(g.rotation + 1)));
    const who = g.seats
      .map((s) => `${names[s.entrant] ?? t("tournaments.house", { n: s.entrant - names.length + 1 })} ${s.total}${s.no_show ? ` ${t("tournaments.absent")}` : ""}`)
      .join(" \u00b7 ");
    tr.append(el("td", "who", who));
    tr.append(replayCell(g.game_id));
    body.append(tr);
  }
  table.append(thead, body);
  return table;
}

function scroller(table) {
  const box = el("div", "table-scroll");
  box.append(table);
  return box;
}

function playForm(id) {
  const form = el("form", "t-form");
  form.id = "play-form";
  const token = el("input");
  token.id = "t-token";
  token.placeholder = t("tournaments.token.placeholder");
  token.autocomplete = "off";
  field(form, t("tournaments.token"), token);
  const go = el("button", "btn primary full", t("tournaments.play_next"));
  go.type = "submit";
  const out = el("div", "full");
  form.append(go, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.innerHTML = "";
    await ensureName(document.getElementById("name-box"), t("name.intro"));
    go.disabled = true;
    out.append(el("p", "t-hint", t("tournaments.waiting")));
    try {
      for (;;) {
        const seat = await post("/api/tournaments/play", { token: token.value.trim(), wait: 25 });
        if (seat && seat.url) {
          location.href = seat.url;
          return;
        }
      }
    } catch (err) {
      out.innerHTML = "";
      out.append(alertBox(errorText(err)));
    } finally {
      go.disabled = false;
    }
  });
  return form;
}

async function showOne(box, id) {
  let data;
  try {
    data = await getJson(`/api/tournaments/${encodeURIComponent(id)}/results`);
  } catch (err) {
    box.innerHTML = "";
    const panel = el("section", "panel");
    panel.append(el("h1", null, t("tournaments.tournament")), alertBox(errorText(err)));
    box.append(panel);
    return;
  }
  box.innerHTML = "";
  const grid = el("div", "tournament-detail");
  const main = el("section", "panel");
  const title = el("h1", null, `${t("tournaments.one", { id: data.id })} `);
  title.append(el("span", `status-pill ${data.status}`, t(`tournaments.status.${data.status}`, {}, data.status)));
  main.append(title);
  const lower = data.standings.lower_is_better;
  main.append(
    el(
      "p",
      "muted",
      [
        variantLabel(data.variant),
        t("tournaments.sets_of", { sets: data.sets, deals: data.deals_per_set }),
        data.seed === null ? t("tournaments.secret_seed") : t("tournaments.seed_is", { seed: String(data.seed) }),
        lower ? t("tournaments.fewer_better") : t("tournaments.more_better"),
      ].join(" \u00b7 "),
    ),
  );
  const bar = el("div", "progress");
  const fill = el("div");
  fill.style.width = `${data.games_total ? (100 * data.games_played) / data.games_total : 0}%`;
  bar.append(fill);
  main.append(el("div", "t-hint", t("tournaments.played", { played: data.games_played, total: data.games_total })), bar);
  if (data.error) main.append(alertBox(data.error));
  const stored = sessionStorage.getItem(`moonshot.tokens.${data.id}`);
  const tokens = stored ? JSON.parse(stored) : {};
  if (Object.keys(tokens).length) {
    const box2 = el("div", "tokens");
    box2.id = "tokens";
    box2.append(el("strong", null, `${t("tournaments.tokens")} `));
    for (const [name, tok] of Object.entries(tokens)) {
      const line = el("div");
      line.append(document.createTextNode(`${name}: `), el("code", null, tok));
      box2.append(line);
    }
    main.append(box2);
  }
  main.append(el("h2", null, t("tournaments.standings")), scroller(standingsTable(data.standings)));
  const links = el("div", "t-links");
  for (const [href, text] of [
    [`/api/tournaments/${encodeURIComponent(id)}/results`, t("tournaments.results_json")],
    [`/api/tournaments/${encodeURIComponent(id)}/results?format=csv`, t("tournaments.standings_csv")],
  ]) {
    const a = el("a", "btn small", text);
    a.href = href;
    links.append(a);
  }
  main.append(links);
  if (data.games_played) {
    const img = el("img", "plot");
    img.alt = t("tournaments.plot");
    img.src = `/api/tournaments/${encodeURIComponent(id)}/standings.png?n=${data.games_played}`;
    img.addEventListener("error", () => img.remove()); // no matplotlib on the server: no plot
    main.append(img);
  }
  const side = el("div", "tournament-side");
  const pairs = el("section", "panel");
  pairs.append(
    el("h2", null, t("tournaments.paired")),
    el("p", "t-hint", t("tournaments.paired_hint")),
    scroller(pairedTable(data.standings)),
  );
  side.append(pairs);
  if (data.games && data.games.length) {
    const games = el("section", "panel");
    games.append(el("h2", null, t("lobby.games")), scroller(gamesTable(data)));
    side.append(games);
  }
  if (data.status === "running" && data.entrants.some((e) => e.external)) {
    const play = el("section", "panel");
    play.append(el("h2", null, t("tournaments.play_as")), playForm(id));
    side.append(play);
  }
  grid.append(main, side);
  box.append(grid);
  if (data.status === "running") timer = setTimeout(refresh, REFRESH_MS);
}

function refresh() {
  // never redraw under someone typing a token or waiting for their game
  const token = document.getElementById("t-token");
  const waiting = document.querySelector("#play-form button:disabled");
  if ((token && (token.value || document.activeElement === token)) || waiting) {
    timer = setTimeout(refresh, REFRESH_MS);
    return;
  }
  route();
}

function route() {
  clearTimeout(timer);
  const box = document.getElementById("tournaments-page");
  const id = decodeURIComponent(location.hash.slice(1));
  if (id) showOne(box, id);
  else showList(box);
}

topbar("tournaments");
window.addEventListener("hashchange", route);
route();
