// What every page shares: the top bar and the name a person plays under.

import { ApiError, getName, post, setName, whoAmI } from "./api.js";
import { cardText, cardsText } from "./cards.js";
import { mountSettings } from "./settings.js";
import { formatDate, has, languageSwitch, t } from "./i18n.js";

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

/** A table cell with a Replay button for a stored game (the history page replays it). */
/**
 * What a failed request says to a person: the server's error code in this page's language
 * (t("error." + code, args)), else the server's English, else `fallback`'s key.
 */
export function errorText(err, fallback = "error.no_answer") {
  if (err instanceof ApiError) {
    if (err.code && has(`error.${err.code}`)) return t(`error.${err.code}`, errorArgs(err.args || {}));
    return err.message;
  }
  return t(fallback);
}

// a refusal's arguments as its message shows them: a ban's end (unix seconds, or null: never) as
// a date of this page's language, an empty reason as the select branch "none"; the engine's
// (error.illegal.*: core/refusals.py) cards, suit and seats in this page's words
function errorArgs(args) {
  const shown = { ...args };
  if ("until" in shown) shown.until = typeof shown.until === "number" ? formatDate(shown.until * 1000) : "null";
  if ("reason" in shown && !shown.reason) shown.reason = "none";
  if (typeof shown.card === "string") shown.card = cardText(shown.card);
  if (Array.isArray(shown.cards)) shown.cards = cardsText(shown.cards);
  if (SUIT_LETTER[shown.suit]) shown.suit = t(`suit.${SUIT_LETTER[shown.suit]}`);
  for (const key of ["turn", "claimer"]) {
    if (typeof shown[key] === "number" && SEAT_WORDS[shown[key]]) shown[key] = t(`a11y.seat.${SEAT_WORDS[shown[key]]}`);
  }
  return shown;
}

const SUIT_LETTER = { clubs: "C", diamonds: "D", hearts: "H", spades: "S" };
const SEAT_WORDS = ["north", "east", "south", "west"];

export function replayCell(gameId, cls = "btn small") {
  const td = el("td");
  const a = el("a", cls, t("common.replay"));
  a.href = `/history#${encodeURIComponent(gameId)}`;
  a.dataset.action = "replay";
  td.append(a);
  return td;
}

const SITE = {
  home: "/lobby", // where "back" goes
  homeText: "the lobby", // the English; the catalogue's site.home.<page> is what pages show
  nav: [
    ["/lobby", "Lobby", "lobby"],
    ["/history", "History", "history"],
    ["/tournaments", "Tournaments", "tournaments"],
    ["/leaderboard", "Leaderboard", "leaderboard"],
  ], // [href, English text (for a page the catalogue does not know), key: nav.<key> in the catalogue]
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

/** Which home the site has ("lobby", or "seats" on a Trend node): the catalogue's site.<what>.<home>. */
export function homeKey(here = site()) {
  return here.home === "/lobby" ? "lobby" : "seats";
}

/** "Back to the lobby" in this page's language. */
export function backHomeText(here = site()) {
  return t(`site.back.${homeKey(here)}`, {}, `Back to ${here.homeText}`);
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
    const a = el("a", null, t(`nav.${key}`, {}, text));
    a.href = href;
    if (key === current) a.setAttribute("aria-current", "page");
    nav.append(a);
  }
  const me = el("span", "me");
  me.id = "me";
  const conn = el("span", "conn");
  conn.id = "conn";
  conn.hidden = true;
  bar.append(brand, nav, me, conn, languageSwitch());
  mountSettings(bar); // the Settings dialog (js/settings.js), on every page
  showName(getName());
  return bar;
}

