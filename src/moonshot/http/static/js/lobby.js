// The lobby, /lobby: who is here, the open and running games, creating and joining games,
// adding bots, and the lobby chat. Everything live comes from GET /lobby/subscribe.

import { Subscription, getJson, post } from "./api.js";
import { el, ensureName, errorText, showConnection, topbar } from "./common.js";
import { cardFace } from "./cards.js";
import { CHARGING_RULES, variantDescription, variantLabel } from "./labels.js";
import { CLOCKS } from "./clock.js";
import { formatNumber, t } from "./i18n.js";

const KNOWN_KEY = "moonshot.games"; // id -> {variant, rules} of games this browser created

function remembered() {
  try {
    return JSON.parse(localStorage.getItem(KNOWN_KEY) || "{}");
  } catch {
    return {};
  }
}

function remember(id, info) {
  const all = remembered();
  all[id] = info;
  const ids = Object.keys(all);
  for (const old of ids.slice(0, Math.max(0, ids.length - 100))) delete all[old];
  localStorage.setItem(KNOWN_KEY, JSON.stringify(all));
}

// A player in the lobby stream is a name (the README's `player` strings) or an object
// `{type, name}` (`join_game`, `lobby_state`: the seed-era server's shape); both are read.
function playerName(p) {
  return p && typeof p === "object" ? p.name : p;
}

// the name an event is about: `name` where moonshot sends it, else `player`
function eventName(ev) {
  return typeof ev.name === "string" ? ev.name : playerName(ev.player);
}

// a level as the picker shows it: "4 · Intermediate · rating 25.3 · 0.02 ms a move"
function levelLabel(lv) {
  return t("lobby.level.option", { level: lv.level, name: levelName(lv), rating: fixed(lv.mu, 1), cost: costText(lv.cpu_ms) });
}

// a level's name in this page's language (the server's English for a level the catalogue lacks)
function levelName(lv) {
  return t(`level.${lv.level}`, {}, lv.name);
}

