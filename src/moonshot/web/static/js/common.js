// What every page shares: the top bar and the name a person plays under.

import { getName, setName, whoAmI } from "./api.js";

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

/** A table cell with a Replay button for a stored game (the history page replays it). */
export function replayCell(gameId, cls = "btn small") {
  const td = el("td");
  const a = el("a", cls, "Replay");
  a.href = `/history#${encodeURIComponent(gameId)}`;
  a.dataset.action = "replay";
  td.append(a);
  return td;
}

const SITE = {
  home: "/lobby", // where "back" goes
  homeText: "the lobby",
  nav: [
    ["/lobby", "Lobby", "lobby"],
    ["/history", "History", "history"],
    ["/tournaments", "Tournaments", "tournaments"],
    ["/leaderboard", "Leaderboard", "leaderboard"],
  ],
  replay: true, // finished games can be replayed at /history
};

/**
 * What the server that serves this page has: its pages for the top bar, where "back" goes, and
 * whether games are kept for replay. `moonshot serve` has them all; a server with fewer (the
 * Trend node: its seat page, no history) says so in <meta name="moonshot-site" content="{json}">.
 */
export function site() {
  const meta = document.querySelector('meta[name="moonshot-site"]');
  if (!meta) return SITE;
  try {
    return { ...SITE, ...JSON.parse(meta.content) };
  } catch {
    return SITE;
  }
}

/** Fill <header class="topbar"> with the brand, the page links and the person's name. */
export function topbar(current) {
  const bar = document.querySelector("header.topbar");
  bar.innerHTML = "";
  const here = site();
  const brand = el("a", "brand");
  brand.href = here.home;
  brand.append(el("span", "moon", "\u263e "), document.createTextNode("moonshot"));
  const nav = el("nav");
  for (const [href, text, key] of here.nav) {
    const a = el("a", null, text);
    a.href = href;
    if (key === current) a.setAttribute("aria-current", "page");
    nav.append(a);
  }
  const me = el("span", "me");
  me.id = "me";
  const conn = el("span", "conn");
  conn.id = "conn";
  conn.hidden = true;
  bar.append(brand, nav, me, conn);
  showName(getName());
  return bar;
}

export function showName(name) {
  const me = document.getElementById("me");
  if (!me) return;
  me.innerHTML = "";
  if (name) {
    me.append(document.createTextNode("playing as "), el("b", null, name), document.createTextNode(" "));
    const change = el("button", "btn small", "change");
    change.type = "button";
    change.dataset.action = "change-name";
    change.addEventListener("click", () => {
      setName("");
      location.reload();
    });
    me.append(change);
  }
}

export function showConnection(status) {
  const conn = document.getElementById("conn");
  if (!conn) return;
  conn.hidden = status === "open" || status === "closed";
  conn.className = `conn ${status}`;
  conn.textContent = status === "reconnecting" ? "reconnecting\u2026" : status;
}

const NAME_RE = /^[^;,=\s][^;,=]{0,38}[^;,=\s]?$/;

/**
 * Resolve with the person's name once the server accepts it. Without a name cookie, or when the
 * server refuses the name (401, or 403 because someone else holds it), draw a form into `box` and
 * wait for a name that works.
 */
export async function ensureName(box, intro = "Pick a name to play under.") {
  let problem = null;
  for (;;) {
    const name = getName();
    if (name) {
      const who = await whoAmI();
      if (who && who.name) {
        showName(who.name);
        box.hidden = true;
        box.innerHTML = "";
        return who.name;
      }
      problem = who && who.error && who.error.status === 403
        ? `The name \u201c${name}\u201d is taken by someone else right now. Pick another name.`
        : who && who.error ? who.error.message : "The server did not accept that name.";
      setName("");
      showName(null);
    }
    await askName(box, intro, problem, name);
  }
}

function askName(box, intro, problem, previous) {
  return new Promise((resolve) => {
    box.hidden = false;
    box.innerHTML = "";
    const card = el("div", "panel name-card");
    card.append(el("h2", null, "Welcome to moonshot"), el("p", null, intro));
    if (problem) {
      const err = el("div", "error", problem);
      err.setAttribute("role", "alert");
      err.id = "name-error";
      card.append(err);
    }
    const form = el("form");
    form.id = "name-form";
    const input = el("input");
    input.name = "name";
    input.placeholder = "your name";
    input.maxLength = 40;
    input.autocomplete = "nickname";
    input.required = true;
    input.setAttribute("aria-label", "your name");
    if (previous) input.value = previous;
    const go = el("button", "btn primary", "Enter");
    go.type = "submit";
    const hint = el("p", "muted");
    form.append(input, go);
    card.append(form, hint);
    box.append(card);
    input.focus();
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!NAME_RE.test(name)) {
        hint.textContent = "Use 1 to 40 characters, without ; , or =.";
        return;
      }
      setName(name);
      resolve();
    });
  });
}

export { el };
