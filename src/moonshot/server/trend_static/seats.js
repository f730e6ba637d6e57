// The Trend node's seat page: set each seat to Dummy / Human / Empty, Start Game, follow the match.
// Its words come from the web app's catalogue (trend.*), in the browser's language or the one the
// EN / PL switch keeps, as every page of the web app.
import { formatNumber, has, languageSwitch, t } from "/static/js/i18n.js";
import { mountSettings } from "/static/js/settings.js"; // the web app's preferences (its table page uses them)

const KINDS = ["dummy", "human", "empty"];
const CHAIRS = { N: "north", E: "east", S: "south", W: "west" };
const AREAS = { N: "n", E: "e", S: "s", W: "w" }; // the felt's grid areas (seats.css)
const form = document.getElementById("seats");
const message = document.getElementById("message");
const startButton = document.getElementById("start");
let bots = ["random", "heuristic", "search"];
let levels = {}; // level:N -> {name, mu, ...} (GET /state's levels)
let edited = false; // the person changed a seat since the last Start Game
let last = null;

function seatBox(number) {
  return form.querySelector(`.seat[data-number="${number}"]`);
}

function renderSeat(seat) {
  const box = seatBox(seat.playerNumber);
  if (!box.dataset.built) {
    box.dataset.built = "1";
    const kinds = KINDS.map(
      (k) =>
        `<label><input type="radio" name="kind-${seat.playerNumber}" value="${k}"><span>${escapeHtml(t(`trend.kind.${k}`))}</span></label>`,
    ).join("");
    const n = seat.playerNumber;
    const options = bots.map((b) => `<option value="${b}">${escapeHtml(botLabel(b))}</option>`).join("");
    box.innerHTML = `
      <h3>${escapeHtml(t("trend.seat", { n }))} <small class="chair"></small></h3>
      <div class="kinds" role="radiogroup" aria-label="${escapeHtml(t("trend.seat", { n }))}">${kinds}</div>
      <select name="bot-${n}" aria-label="${escapeHtml(t("trend.bot_for", { n }))}">${options}</select>
      <p class="who"></p>`;
    box.addEventListener("change", (event) => {
      if (!event.target.matches("input[type=radio], select")) return; // the name box is not a setting
      edited = true;
      syncBotPicker(box);
    });
  }
  if (!edited) {
    box.querySelector(`input[value="${seat.kind}"]`).checked = true;
    box.querySelector("select").value = seat.bot;
  }
  syncBotPicker(box);
  // the felt is the table: a seat's box sits at its chair of this game (or the next, between
  // games), so the boxes move round as the players rotate and a box's place and label agree
  box.style.gridArea = AREAS[seat.chair];
  box.dataset.chair = seat.chair;
  box.querySelector(".chair").textContent = t(`a11y.seat.${CHAIRS[seat.chair]}`);
  const who = box.querySelector(".who");
  who.classList.toggle("ok", Boolean(seat.player) && seat.connected);
  // redraw only when something changed: a redraw would wipe a name being typed
  const signature = JSON.stringify([seat.kind, seat.bot, seat.player, seat.table, seat.join, edited]);
  if (who.dataset.signature === signature) return;
  who.dataset.signature = signature;
  if (seat.kind === "dummy") who.textContent = t("trend.who.dummy", { n: seat.playerNumber, bot: seat.bot });
  else if (seat.kind === "human") {
    who.innerHTML = seat.player
      ? `${escapeHtml(seat.player)}${seat.table ? ` · <a class="open-table" href="${seat.table}">${escapeHtml(t("trend.open_table"))}</a>` : ""}`
      : seat.join && !edited
        ? `<span class="sit"><input name="name-${seat.playerNumber}" placeholder="${escapeHtml(t("trend.your_name"))}" maxlength="40"
             aria-label="${escapeHtml(t("trend.your_name_for", { n: seat.playerNumber }))}" value="${escapeHtml(savedName())}">
           <button type="button" class="sit-button" data-number="${seat.playerNumber}">${escapeHtml(t("trend.sit"))}</button></span>`
        : escapeHtml(t("trend.waiting_person"));
    if (seat.table && sessionStorage.getItem("moonshot.trend.seat") === String(seat.playerNumber)) {
      if (sessionStorage.getItem("moonshot.trend.opened") !== seat.table) {
        sessionStorage.setItem("moonshot.trend.opened", seat.table);
        location.href = seat.table; // the person's game has started: to the table
      }
    }
  } else who.textContent = seat.player ? t("trend.joined", { name: seat.player }) : t("trend.waiting_ai", { n: seat.playerNumber });
}

