// The "your turn" signals of the table page, each one a preference (settings.js, all off by
// default): a short sound on your turn and when you take a trick (made with the Web Audio API:
// no audio files), the page title prefixed "● Your turn —" while a decision is yours (flashing
// while the tab is hidden), and a desktop notification on your turn while the page is hidden.
//
// It owns only these signals: it reads the folded state (state.js) and never changes the game.

import { t } from "./i18n.js";
import { onSettings, settings } from "./settings.js";

const MARK = "\u25cf ";

/** Whether a decision is the viewer's now: a play, a pass, a charge or an exposure to make. */
export function isMyDecision(state, me) {
  if (!me || !state || !state.replayDone || state.complete) return false;
  switch (state.phase) {
    case "passing":
      return !state.passDone[me];
    case "charging":
      return !state.chargeDone[me] && (!state.nextCharger || state.nextCharger === me);
    case "exposing":
      return !state.exposeDone[me];
    case "playing":
      return state.nextPlayer === me && !state.trickWinner;
    default:
      return false;
  }
}

let audio = null;

function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!audio) audio = new Ctx();
  if (audio.state === "suspended") audio.resume().catch(() => {});
  return audio;
}

/** Play `notes` ([frequency Hz, start s, length s]) as soft sine tones. */
export function tones(notes, volume = 0.12) {
  const ctx = context();
  if (!ctx) return false;
  const now = ctx.currentTime;
  for (const [freq, start, length] of notes) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = "sine";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, now + start);
    gain.gain.exponentialRampToValueAtTime(volume, now + start + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(now + start);
    osc.stop(now + start + length + 0.02);
  }
  return true;
}

export const SOUNDS = {
  turn: [
    [660, 0, 0.12],
    [880, 0.11, 0.16],
  ],
  trick: [[520, 0, 0.1]],
};

export class TurnSignals {
  /** `me`: () => the viewer's seat or null. */
  constructor(me) {
    this.me = me;
    this.mine = false; // whether the last state seen had a decision of the viewer's
    this.lastTrick = 0; // tricks seen finished (so each trick sounds once)
    this.flash = null;
    this.base = document.title;
    this.notice = null;
    document.addEventListener("visibilitychange", () => this.drawTitle());
    // a browser lets a page sound only after a gesture: the first click or key wakes the audio
    const unlock = () => {
      if (!settings().sound || !context()) return;
      window.removeEventListener("pointerdown", unlock);
      window.removeEventListener("keydown", unlock);
    };
    window.addEventListener("pointerdown", unlock);
    window.addEventListener("keydown", unlock);
    onSettings(() => this.drawTitle());
    window.moonshotSignals = this;
  }

  /** After each redraw of the table: signal a decision that just became the viewer's. */
  update(state) {
    const me = this.me();
    const mine = isMyDecision(state, me);
    const prefs = settings();
    if (mine && !this.mine) {
      if (prefs.sound) tones(SOUNDS.turn);
      if (prefs.notify && document.hidden) this.notify();
    }
    if (!mine && this.notice) {
      this.notice.close();
      this.notice = null;
    }
    this.mine = mine;
    const tricks = state.replayDone ? state.trickNo : 0;
    if (state.trickWinner && state.trickNo !== this.lastTrick && state.replayDone) {
      this.lastTrick = state.trickNo;
      if (prefs.sound && me && state.trickWinner === me) tones(SOUNDS.trick);
    } else if (tricks < this.lastTrick) {
      this.lastTrick = 0; // a new hand counts its tricks from 1 again
    }
    this.drawTitle();
  }

  notify() {
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
    try {
      this.notice = new Notification(t("signal.title", {}, "Your turn"), {
        body: t("signal.notify.body", { title: this.base }, "moonshot: {title}"),
        tag: "moonshot-turn",
      });
      this.notice.onclick = () => window.focus();
    } catch {
      this.notice = null; // some browsers only notify from a service worker
    }
  }

  /** The title: "● Your turn — <the page's title>" while a decision is the viewer's (with the
   * setting on), flashing every second while the tab is hidden; else the page's own title. */
  drawTitle() {
    if (!document.title.startsWith(MARK)) this.base = document.title;
    const on = this.mine && settings().title;
    if (!on) {
      this.stopFlash();
      if (document.title !== this.base) document.title = this.base;
      return;
    }
    const marked = `${MARK}${t("signal.title", {}, "Your turn")} \u2014 ${this.base}`;
    if (document.hidden) {
      if (!this.flash) {
        let shown = true;
        document.title = marked;
        this.flash = setInterval(() => {
          shown = !shown;
          document.title = shown ? marked : this.base;
        }, 1000);
      }
    } else {
      this.stopFlash();
      document.title = marked;
    }
  }

  stopFlash() {
    if (this.flash) clearInterval(this.flash);
    this.flash = null;
  }
}
