// The table page, /game#<id>: subscribes to the game's stream and plays through Turbo's API.
//
// Events that arrive as replay (before `end_replay`) are folded at once; live events go through
// a short queue so a person can see each card land and each finished trick before the next one
// (the pace is a setting; "instant" turns it off).

import { Subscription, getJson, post } from "./api.js";
import { backHomeText, ensureName, errorText, homeKey, showConnection, site, topbar } from "./common.js";
import { t } from "./i18n.js";
import { variantLabel } from "./labels.js";
import { applyEvent, newState, seatOf } from "./state.js";
import { Table } from "./table.js";
import { ClockView } from "./clock.js";
import { RematchView } from "./rematch.js";
import { HintButton } from "./hint.js";
import { Announcer } from "./a11y.js";
import { TurnSignals } from "./sound.js";

const PACES = {
  normal: { play: 350, trick: 1100 },
  fast: { play: 120, trick: 450 },
  instant: { play: 0, trick: 0 },
};

function pace() {
  return PACES[localStorage.getItem("moonshot.pace")] || PACES.normal;
}

async function variantInfo(name) {
  try {
    const list = await getJson("/api/variants");
    return list.find((v) => v.name === name) || null;
  } catch {
    return null;
  }
}

async function main() {
  topbar("game");
  const here = site();
  const gameId = decodeURIComponent(location.hash.slice(1));
  window.addEventListener("hashchange", () => location.reload());
  const root = document.getElementById("table");
  const nameBox = document.getElementById("name-box");
  if (!gameId) {
    const panel = document.createElement("div");
    panel.className = "panel";
    const a = document.createElement("a");
    a.href = here.home;
    a.textContent = t(`site.pick.${homeKey(here)}`, {}, `Pick one in ${here.homeText}.`);
    panel.append(document.createTextNode(`${t("game.no_game")} `), a);
    root.replaceChildren(panel);
    return;
  }
  const myName = await ensureName(nameBox, t("game.name_intro"));
  const gameBody = (extra) => ({ id: gameId, ...extra });
  const actions = {
    pass: (cards) => post("/game/pass", gameBody({ cards })),
    charge: (cards) => post("/game/charge", gameBody({ cards })),
    expose: (cards) => post("/game/expose", gameBody({ cards })),
    play: (card) => post("/game/play", gameBody({ card })),
    claim: () => post("/game/claim", gameBody()),
    acceptClaim: (claimer) => post("/game/accept_claim", gameBody({ claimer })),
    rejectClaim: (claimer) => post("/game/reject_claim", gameBody({ claimer })),
    chat: (message) => post("/game/chat", gameBody({ message })),
  };
  let table = null;
  const rematch = new RematchView({ gameId, me: () => table && table.me, myName });
  table = new Table(root, {
    me: null,
    actions,
    gameOverExtra: () => rematch.node(),
    autoScoreSheet: true,
    links: [
      { href: here.home, text: backHomeText(here) },
      ...(here.replay ? [{ href: `/history#${encodeURIComponent(gameId)}`, text: t("game.replay_this") }] : []),
    ],
  });
  window.moonshotTable = table; // for the browser tests and the curious
  const clockRoot = document.createElement("div");
  root.before(clockRoot);
  const clock = new ClockView(clockRoot, {
    me: () => table.me,
    name: (seat) => table.name(seat),
    back: () => post("/game/back", gameBody()),
  });
  const hint = new HintButton(table, gameId);
  const announcer = new Announcer(() => table.me); // screen-reader mode (a setting)
  const signals = new TurnSignals(() => table.me); // sound, title, notification (settings)

  const state = newState();
  window.moonshotState = state;
  const queue = [];
  let pumping = false;
  let variantKnown = false;
  let drawPending = false;

  const draw = () => {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      table.update(state);
      hint.refresh(state);
      announcer.turn(state);
      signals.update(state);
      document.body.dataset.phase = state.phase;
      document.body.dataset.replayDone = String(state.replayDone);
    });
  };

  const onSit = async () => {
    const seat = seatOf(state, myName);
    table.setMe(seat);
    document.body.dataset.seat = seat || "spectator";
    if (!variantKnown) {
      variantKnown = true;
      const info = await variantInfo(state.variant);
      table.setOptions({
        claims: info ? Boolean(info.claims) : state.variant === "turbo",
        chargeable: info && Array.isArray(info.charging) ? info.charging : undefined,
        highestWins: info && "highest_wins" in info ? Boolean(info.highest_wins) : state.variant === "trend",
      });
      announcer.setScoring(info && info.scoring);
      const label = state.variant === "turbo" ? `Turbo (${t(`rules.${state.rules}`, {}, state.rules)})` : variantLabel(state.variant);
      document.title = `${label} \u00b7 moonshot`;
      draw();
    }
  };

  const apply = (ev) => {
    applyEvent(state, ev);
    announcer.event(ev, state); // live events only (it waits for the replay's end)
    if (ev.type === "sit") {
      onSit();
      hint.fromSit(ev);
    }
  };

  const pump = async () => {
    if (pumping) return;
    pumping = true;
    while (queue.length) {
      const ev = queue.shift();
      apply(ev);
      draw();
      const p = pace();
      let wait = 0;
      if (ev.type === "end_trick") wait = p.trick;
      else if (ev.type === "play" && ev.seat !== table.me) wait = p.play;
      // the pause holds even when nothing else has come yet: the next event waits its turn
      if (wait) await new Promise((r) => setTimeout(r, wait));
    }
    pumping = false;
  };

  const received = []; // every event this page was given, once (the browser tests read it)
  window.moonshotEvents = received;
  const sub = new Subscription(`/game/subscribe/${encodeURIComponent(gameId)}`, {
    onMessage: (ev, id) => {
      if (ev.type === "clock") {
        clock.update(ev); // at once: its remaining seconds count from now (no id: not a game event)
        return;
      }
      received.push({ id, event: ev });
      if (ev.type === "game_complete") {
        clock.stop();
        rematch.gameOver();
      }
      if (!state.replayDone && ev.type !== "end_replay") {
        apply(ev);
        draw();
        return;
      }
      if (ev.type === "end_replay") {
        apply(ev);
        draw();
        return;
      }
      queue.push(ev);
      pump();
    },
    onStatus: showConnection,
    onFatal: (err) => {
      const box = document.getElementById("fatal");
      box.hidden = false;
      box.textContent = `${errorText(err)} `;
      const a = document.createElement("a");
      a.href = here.home;
      a.textContent = backHomeText(here);
      box.append(a);
    },
    isFinished: () => state.complete,
    live: (text) => text.startsWith('{"type":"clock"'), // the clocks as they stand: never deduplicated
  });
  window.moonshotSubscription = sub;
  sub.start();
  draw();

  const paceSelect = document.getElementById("pace");
  if (paceSelect) {
    paceSelect.value = localStorage.getItem("moonshot.pace") || "normal";
    paceSelect.addEventListener("change", () => localStorage.setItem("moonshot.pace", paceSelect.value));
  }
}

main();