function savedName() {
  for (const part of document.cookie.split(";")) {
    const [k, v] = part.trim().split("=");
    if (k === "name" && v) return decodeURIComponent(v);
  }
  return "";
}

async function sit(number) {
  const input = form.querySelector(`input[name="name-${number}"]`);
  const name = (input?.value || "").trim();
  if (!name) {
    message.textContent = t("trend.pick_name");
    input?.focus();
    return;
  }
  document.cookie = `name=${encodeURIComponent(name)}; path=/; max-age=31536000; SameSite=Strict`;
  const res = await fetch("/api/human", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ playerNumber: number }),
  });
  const body = await res.json();
  if (!res.ok) {
    message.textContent = refusalText(body);
    return;
  }
  sessionStorage.setItem("moonshot.trend.seat", String(number));
  message.textContent = t("trend.sat", { n: number });
  render(body);
}

form.addEventListener("click", (event) => {
  const button = event.target.closest(".sit-button");
  if (button) sit(Number(button.dataset.number));
});

// a refusal in this page's language by its code (error.<code>), else the node's English
function refusalText(body) {
  if (body && body.code && has(`error.${body.code}`)) return t(`error.${body.code}`, body.args || {});
  return (body && body.error) || "";
}

function syncBotPicker(box) {
  const kind = box.querySelector("input:checked")?.value;
  box.querySelector("select").hidden = kind !== "dummy";
}

// a level shows its name and rating (the node's `levels`), any other bot its name
function botLabel(b) {
  const lv = levels[b];
  return lv ? t("trend.level", { level: lv.level, name: lv.name, rating: formatNumber(lv.mu, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) }) : b;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(state) {
  last = state;
  bots = state.bots;
  levels = Object.fromEntries((state.levels || []).map((lv) => [lv.key, lv]));
  state.seats.forEach(renderSeat);
  const status = document.getElementById("status");
  const label = t(`trend.state.${state.state}`, { game: state.game, played: state.game - 1, games: state.gamesPerMatch });
  status.textContent = t("trend.status", { match: state.match, state: label });
  status.className = `pill ${state.state}`;
  startButton.disabled = state.state === "playing" || state.state === "between";
  document.getElementById("ws").textContent = state.websocket;
  const line = document.getElementById("match-line");
  if (state.scores) line.textContent = t("trend.scores_now", { scores: state.scores.join(" / ") });
  else if (state.state === "over") line.textContent = state.autoCycle ? t("trend.match_over") : t("trend.match_over_change");
  else line.textContent = state.results.length ? "" : t("trend.no_game_yet");
  const watch = document.getElementById("watch");
  watch.hidden = !state.watch;
  if (state.watch) watch.href = state.watch;
  const body = document.querySelector("#results tbody");
  body.innerHTML = state.results
    .map((r) => {
      const cells = r.players
        .map((p, i) => `<td class="${r.winners.includes(p) ? "win" : ""}">${escapeHtml(p)} ${r.scores[i]}</td>`)
        .join("");
      return `<tr><td>${r.game}</td>${cells}</tr>`;
    })
    .join("");
  document.body.dataset.state = state.state;
}

async function refresh() {
  try {
    const res = await fetch("/api/state", { cache: "no-store" });
    render(await res.json());
  } catch {
    document.getElementById("status").textContent = t("trend.unreachable");
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const seats = [1, 2, 3, 4].map((n) => {
    const box = seatBox(n);
    return { kind: box.querySelector("input:checked")?.value || "empty", bot: box.querySelector("select").value };
  });
  const res = await fetch("/api/seats", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ seats }),
  });
  const body = await res.json();
  message.textContent = res.ok ? t("trend.seats_set") : refusalText(body);
  edited = false;
  if (body.seats) render(body);
});

refresh();
setInterval(refresh, 1000);

const barEnd = document.querySelector("header.bar .bar-end");
barEnd.append(languageSwitch());
mountSettings(barEnd);