function fixed(n, digits) {
  return formatNumber(n, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// a level's CPU a move: whole milliseconds for search, two decimals below, and "< 0.01" for the
// levels that cost microseconds (random, heuristic)
function costText(ms) {
  if (ms >= 1) return t("unit.ms", { ms: formatNumber(Math.round(ms)) });
  return t("unit.ms", { ms: ms >= 0.01 ? fixed(ms, 2) : `< ${fixed(0.01, 2)}` });
}

class Lobby {
  constructor(root, me) {
    this.root = root;
    this.me = me;
    this.people = new Set();
    this.games = new Map(); // id -> {id, players: [name], variant?, rules?}
    this.chat = [];
    this.variants = [];
    this.bots = ["random"];
    this.levels = []; // /api/levels: {level, key, name, spec, mu, sigma, ordinal, cpu_ms}
    this.error = null;
    this.build();
  }

  build() {
    const root = this.root;
    root.hidden = false;
    root.innerHTML = "";
    const hero = el("section", "hero");
    const fan = el("div", "fan");
    for (const c of ["QS", "AH", "JD", "TC"]) fan.append(cardFace(c));
    const words = el("div");
    words.append(el("h1", null, t("lobby.hero.title")), el("p", null, t("lobby.hero.text")));
    hero.append(fan, words);

    this.errorBox = el("div", "error");
    this.errorBox.setAttribute("role", "alert");
    this.errorBox.hidden = true;
    this.errorBox.id = "lobby-error";
    // the operator's notice (moonshot admin notice, drain): a banner every lobby stream shows
    this.noticeBox = el("div", "notice");
    this.noticeBox.setAttribute("role", "status");
    this.noticeBox.hidden = true;
    this.noticeBox.id = "lobby-notice";

    const create = el("section", "panel create");
    create.append(el("h2", null, t("lobby.new_game")));
    const row = el("div", "form-row");
    this.variantSelect = el("select");
    this.variantSelect.id = "variant";
    this.rulesSelect = el("select");
    this.rulesSelect.id = "rules";
    for (const [value, label] of CHARGING_RULES) {
      const o = el("option", null, t(`rules.${value}`, {}, label));
      o.value = value;
      this.rulesSelect.append(o);
    }
    this.botSelect = el("select");
    this.botSelect.id = "algorithm";
    const field = (label, control) => {
      const f = el("div", "field");
      const l = el("label", null, label);
      l.htmlFor = control.id;
      f.append(l, control);
      return f;
    };
    this.rulesField = field(t("lobby.charging_rules"), this.rulesSelect);
    // the clock: seconds a person has a decision, then the table's bot plays for them (a rated
    // game always has one; the server's default is 30 s)
    this.clockSelect = el("select");
    this.clockSelect.id = "clock";
    for (const [value, label] of CLOCKS) {
      const o = el("option", null, t(`clock.option.${value}`, {}, label));
      o.value = value;
      if (value === "30") o.selected = true;
      this.clockSelect.append(o);
    }
    // a practice game: unrated, only the creator's bots join, and the table offers hints (the
    // server makes a game practice when its creator names the seed: a random one is sent)
    this.practiceBox = el("input");
    this.practiceBox.type = "checkbox";
    this.practiceBox.id = "practice";
    const practice = el("label", "check-field");
    practice.htmlFor = "practice";
    practice.title = t("lobby.practice.title");
    practice.append(this.practiceBox, document.createTextNode(` ${t("lobby.practice")}`));
    const createButton = el("button", "btn primary", t("lobby.create"));
    createButton.type = "button";
    createButton.id = "create-game";
    createButton.addEventListener("click", () => this.createGame());
    row.append(
      field(t("lobby.variant"), this.variantSelect),
      this.rulesField,
      field(t("lobby.bot_level"), this.botSelect),
      field(t("lobby.clock"), this.clockSelect),
      practice,
      createButton,
    );
    this.variantHelp = el("p", "variant-help");
    create.append(row, this.variantHelp);
    this.variantSelect.addEventListener("change", () => this.variantChanged());

    const gamesPanel = el("section", "panel");
    gamesPanel.append(el("h2", null, t("lobby.games")));
    this.gamesList = el("ul", "games-list");
    this.gamesList.id = "games";
    gamesPanel.append(this.gamesList);

    const peoplePanel = el("section", "panel");
    peoplePanel.append(el("h3", null, t("lobby.people")));
    this.peopleList = el("ul", "people");
    this.peopleList.id = "people";
    peoplePanel.append(this.peopleList);

    const chatPanel = el("section", "panel chat lobby-chat");
    chatPanel.append(el("h3", null, t("lobby.chat")));
    this.chatLog = el("ul", "chat-log");
    this.chatLog.id = "lobby-chat";
    const form = el("form", "chat-form");
    const input = el("input");
    input.placeholder = t("lobby.chat.placeholder");
    input.maxLength = 500;
    input.setAttribute("aria-label", t("lobby.chat.label"));
    const send = el("button", "btn small", t("chat.send"));
    send.type = "submit";
    form.append(input, send);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const message = input.value.trim();
      if (!message) return;
      input.value = "";
      this.act(() => post("/lobby/chat", { message }));
    });
    chatPanel.append(this.chatLog, form);

    const history = el("section", "panel");
    history.append(el("h3", null, t("lobby.finished")));
    const link = el("a", null, t("lobby.finished.link"));
    link.href = "/history";
    history.append(link);

    const grid = el("div", "lobby-grid");
    const left = el("div", "stack");
    left.append(hero, this.noticeBox, this.errorBox, create, gamesPanel);
    const right = el("div", "stack");
    right.append(peoplePanel, chatPanel, history);
    grid.append(left, right);
    root.append(grid);
  }

  async loadOptions() {
    try {
      this.variants = await getJson("/api/variants");
    } catch {
      this.variants = [{ name: "turbo", description: "", charging: true, claims: true }];
    }
    try {
      this.bots = await getJson("/api/bots");
    } catch {
      this.bots = ["random"];
    }
    try {
      this.levels = await getJson("/api/levels");
    } catch {
      this.levels = [];
    }
    this.variantSelect.innerHTML = "";
    for (const v of this.variants) {
      const o = el("option", null, variantLabel(v.name));
      o.value = v.name;
      this.variantSelect.append(o);
    }
    this.fillBotSelect();
    this.variantChanged();
  }

  // The bots a game can add: the levels first, each with its name, rating and cost (what a
  // player chooses by), then the named bots under "Other bots" (Turbo's duck, the shooter and
  // the research bots: styles and experiments a level does not stand for)
  fillBotSelect() {
    this.botSelect.innerHTML = "";
    const levelKeys = new Set(this.levels.map((lv) => lv.key));
    if (this.levels.length) {
      const group = el("optgroup");
      group.label = t("lobby.levels");
      for (const lv of this.levels) {
        const o = el("option", null, levelLabel(lv));
        o.value = lv.key;
        o.title = t("lobby.level.title", { spec: lv.spec, rating: fixed(lv.mu, 1), sigma: fixed(lv.sigma, 1), cost: costText(lv.cpu_ms) });
        group.append(o);
      }
      this.botSelect.append(group);
    }
    const others = this.bots.filter((b) => !levelKeys.has(b));
    const into = this.levels.length ? el("optgroup") : this.botSelect;
    if (this.levels.length) into.label = t("lobby.other_bots");
    for (const b of others) {
      const o = el("option", null, b);
      o.value = b;
      into.append(o);
    }
    if (into !== this.botSelect && others.length) this.botSelect.append(into);
    // the default: the level that is the old default's bot (heuristic), else that bot by name
    const plain = this.levels.find((lv) => lv.spec === "heuristic");
    if (plain) this.botSelect.value = plain.key;
    else if (this.bots.includes("heuristic")) this.botSelect.value = "heuristic";
  }

  variantInfo(name) {
    return this.variants.find((v) => v.name === name) || null;
  }

  variantChanged() {
    const info = this.variantInfo(this.variantSelect.value);
    this.rulesField.hidden = !(info && info.charging);
    this.variantHelp.textContent = info ? variantDescription(info) : "";
  }

  rulesProposal() {
    return this.rulesSelect.value || "classic";
  }

  async act(fn) {
    this.error = null;
    this.errorBox.hidden = true;
    try {
      return await fn();
    } catch (err) {
      this.error = errorText(err);
      this.errorBox.textContent = this.error;
      this.errorBox.hidden = false;
      return undefined;
    }
  }

  async createGame() {
    const variant = this.variantSelect.value || "turbo";
    const body = { rules: this.rulesProposal(), clock: Number(this.clockSelect.value) };
    if (variant !== "turbo") body.variant = variant;
    if (this.practiceBox.checked) body.practice = true; // unrated, only your bots, hints (the server deals)
    const id = await this.act(() => post("/lobby/new", body));
    if (typeof id === "string") {
      remember(id, { variant, rules: variant === "turbo" ? body.rules : null, clock: body.clock });
      const g = this.games.get(id) || { id, players: [this.me] };
      g.variant = variant;
      g.clock = body.clock;
      this.games.set(id, g);
      this.renderGames();
    }
  }

  // ---- the stream ----------------------------------------------------------------------------

  onEvent(ev) {
    switch (ev.type) {
      case "lobby_state": {
        this.people = new Set(ev.subscribers || []);
        const known = remembered();
        this.games = new Map();
        for (const [id, value] of Object.entries(ev.games || {})) {
          const players = Array.isArray(value) ? value : value.players || value.members || [];
          const g = { id, players: players.map(playerName) };
          if (!Array.isArray(value) && value.variant) g.variant = value.variant;
          else if (known[id]) g.variant = known[id].variant;
          this.games.set(id, g);
        }
        break;
      }
      case "join_lobby":
        this.people.add(eventName(ev));
        break;
      case "leave_lobby":
        this.people.delete(eventName(ev));
        break;
      case "new_game": {
        const known = remembered()[ev.id];
        const g = this.games.get(ev.id) || { id: ev.id, players: [] };
        if (!g.players.includes(eventName(ev))) g.players.push(eventName(ev));
        g.variant = ev.variant || g.variant || (known && known.variant);
        if (typeof ev.clock === "number") g.clock = ev.clock;
        this.games.set(ev.id, g);
        break;
      }
      case "join_game": {
        const g = this.games.get(ev.id) || { id: ev.id, players: [] };
        if (!g.players.includes(eventName(ev))) g.players.push(eventName(ev));
        this.games.set(ev.id, g);
        break;
      }
      case "leave_game": {
        const g = this.games.get(ev.id);
        if (g) {
          g.players = g.players.filter((p) => p !== eventName(ev));
          if (!g.players.length) this.games.delete(ev.id);
        }
        break;
      }
      case "finish_game":
        this.games.delete(ev.id);
        break;
      case "notice":
        this.noticeBox.textContent = String(ev.message || "");
        this.noticeBox.hidden = !ev.message;
        return;
      case "chat":
        this.chat.push(ev);
        if (this.chat.length > 200) this.chat.shift();
        break;
      default:
        return;
    }
    this.render();
  }

  render() {
    this.renderPeople();
    this.renderGames();
    this.renderChat();
  }

  renderPeople() {
    this.peopleList.innerHTML = "";
    for (const name of [...this.people].sort()) {
      const chip = el("li", `chip${name === this.me ? " me" : ""}`, name);
      this.peopleList.append(chip);
    }
  }

  renderGames() {
    const list = this.gamesList;
    // the list is drawn anew: a keyboard's focus on one of its buttons is found again after
    const active = list.contains(document.activeElement) ? document.activeElement : null;
    const row = active && active.closest("li[data-id]");
    const kept = row ? { id: row.dataset.id, action: active.dataset.action } : null;
    list.innerHTML = "";
    const games = [...this.games.values()];
    // mine first, then open ones, then running ones
    const rank = (g) => (g.players.includes(this.me) ? 0 : g.players.length < 4 ? 1 : 2);
    games.sort((a, b) => rank(a) - rank(b));
    if (!games.length) list.append(el("li", "empty-note", t("lobby.no_games")));
    for (const g of games) list.append(this.gameRow(g));
    if (kept) {
      const again = list.querySelector(`li[data-id="${CSS.escape(kept.id)}"]`);
      const target = again && (again.querySelector(`[data-action="${kept.action}"]`) || again.querySelector("a, button"));
      if (target) target.focus();
    }
  }

  gameRow(g) {
    const mine = g.players.includes(this.me);
    const started = g.players.length >= 4;
    const li = el("li", `game-row${mine ? " mine" : ""}${started ? " started" : ""}`);
    li.dataset.id = g.id;
    const info = el("div", "game-info");
    const label = g.variant ? variantLabel(g.variant) : t("lobby.game");
    const clock = g.clock ? ` \u00b7 ${t("lobby.game.clock", { seconds: g.clock })}` : "";
    const state = started ? t("lobby.game.playing") : t("lobby.game.open", { count: 4 - g.players.length });
    const title = el("div", "game-title", `${label}${clock} \u00b7 ${state}`);
    const chips = el("div", "game-players");
    for (const p of g.players) chips.append(el("span", `chip${p === this.me ? " me" : ""}`, p));
    for (let i = g.players.length; i < 4; i += 1) chips.append(el("span", "chip empty", t("lobby.open_seat")));
    info.append(title, chips);
    if (mine && !started) {
      // mixed tables: programs over Sessions (lobby_code) or Trend (lobbyCode) join with this code
      const code = el("div", "join-code", `${t("lobby.join_code")} `);
      code.title = t("lobby.join_code.title");
      code.append(el("code", null, g.id));
      info.append(code);
    }
    const actions = el("div", "game-actions");
    const btn = (text, cls, action, fn) => {
      const b = el("button", cls, text);
      b.type = "button";
      b.dataset.action = action;
      b.addEventListener("click", fn);
      return b;
    };
    const link = (text, cls, action) => {
      const a = el("a", cls, text);
      a.href = `/game#${encodeURIComponent(g.id)}`;
      a.dataset.action = action;
      return a;
    };
    if (started) {
      actions.append(mine ? link(t("lobby.open_table"), "btn primary", "open") : link(t("lobby.watch"), "btn", "watch"));
    } else if (mine) {
      actions.append(
        btn(t("lobby.add_bot"), "btn", "add-bot", () => this.act(() => post("/lobby/add_bot", { id: g.id, rules: this.rulesProposal(), algorithm: this.botSelect.value || "random" }))),
        btn(t("lobby.leave"), "btn danger", "leave", () => this.act(() => post("/lobby/leave", { id: g.id }))),
        link(t("lobby.open_table"), "btn", "open"),
      );
    } else {
      actions.append(btn(t("lobby.join"), "btn primary", "join", () => this.act(() => post("/lobby/join", { id: g.id, rules: this.rulesProposal() }))));
    }
    li.append(info, actions);
    return li;
  }

  renderChat() {
    this.chatLog.innerHTML = "";
    for (const { name, message } of this.chat.slice(-100)) {
      const li = el("li");
      li.append(el("b", null, name), document.createTextNode(` ${message}`));
      this.chatLog.append(li);
    }
    this.chatLog.scrollTop = this.chatLog.scrollHeight;
  }
}

async function main() {
  topbar("lobby");
  const me = await ensureName(document.getElementById("name-box"), t("lobby.name_intro"));
  const lobby = new Lobby(document.getElementById("lobby"), me);
  window.moonshotLobby = lobby;
  await lobby.loadOptions();
  lobby.render();
  const sub = new Subscription("/lobby/subscribe", {
    dedupe: false,
    onMessage: (ev) => lobby.onEvent(ev),
    onStatus: showConnection,
  });
  sub.start();
}

main();