export function showName(name) {
  const me = document.getElementById("me");
  if (!me) return;
  me.innerHTML = "";
  if (name) {
    me.append(document.createTextNode(`${t("common.playing_as")} `), el("b", null, name), document.createTextNode(" "));
    const change = el("button", "btn small", t("common.change_name"));
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
  conn.textContent = t(`conn.${status}`, {}, status);
}

const NAME_RE = /^[^;,=\s][^;,=]{0,38}[^;,=\s]?$/;

/**
 * Resolve with the person's name once the server accepts it. Without a name cookie, or when the
 * server refuses the name (401, or 403 because someone else holds it), draw a form into `box` and
 * wait for a name that works.
 */
export async function ensureName(box, intro = t("name.intro")) {
  let problem = null;
  for (;;) {
    const name = getName();
    if (name) {
      const who = await whoAmI();
      if (who && who.name) {
        showName(who.name);
        box.hidden = true;
        box.innerHTML = "";
        if (who.recovery) showRecovery(who.name, who.recovery);
        return who.name;
      }
      const bound = who && who.error && who.error.status === 403 && who.error.message.includes("recovery code");
      problem = bound
        ? t("name.bound", { name })
        : who && who.error && who.error.status === 403
          ? t("name.taken", { name })
          : who && who.error ? errorText(who.error) : t("name.refused");
      setName("");
      showName(null);
    }
    await askName(box, intro, problem, name);
  }
}

/**
 * A name was bound to this browser just now: show its recovery code, once. The server keeps only
 * a digest of it; the code is what moves the name to another browser.
 */
export function showRecovery(name, code) {
  document.getElementById("recovery")?.remove();
  const note = el("div", "panel recovery");
  note.id = "recovery";
  note.setAttribute("role", "status");
  const text = el("p");
  const [before, after] = t("name.recovery", { name, code: "\u0000" }).split("\u0000");
  text.append(document.createTextNode(before), el("code", "recovery-code", code), document.createTextNode(after ?? ""));
  const ok = el("button", "btn small", t("common.got_it"));
  ok.type = "button";
  ok.addEventListener("click", () => note.remove());
  note.append(text, ok);
  const bar = document.querySelector("header.topbar");
  if (bar) bar.after(note);
  else document.body.prepend(note);
}

/** A form to move a bound name here with its recovery code; resolves once it moved. */
function recoveryForm(name, done) {
  const details = el("details", "recover");
  details.append(el("summary", null, t("name.recover.summary", { name })));
  const form = el("form");
  form.id = "recover-form";
  const input = el("input");
  input.name = "code";
  input.placeholder = "XXXX-XXXX-XXXX-XXXX-XXXX";
  input.autocomplete = "off";
  input.required = true;
  input.setAttribute("aria-label", t("name.recover.code"));
  const go = el("button", "btn", t("name.recover.move"));
  go.type = "submit";
  const hint = el("p", "muted");
  hint.id = "recover-error";
  form.append(input, go);
  details.append(form, hint);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const moved = await post("/api/names/recover", { name, code: input.value.trim() });
      setName(moved.name);
      done(moved);
    } catch (err) {
      hint.textContent = errorText(err);
    }
  });
  return details;
}

function askName(box, intro, problem, previous) {
  return new Promise((resolve) => {
    box.hidden = false;
    box.innerHTML = "";
    const card = el("div", "panel name-card");
    card.append(el("h2", null, t("name.welcome")), el("p", null, intro));
    if (problem) {
      const err = el("div", "error", problem);
      err.setAttribute("role", "alert");
      err.id = "name-error";
      card.append(err);
    }
    let recover = null;
    if (problem && previous) {
      recover = recoveryForm(previous, (moved) => {
        showRecovery(moved.name, moved.recovery);
        resolve();
      });
    }
    const form = el("form");
    form.id = "name-form";
    const input = el("input");
    input.name = "name";
    input.placeholder = t("name.placeholder");
    input.maxLength = 40;
    input.autocomplete = "nickname";
    input.required = true;
    input.setAttribute("aria-label", t("name.placeholder"));
    if (previous) input.value = previous;
    const go = el("button", "btn primary", t("name.enter"));
    go.type = "submit";
    const hint = el("p", "muted");
    form.append(input, go);
    card.append(form, hint);
    if (recover) card.append(recover);
    box.append(card);
    input.focus();
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!NAME_RE.test(name)) {
        hint.textContent = t("name.invalid");
        return;
      }
      setName(name);
      resolve();
    });
  });
}

export { el };
