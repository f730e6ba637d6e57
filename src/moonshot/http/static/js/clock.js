// The clock on the table page: a countdown for the seat to act, and the "the bot is playing for
// you" banner with its "Take my seat back" button.
//
// The server sends `{type: "clock", seconds, running: {seat: remaining}, away: [seat]}` in the
// game's stream whenever its clocks change (moonshot.runtime.clock). Remaining seconds, not a
// time of day: each is added to this browser's own clock when the message arrives, so a clock
// that is off by minutes still counts down right.

import { el, errorText } from "./common.js";
import { t } from "./i18n.js";

/** The clock choices of a new game in the lobby: [seconds, English label] (the lobby shows the
 * catalogue's clock.option.<seconds>). A rated game has one (the server refuses "0" for it,
 * saying so); a practice game may have none. */
export const CLOCKS = [
  ["15", "15 s a move"],
  ["30", "30 s a move"],
  ["60", "1 min a move"],
  ["120", "2 min a move"],
  ["0", "No clock (unrated games)"],
];

export class ClockView {
  /**
   * `root`: where the bar and the banner go. options:
   *   me: () => the viewer's seat ("north" ...) or null
   *   name: (seat) => how to call a seat's player
   *   back: async () => take the viewer's seat back (POST /game/back)
   */
  constructor(root, options) {
    this.me = options.me;
    this.name = options.name;
    this.back = options.back;
    this.deadlines = new Map(); // seat -> performance.now() at which its time runs out
    this.seconds = null;
    this.away = [];
    this.timer = null;
    this.box = el("div", "clock-box");
    this.box.id = "clock";
    this.bar = el("div", "clock-bar");
    this.bar.setAttribute("role", "timer");
    this.bar.setAttribute("aria-live", "off");
    this.bar.hidden = true;
    this.banner = el("div", "clock-banner");
    this.banner.id = "clock-away";
    this.banner.setAttribute("role", "status");
    this.banner.hidden = true;
    this.bannerText = el("span", null, t("clock.away"));
    this.backButton = el("button", "btn primary small", t("clock.take_back"));
    this.backButton.type = "button";
    this.backButton.id = "take-seat-back";
    this.backButton.addEventListener("click", () => this.takeBack());
    this.banner.append(this.bannerText, this.backButton);
    this.box.append(this.banner, this.bar);
    root.append(this.box);
  }

  /** A `clock` message from the stream. */
  update(msg) {
    const now = performance.now();
    this.seconds = msg.seconds ?? null;
    this.deadlines = new Map(Object.entries(msg.running || {}).map(([seat, left]) => [seat, now + left * 1000]));
    this.away = msg.away || [];
    this.render();
    if (this.deadlines.size && !this.timer) this.timer = setInterval(() => this.render(), 250);
    if (!this.deadlines.size) this.stopTimer();
  }

  /** The game is over: no clock runs. */
  stop() {
    this.deadlines.clear();
    this.away = [];
    this.stopTimer();
    this.render();
  }

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Seconds `seat` has left now (null: no clock runs for it). */
  remaining(seat) {
    const due = this.deadlines.get(seat);
    return due === undefined ? null : Math.max(0, (due - performance.now()) / 1000);
  }

  async takeBack() {
    this.backButton.disabled = true;
    try {
      await this.back();
    } catch (err) {
      this.bannerText.textContent = t("clock.take_back_failed", { reason: errorText(err) });
    } finally {
      this.backButton.disabled = false;
    }
  }

  render() {
    const me = this.me();
    const mine = me !== null && this.away.includes(me);
    this.banner.hidden = !mine;
    document.body.dataset.away = String(mine);
    const seats = [...this.deadlines.keys()];
    if (!seats.length) {
      this.bar.hidden = true;
      this.bar.textContent = "";
      return;
    }
    // the viewer's own clock first, then the others'
    seats.sort((a, b) => (a === me ? -1 : b === me ? 1 : 0));
    this.bar.hidden = false;
    this.bar.textContent = "";
    for (const seat of seats) {
      const left = this.remaining(seat);
      const whole = Math.ceil(left);
      const who = seat === me ? t("clock.your_move") : t("clock.to_move", { name: this.name(seat) });
      const item = el("span", `clock-item${seat === me ? " mine" : ""}${whole <= 5 ? " urgent" : ""}`);
      item.dataset.seat = seat;
      item.dataset.remaining = String(whole);
      item.append(el("span", "clock-who", `${who}: `), el("strong", "clock-left", t("clock.seconds", { seconds: whole })));
      if (this.seconds) {
        const meter = el("span", "clock-meter");
        const fill = el("span", "clock-fill");
        fill.style.width = `${Math.min(100, (100 * left) / this.seconds)}%`;
        meter.append(fill);
        item.append(meter);
      }
      this.bar.append(item);
    }
  }
}
