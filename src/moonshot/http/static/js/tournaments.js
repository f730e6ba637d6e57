// The tournaments page: /tournaments lists them and creates one (POST /api/tournaments);
// /tournaments#<id> shows one: progress, the standings (mean points per deal with its 95%
// interval, win rate, moons, timeouts, errors, no-shows), the paired differences, the running
// standings plot, exports, and a form for an external entrant to play its next game over HTTP.

import { getJson, post } from "./api.js";
import { el, ensureName, replayCell, topbar } from "./common.js";
import { variantLabel } from "./labels.js";

const REFRESH_MS = 2000;
let timer = null;

function fmt(x, digits = 2) {
  return x === null || x === undefined ? "\u2013" : Number(x).toFixed(digits);
}

function pct(x) {
  return x === null || x === undefined ? "\u2013" : `${Math.round(x * 100)}%`;
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
  listPanel.append(el("h1", null, "Tournaments"));
  const formPanel = el("section", "panel");
  formPanel.append(el("h2", null, "New tournament"), createForm());
  grid.append(listPanel, formPanel);
  box.append(grid);
  let rows;
  try {
    rows = await getJson("/api/tournaments");
  } catch (err) {
    listPanel.append(alertBox(err.message));
    return;
  }
  if (!rows.length) {
    listPanel.append(el("p", "empty-note", "No tournaments yet. Create one with the form."));
    return;
  }
  const table = el("table", "games");
  table.id = "tournaments-table";
  const head = el("tr");
  for (const text of ["Tournament", "Variant", "Entrants", "Games", "Status"]) head.append(el("th", null, text));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const t of rows) {
    const tr = el("tr");
    tr.dataset.id = t.id;
    const link = el("a", null, t.id);
    link.href = `/tournaments#${encodeURIComponent(t.id)}`;
    const first = el("td");
    first.append(link);
    tr.append(first, el("td", null, `${variantLabel(t.variant)} \u00b7 ${t.sets} set${t.sets === 1 ? "" : "s"}`));
    tr.append(el("td", null, (t.entrants || []).join(", ")));
    tr.append(el("td", null, `${t.games_played}/${t.games_total}`));
    const st = el("td");
    st.append(el("span", `status-pill ${t.status}`, t.status));
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
  seed.placeholder = "secret";
  const bots = el("textarea");
  bots.id = "t-bots";
  bots.value = "random\nheuristic\nsearch --think-ms 50";
  const externals = el("input");
  externals.id = "t-externals";
  externals.placeholder = "alice, my-bot";
  field(form, "Variant", variant);
  field(form, "Deal sets", sets);
  field(form, "Deals per set", deals, "0: one pass cycle of the variant. Every set is played in every seat rotation.");
  field(form, "Seed", seed, "Empty: the server draws a secret seed, shown when the tournament is over. A seed of your own (the same seed deals the same cards) only for built-in bots.");
  const botsLabel = el("label", "full", "Built-in bots, one per line");
  botsLabel.htmlFor = bots.id;
  bots.classList.add("full");
  form.append(botsLabel, bots, el("p", "t-hint full", "A registry name and options, e.g. \u201csearch --think-ms 200\u201d; \u201cNAME=bot\u201d names it."));
  field(form, "External", externals, "Names of players who connect themselves; each gets a token (shown once).");
  const go = el("button", "btn primary full", "Create and start");
  go.type = "submit";
  const out = el("div", "full");
  form.append(go, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.innerHTML = "";
    await ensureName(document.getElementById("name-box"), "Pick a name to create a tournament under.");
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
      out.append(alertBox(err.message));
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
  const cols = ["#", "Entrant", "Deals", "Pts/deal", "95% CI", "Win", "Moons +/\u2212", "Timeouts", "Errors", "No-shows"];
  for (const c of cols) head.append(el("th", null, c));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const r of st.entrants) {
    const tr = el("tr", `rank-${r.rank}`);
    tr.dataset.entrant = r.entrant;
    const name = el("td", null, r.entrant);
    if (r.kind === "external") name.append(el("span", "kind-tag", "external"));
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
  head.append(el("th", null, ""), el("th", null, "row \u2212 column"));
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
        td.title = `${a} \u2212 ${b}: ${fmt(p.difference)} points per deal (95% ${fmt(p.ci_low)} \u2026 ${fmt(p.ci_high)}) over ${p.deals} deals`;
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
  for (const c of ["Game", "Set", "Table", "Rotation", "North \u00b7 East \u00b7 South \u00b7 West (points)", ""]) {
    head.append(el("th", null, c));
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
      .map((s) => `${names[s.entrant] ?? `house ${s.entrant - names.length + 1}`} ${s.total}${s.no_show ? " (absent)" : ""}`)
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
  token.placeholder = "your entrant token";
  token.autocomplete = "off";
  field(form, "Token", token);
  const go = el("button", "btn primary full", "Play my next game");
  go.type = "submit";
  const out = el("div", "full");
  form.append(go, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.innerHTML = "";
    await ensureName(document.getElementById("name-box"), "Pick a name to play under.");
    go.disabled = true;
    out.append(el("p", "t-hint", "Waiting for your next game to start\u2026"));
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
      out.append(alertBox(err.message));
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
    panel.append(el("h1", null, "Tournament"), alertBox(err.message));
    box.append(panel);
    return;
  }
  box.innerHTML = "";
  const grid = el("div", "tournament-detail");
  const main = el("section", "panel");
  const title = el("h1", null, `Tournament ${data.id} `);
  title.append(el("span", `status-pill ${data.status}`, data.status));
  main.append(title);
  const lower = data.standings.lower_is_better;
  main.append(
    el(
      "p",
      "muted",
      `${variantLabel(data.variant)} \u00b7 ${data.sets} deal set${data.sets === 1 ? "" : "s"} of ${data.deals_per_set} deal${data.deals_per_set === 1 ? "" : "s"} \u00b7 ${data.seed === null ? "secret seed" : `seed ${data.seed}`} \u00b7 ${lower ? "fewer" : "more"} points is better`,
    ),
  );
  const bar = el("div", "progress");
  const fill = el("div");
  fill.style.width = `${data.games_total ? (100 * data.games_played) / data.games_total : 0}%`;
  bar.append(fill);
  main.append(el("div", "t-hint", `${data.games_played} of ${data.games_total} games played`), bar);
  if (data.error) main.append(alertBox(data.error));
  const stored = sessionStorage.getItem(`moonshot.tokens.${data.id}`);
  const tokens = stored ? JSON.parse(stored) : {};
  if (Object.keys(tokens).length) {
    const box2 = el("div", "tokens");
    box2.id = "tokens";
    box2.append(el("strong", null, "Entrant tokens (shown once: hand each to its player) "));
    for (const [name, tok] of Object.entries(tokens)) {
      const line = el("div");
      line.append(document.createTextNode(`${name}: `), el("code", null, tok));
      box2.append(line);
    }
    main.append(box2);
  }
  main.append(el("h2", null, "Standings"), scroller(standingsTable(data.standings)));
  const links = el("div", "t-links");
  for (const [href, text] of [
    [`/api/tournaments/${encodeURIComponent(id)}/results`, "Results (JSON)"],
    [`/api/tournaments/${encodeURIComponent(id)}/results?format=csv`, "Standings (CSV)"],
  ]) {
    const a = el("a", "btn small", text);
    a.href = href;
    links.append(a);
  }
  main.append(links);
  if (data.games_played) {
    const img = el("img", "plot");
    img.alt = "running standings: mean points per deal after each game";
    img.src = `/api/tournaments/${encodeURIComponent(id)}/standings.png?n=${data.games_played}`;
    img.addEventListener("error", () => img.remove()); // no matplotlib on the server: no plot
    main.append(img);
  }
  const side = el("div", "tournament-side");
  const pairs = el("section", "panel");
  pairs.append(
    el("h2", null, "Paired differences"),
    el("p", "t-hint", "Row minus column, points per deal on the same cards; coloured where the 95% interval excludes 0."),
    scroller(pairedTable(data.standings)),
  );
  side.append(pairs);
  if (data.games && data.games.length) {
    const games = el("section", "panel");
    games.append(el("h2", null, "Games"), scroller(gamesTable(data)));
    side.append(games);
  }
  if (data.status === "running" && data.entrants.some((e) => e.external)) {
    const play = el("section", "panel");
    play.append(el("h2", null, "Play as an entrant"), playForm(id));
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
