// The table: one component for playing, watching and replaying a game.
//
// `new Table(root, options)` draws into `root`; `table.update(state)` redraws it from a state
// folded by state.js. The component never talks to the server itself: what the person does goes
// out through `options.actions` (pass, charge, expose, play, claim, acceptClaim, rejectClaim,
// chat), each an async function that rejects with an Error whose message is shown. Without
// actions (spectators, the replay viewer) nothing is clickable. So any transport (Turbo's HTTP
// API today, a Trend "Human" seat later) can drive it.

import { cardBack, cardFace, cardName, cardText, cardsText, sortCards } from "./cards.js";
import { SEATS, SEAT_LETTER, TURBO_CHARGEABLE, winners } from "./state.js";
import { t } from "./i18n.js";
import { ApiError } from "./api.js";
import { errorText } from "./common.js";
import { focusMemo, overlayClosed, overlayDrawn, restoreFocus } from "./a11y.js";

const POSITIONS = ["bottom", "left", "top", "right"]; // clockwise from the viewer
const REMOTE_PROTOCOLS = new Set(["trend", "sessions", "kierki"]); // `sit`'s algorithm for a remote program
/** Where a hand's cards are passed, in words ("to the left"). */
function passWord(pass) {
  return t(`pass.to.${pass}`, {}, pass || "");
}

/** What a hand's deal says about passing, in a line ("pass to the left", "no passing: a hold hand"). */
function passLine(pass) {
  return t(`pass.line.${pass}`, {}, pass || "");
}

/** The hand being played, from its deal on: its number and its contract (Kierki's deal type) or its pass. */
export function dealLine(state) {
  if (!state.handNo) return "";
  if (state.kindName) return t("table.hand_kind", { hand: state.handNo, kind: state.kindName });
  return state.pass ? `${t("table.hand", { hand: state.handNo })} \u00b7 ${passLine(state.pass)}` : t("table.hand", { hand: state.handNo });
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function button(label, cls, onClick) {
  const b = el("button", cls, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** The viewer's seat at the bottom, the others clockwise: {bottom, left, top, right} -> seat. */
export function seatPositions(bottomSeat) {
  const start = SEATS.indexOf(bottomSeat || "south");
  const map = {};
  POSITIONS.forEach((pos, i) => {
    map[pos] = SEATS[(start + i) % 4];
  });
  return map;
}

export class Table {
  /**
   * options:
   *   me: the viewer's seat, or null for a spectator (who sees every hand)
   *   actions: {pass, charge, expose, play, claim, acceptClaim, rejectClaim, chat} or null
   *   chargeable: cards that may be charged (Turbo's QS AH JD TC); claims: whether claims exist
   *   highestWins: Trend-style scores (negative, highest total wins)
   *   autoScoreSheet: open the score sheet when a hand ends (live play)
   *   links: extra links for the game-over summary [{href, text}]
   *   gameOverExtra: () => a node shown in the game-over summary (the rematch), or null
   */
  constructor(root, options = {}) {
    this.root = root;
    this.me = options.me ?? null;
    this.actions = options.actions ?? null;
    this.chargeable = options.chargeable ?? TURBO_CHARGEABLE;
    this.claimsEnabled = options.claims ?? true;
    this.highestWins = options.highestWins ?? false;
    this.autoScoreSheet = options.autoScoreSheet ?? false;
    this.links = options.links ?? [];
    this.gameOverExtra = options.gameOverExtra ?? null; // () => a node for the game-over view (rematch.js)
    this.selected = new Set();
    this.selectKey = null; // the decision the selection belongs to
    this.busy = false;
    this.keyboard = false; // the person plays by keyboard: keep a card focused for them
    this.error = null;
    this.sheetShownFor = 0;
    this.sheetHand = null;
    this.overlay = null; // "scores" | "last" | null
    this.gameOverDismissed = false;
    this.state = null;
    this.build();
  }

  setMe(seat) {
    this.me = seat;
  }

  setOptions(options) {
    Object.assign(this, {
      chargeable: options.chargeable ?? this.chargeable,
      claimsEnabled: options.claims ?? this.claimsEnabled,
      highestWins: options.highestWins ?? this.highestWins,
    });
  }

  get interactive() {
    return Boolean(this.me && this.actions);
  }

  build() {
    this.root.classList.add("table-root");
    this.root.innerHTML = "";
    this.felt = el("div", "felt");
    this.seatNodes = {};
    for (const pos of ["top", "left", "right", "bottom"]) {
      const area = el("section", `seat-area pos-${pos}`);
      area.dataset.pos = pos;
      const plate = el("div", "plate");
      const hand = el("div", `other-hand ${pos === "left" || pos === "right" ? "vertical" : "horizontal"}`);
      hand.setAttribute("role", "img"); // one picture of the hand, its label says the cards or how many
      area.append(plate, hand);
      this.felt.append(area);
      this.seatNodes[pos] = { area, plate, hand };
    }
    this.center = el("div", "trick-area");
    this.slots = {};
    for (const pos of POSITIONS) {
      const slot = el("div", `trick-slot slot-${pos}`);
      this.slots[pos] = slot;
      this.center.append(slot);
    }
    this.centerInfo = el("div", "center-info");
    this.center.append(this.centerInfo);
    this.felt.append(this.center);

    this.handBox = el("div", "my-hand");
    this.handBox.setAttribute("role", "group");
    this.handBox.setAttribute("aria-label", t("table.your_hand"));
    this.handBox.addEventListener("keydown", (e) => this.onHandKey(e));
    this.handBox.addEventListener("pointerdown", () => {
      this.keyboard = false;
    });

    this.actionBar = el("div", "action-bar");
    this.actionBar.setAttribute("aria-live", "polite");
    this.claimBox = el("div", "claims");

    this.side = el("aside", "side-panel");
    this.scoreBox = el("div", "scoreboard");
    this.tools = el("div", "tools");
    this.lastTrickButton = button(t("table.last_trick"), "btn small", () => this.toggleOverlay("last"));
    this.sheetButton = button(t("table.score_sheet"), "btn small", () => this.toggleOverlay("scores"));
    this.tools.append(this.lastTrickButton, this.sheetButton);
    this.noticeBox = el("ul", "notices");
    this.chatBox = el("div", "chat");
    this.chatLog = el("ul", "chat-log");
    this.chatForm = el("form", "chat-form");
    this.chatInput = el("input");
    this.chatInput.placeholder = t("table.chat.placeholder");
    this.chatInput.maxLength = 500;
    this.chatInput.setAttribute("aria-label", t("table.chat.label"));
    this.chatForm.append(this.chatInput, Object.assign(el("button", "btn small", t("chat.send")), { type: "submit" }));
    this.chatForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.sendChat();
    });
    this.chatBox.append(el("h3", null, t("table.chat")), this.chatLog, this.chatForm);
    this.dealBox = el("div", "deal-info"); // the hand under way and its contract, from the deal on
    this.dealBox.setAttribute("aria-live", "polite");
    this.side.append(this.dealBox, this.scoreBox, this.tools, this.noticeBox, this.chatBox);

    this.overlayBox = el("div", "overlay hidden");
    this.overlayBox.addEventListener("click", (e) => {
      if (e.target === this.overlayBox) this.closeOverlay();
    });

    this.seatNodes.bottom.area.append(this.handBox);
    const main = el("div", "table-main");
    main.append(this.felt, this.claimBox, this.actionBar);
    this.root.append(main, this.side, this.overlayBox);

    document.addEventListener("keydown", (e) => this.onGlobalKey(e));
  }

  // ---- drawing -------------------------------------------------------------------------------

  update(state) {
    this.state = state;
    const key = `${state.handNo}:${state.phase}:${state.nextCharger}:${state.passDone[this.me] ?? ""}:${state.chargeDone[this.me] ?? ""}`;
    if (key !== this.selectKey) {
      this.selectKey = key;
      this.selected.clear();
    }
    const focus = focusMemo(this.root); // what has the keyboard focus: found again after the redraw
    this.positions = seatPositions(this.me);
    this.root.classList.toggle("spectating", !this.me);
    for (const pos of ["top", "left", "right", "bottom"]) this.drawSeat(pos, state);
    this.drawTrick(state);
    this.drawHand(state);
    this.drawActions(state);
    this.drawClaims(state);
    this.drawSide(state);
    this.sheetShownFor = Math.max(this.sheetShownFor, state.handsAtReplay);
    if (this.autoScoreSheet && state.replayDone && state.handScores.length > this.sheetShownFor && !state.complete) {
      this.sheetShownFor = state.handScores.length;
      this.overlay = "scores";
      this.sheetHand = state.handScores.length; // opened by the end of this hand
    }
    if (state.complete && !this.gameOverDismissed) this.overlay = "over";
    if (!state.complete && this.overlay === "over") this.overlay = null;
    this.drawOverlay(state);
    restoreFocus(this, focus, this.cardMode(state)); // a11y.js: and a playable card on a keyboard player's turn
  }

  name(seat) {
    const p = this.state && this.state.players[seat];
    return p ? p.name : seat;
  }

  youOr(seat) {
    return seat === this.me ? t("table.you") : this.name(seat);
  }

  visibleHand(state, seat) {
    if (state.hands[seat].length || !state.started) return sortCards(state.hands[seat]);
    if (state.claims[seat]) return sortCards(state.claims[seat].hand);
    return null; // hidden: draw backs
  }

  turnSeat(state) {
    if (state.phase === "playing" && state.nextPlayer) return state.nextPlayer;
    if (state.phase === "charging" && state.nextCharger) return state.nextCharger;
    return null;
  }

  waitingOn(state, seat) {
    if (state.phase === "passing") return !state.passDone[seat];
    if (state.phase === "charging") return state.nextCharger ? state.nextCharger === seat : !state.chargeDone[seat];
    if (state.phase === "exposing") return !state.exposeDone[seat];
    return this.turnSeat(state) === seat;
  }

  drawSeat(pos, state) {
    const seat = this.positions[pos];
    const { area, plate, hand } = this.seatNodes[pos];
    area.dataset.seat = seat;
    area.classList.toggle("turn", this.turnSeat(state) === seat);
    area.classList.toggle("waiting", state.phase !== "playing" && this.waitingOn(state, seat));
    plate.innerHTML = "";
    const player = state.players[seat];
    const title = el("div", "plate-name");
    title.append(el("span", "seat-letter", SEAT_LETTER[seat]));
    title.append(el("span", "player-name", player ? player.name : "—"));
    if (seat === this.me) title.append(el("span", "tag you", t("table.you_tag")));
    if (player && player.type === "bot") {
      // a program that plays over one of the protocols (a Trend AI, a Sessions client) is not one
      // of the server's bots: its "algorithm" is its protocol
      const alg = player.algorithm || "bot";
      title.title = REMOTE_PROTOCOLS.has(alg) ? t("table.remote_player", { protocol: alg }) : t("table.bot", { algorithm: alg });
    }
    plate.append(title);
    const stats = el("div", "plate-stats");
    const total = el("span", "total", String(state.totals[seat]));
    total.title = t("table.total_score");
    stats.append(total);
    if (state.handNo) {
      const tricks = el("span", "tricks", t("table.tricks", { count: state.tricksWon[seat] }));
      stats.append(tricks);
    }
    plate.append(stats);
    const badges = el("div", "badges");
    for (const card of state.charged[seat]) {
      const b = el("span", `badge charged ${card[1] === "H" || card[1] === "D" ? "red" : ""}`, cardText(card));
      b.title = t("table.charged", { card: cardName(card) });
      badges.append(b);
    }
    if (state.blindCharged[seat]) badges.append(el("span", "badge charged", t("table.blind", { count: state.blindCharged[seat] })));
    if (state.exposed[seat] && state.exposed[seat].length) {
      for (const card of state.exposed[seat]) badges.append(el("span", "badge exposed red", t("table.exposed", { card: cardText(card) })));
    }
    if (state.claims[seat]) badges.append(el("span", "badge claim", t("table.badge.claims")));
    if (state.phase === "passing" && state.passDone[seat]) badges.append(el("span", "badge done", t("table.badge.passed")));
    if (state.phase === "exposing" && state.exposeDone[seat] && !state.exposed[seat]) badges.append(el("span", "badge done", t("table.badge.done")));
    if (state.phase === "charging" && state.chargeDone[seat]) badges.append(el("span", "badge done", t("table.badge.done")));
    if (badges.childElementCount) plate.append(badges);

    hand.innerHTML = "";
    if (pos === "bottom") {
      hand.hidden = true;
      return;
    }
    hand.hidden = false;
    const cards = this.visibleHand(state, seat);
    hand.classList.toggle("revealed", Boolean(cards && cards.length && seat !== this.me));
    if (cards) {
      for (const card of cards) hand.append(wrap(cardFace(card, { small: true })));
    } else {
      for (let i = 0; i < state.counts[seat]; i += 1) hand.append(wrap(cardBack({ small: true })));
    }
    hand.setAttribute("aria-label", `${this.name(seat)}: ${cards ? cardsText(cards) : t("table.cards", { count: state.counts[seat] })}`);
  }

  drawTrick(state) {
    for (const pos of POSITIONS) this.slots[pos].innerHTML = "";
    const bySeat = {};
    for (const { seat, card } of state.trick) {
      const pos = Object.keys(this.positions).find((p) => this.positions[p] === seat);
      const face = cardFace(card);
      face.classList.add("played");
      if ((bySeat[seat] = (bySeat[seat] || 0) + 1) > 1) face.classList.add("second");
      this.slots[pos].append(face);
    }
    this.center.classList.toggle("complete", Boolean(state.trickWinner));
    this.centerInfo.innerHTML = "";
    const info = this.centerInfo;
    if (!state.started) {
      info.append(el("div", "center-title", t("table.waiting_players")));
      info.append(el("div", "center-sub", t("table.waiting_players.sub")));
      return;
    }
    if (state.complete) {
      info.append(el("div", "center-title", t("table.game_over")));
      return;
    }
    const turn = this.turnSeat(state);
    if (turn && state.phase === "playing" && !state.trickWinner) {
      // an empty place at the next player's side of the trick says whose turn it is
      const pos = Object.keys(this.positions).find((p) => this.positions[p] === turn);
      const ghost = el("div", `card ghost${bySeat[turn] ? " second" : ""}`);
      ghost.append(el("span", "ghost-text", turn === this.me ? t("table.your_turn") : this.name(turn)));
      this.slots[pos].append(ghost);
    }
    if (state.trickWinner && state.trick.length) {
      info.append(el("div", "center-title", state.trickWinner === this.me ? t("table.you_take_trick") : t("table.takes_trick", { name: this.name(state.trickWinner) })));
      return;
    }
    if (state.trick.length || state.phase === "playing") return;
    const title = state.kindName ? t("table.hand_kind", { hand: state.handNo, kind: state.kindName }) : t("table.hand", { hand: state.handNo });
    info.append(el("div", "center-title", title));
    if (state.pass) info.append(el("div", "center-sub", passLine(state.pass)));
    if (turn) info.append(this.arrow(turn));
  }

  arrow(seat) {
    const pos = Object.keys(this.positions).find((p) => this.positions[p] === seat);
    const node = el("div", `turn-arrow to-${pos}`);
    node.append(el("span", "arrow-glyph", "\u2794"), el("span", "arrow-text", seat === this.me ? t("table.your_turn") : `${this.name(seat)}`));
    return node;
  }

  myCards(state) {
    const seat = this.positions.bottom;
    return sortCards(state.hands[seat]);
  }

  /** What a click on one of my cards does now: "play", "select", or null. */
  cardMode(state) {
    if (!this.interactive || this.busy || state.complete) return null;
    const me = this.me;
    if (state.phase === "passing" && !state.passDone[me]) return "select-pass";
    if (state.phase === "charging" && !state.chargeDone[me] && (!state.nextCharger || state.nextCharger === me)) return "select-charge";
    if (state.phase === "playing" && state.nextPlayer === me && !state.trickWinner) return "play";
    return null;
  }

  drawHand(state) {
    const box = this.handBox;
    box.innerHTML = "";
    const seat = this.positions.bottom;
    const cards = this.myCards(state);
    const mode = this.cardMode(state);
    box.dataset.mode = mode || "";
    box.classList.toggle("spectator-hand", !this.me);
    if (!this.me) box.append(el("div", "hand-owner", t("table.hand_of", { name: this.name(seat) })));
    const row = el("div", "hand-row");
    const received = new Set(state.passReceived[seat] || []);
    const legal = new Set(state.legalPlays);
    for (const card of cards) {
      const face = cardFace(card, { interactive: Boolean(this.me) });
      if (received.has(card) && ["passing", "charging", "exposing"].includes(state.phase)) face.classList.add("received");
      if (state.charged[seat].includes(card)) face.classList.add("charged");
      if (this.me) {
        let enabled = false;
        if (mode === "play") {
          enabled = legal.has(card);
          face.classList.add(enabled ? "legal" : "dimmed");
        } else if (mode === "select-pass") {
          enabled = true;
        } else if (mode === "select-charge") {
          enabled = this.chargeable.includes(card) && !state.charged[seat].includes(card);
          face.classList.add(enabled ? "legal" : "dimmed");
        }
        face.disabled = !enabled;
        if (this.selected.has(card)) face.classList.add("selected");
        face.setAttribute("aria-pressed", this.selected.has(card) ? "true" : "false");
        face.addEventListener("click", () => this.onCard(card));
      }
      row.append(wrap(face));
    }
    if (!this.me && !cards.length && state.started) {
      // a spectator of a running game sees no hand (only what is public): backs, or a claimer's shown hand
      const shown = this.visibleHand(state, seat);
      if (shown) for (const card of shown) row.append(wrap(cardFace(card, { interactive: false })));
      else for (let i = 0; i < state.counts[seat]; i += 1) row.append(wrap(cardBack()));
    }
    if (!cards.length && state.started && !state.complete && this.me) row.append(el("div", "empty-hand", t("table.no_cards")));
    box.append(row);
  }

  drawActions(state) {
    const bar = this.actionBar;
    bar.innerHTML = "";
    const status = el("div", "status");
    const buttons = el("div", "buttons");
    bar.append(status, buttons);
    if (this.error) {
      const err = el("div", "error", this.error);
      err.setAttribute("role", "alert");
      bar.prepend(err);
    }
    const me = this.me;
    if (!state.started) {
      status.textContent = t("table.waiting_start");
      return;
    }
    if (state.complete) {
      status.textContent = t("table.over");
      buttons.append(button(t("table.final_scores"), "btn", () => this.openOverlay("over")));
      return;
    }
    if (!me) {
      status.textContent = this.spectatorStatus(state);
      return;
    }
    const mode = this.cardMode(state);
    if (mode === "select-pass") {
      const n = this.selected.size;
      status.textContent = t("table.choose_pass", { direction: passWord(state.pass), n });
      const go = button(t("table.pass_cards"), "btn primary", () => this.submitPass());
      go.disabled = n !== 3;
      go.dataset.action = "pass";
      buttons.append(go);
    } else if (mode === "select-charge") {
      const n = this.selected.size;
      const mine = this.myCards(state).filter((c) => this.chargeable.includes(c) && !state.charged[me].includes(c));
      status.textContent = mine.length
        ? t("table.charge_prompt", { cards: mine.map(cardText).join(" ") })
        : t("table.nothing_to_charge");
      const go = button(n ? t("table.charge_cards", { cards: [...this.selected].map(cardText).join(" ") }) : t("table.charge"), "btn primary", () => this.submitCharge([...this.selected]));
      go.disabled = n === 0;
      go.dataset.action = "charge";
      const none = button(t("table.no_charge"), "btn", () => this.submitCharge([]));
      none.dataset.action = "no-charge";
      buttons.append(go, none);
    } else if (state.phase === "exposing" && !state.exposeDone[me] && !this.busy) {
      status.textContent = t("table.expose_prompt", { card: cardText("AH") });
      const yes = button(t("table.expose", { card: cardText("AH") }), "btn primary", () => this.submitExpose(["AH"]));
      yes.dataset.action = "expose";
      const no = button(t("table.dont_expose"), "btn", () => this.submitExpose([]));
      no.dataset.action = "no-expose";
      buttons.append(yes, no);
    } else if (mode === "play") {
      status.textContent = state.trick.length ? t("table.play_prompt") : t("table.lead_prompt");
    } else {
      status.textContent = this.waitingText(state);
    }
    if (this.claimsEnabled && state.phase === "playing" && !state.claims[me] && state.hands[me].length && !state.trickWinner) {
      const claim = button(t("table.claim"), "btn", () => this.run(() => this.actions.claim()));
      claim.dataset.action = "claim";
      claim.disabled = this.busy;
      buttons.append(claim);
    }
  }

  spectatorStatus(state) {
    if (state.phase === "passing") return t("table.phase.passing", { direction: passWord(state.pass) });
    if (state.phase === "charging") return state.nextCharger ? t("table.phase.to_charge", { name: this.name(state.nextCharger) }) : t("table.phase.charging");
    if (state.phase === "exposing") return t("table.phase.exposing");
    if (state.nextPlayer) return t("table.phase.to_play", { name: this.name(state.nextPlayer) });
    if (state.phase === "hand_over") return t("table.phase.hand_over", { hand: state.handNo });
    return t("table.phase.watching");
  }

  waitingText(state) {
    const me = this.me;
    if (state.phase === "passing") return t("table.wait.pass");
    if (state.phase === "charging") {
      if (state.nextCharger && state.nextCharger !== me) return t("table.wait.charge_one", { name: this.name(state.nextCharger) });
      return t("table.wait.charge");
    }
    if (state.phase === "exposing") {
      const waiting = SEATS.filter((s) => !state.exposeDone[s]).map((s) => this.name(s));
      return waiting.length ? t("table.wait.expose", { names: waiting.join(", ") }) : t("table.wait.exposing");
    }
    if (state.phase === "playing" && state.nextPlayer) return t("table.wait.play", { name: this.name(state.nextPlayer) });
    if (state.phase === "hand_over") return t("table.wait.hand_over", { hand: state.handNo });
    return "";
  }

  drawClaims(state) {
    const box = this.claimBox;
    box.innerHTML = "";
    for (const [claimer, claim] of Object.entries(state.claims)) {
      const panel = el("div", "claim-panel");
      panel.dataset.claimer = claimer;
      panel.append(el("div", "claim-title", claimer === this.me ? t("table.claim.you") : t("table.claim.other", { name: this.name(claimer) })));
      const cards = el("div", "claim-cards");
      for (const card of sortCards(claim.hand)) cards.append(cardFace(card, { small: true }));
      panel.append(cards);
      const answered = claim.accepted.map((s) => this.youOr(s));
      panel.append(el("div", "claim-status", answered.length ? t("table.claim.accepted", { names: answered.join(", ") }) : t("table.claim.no_answers")));
      if (this.interactive) {
        const buttons = el("div", "buttons");
        if (claimer === this.me) {
          const w = button(t("table.claim.withdraw"), "btn", () => this.run(() => this.actions.rejectClaim(claimer)));
          w.dataset.action = "withdraw";
          buttons.append(w);
        } else if (!claim.accepted.includes(this.me)) {
          const a = button(t("table.claim.accept"), "btn primary", () => this.run(() => this.actions.acceptClaim(claimer)));
          a.dataset.action = "accept";
          const r = button(t("table.claim.reject"), "btn", () => this.run(() => this.actions.rejectClaim(claimer)));
          r.dataset.action = "reject";
          buttons.append(a, r);
        }
        panel.append(buttons);
      }
      box.append(panel);
    }
  }

  drawSide(state) {
    this.dealBox.textContent = dealLine(state);
    this.dealBox.hidden = !state.handNo || state.complete;
    const box = this.scoreBox;
    box.innerHTML = "";
    box.append(this.scoreTable(state, { compact: true }));
    this.lastTrickButton.disabled = !state.lastTrick;
    this.sheetButton.disabled = !state.started;
    this.noticeBox.innerHTML = "";
    for (const text of state.notices.slice(-4)) this.noticeBox.append(el("li", null, text));
    this.chatLog.innerHTML = "";
    for (const { name, message } of state.chat.slice(-50)) {
      const li = el("li");
      li.append(el("b", null, name), document.createTextNode(` ${message}`));
      this.chatLog.append(li);
    }
    this.chatLog.scrollTop = this.chatLog.scrollHeight;
    this.chatForm.hidden = !this.actions || !this.actions.chat;
    this.chatBox.hidden = this.chatForm.hidden && !state.chat.length; // a replay without chat
  }

  scoreTable(state, { compact = false } = {}) {
    const table = el("table", compact ? "scores compact" : "scores sheet");
    const head = el("tr");
    head.append(el("th", null, compact ? "" : t("table.sheet.hand")));
    for (const s of SEATS) {
      const th = el("th", null, compact ? SEAT_LETTER[s] : this.name(s));
      th.title = this.name(s);
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    const rows = compact ? state.handScores.slice(-4) : state.handScores;
    for (const row of rows) {
      const tr = el("tr");
      tr.append(el("td", "hand-label", row.kindName ? `${row.hand}. ${row.kindName}` : compact ? String(row.hand) : `${row.hand} (${row.pass ? t(`pass.short.${row.pass}`, {}, row.pass) : "-"})`));
      for (const s of SEATS) tr.append(el("td", null, String(row[s])));
      body.append(tr);
    }
    const foot = el("tfoot");
    const tr = el("tr", "totals");
    tr.append(el("th", null, t("table.sheet.total")));
    const best = state.handScores.length ? new Set(winners(state, this.highestWins)) : new Set();
    for (const s of SEATS) {
      const td = el("td", best.has(s) || best.has(this.name(s)) ? "leader" : null, String(state.totals[s]));
      tr.append(td);
    }
    foot.append(tr);
    table.append(thead, body, foot);
    return table;
  }

  // ---- overlays ------------------------------------------------------------------------------

  openOverlay(kind) {
    this.overlay = kind;
    if (kind === "over") this.gameOverDismissed = false;
    if (this.state) this.drawOverlay(this.state);
  }

  toggleOverlay(kind) {
    this.overlay = this.overlay === kind ? null : kind;
    if (this.state) this.drawOverlay(this.state);
  }

  closeOverlay() {
    if (this.overlay === "over") this.gameOverDismissed = true;
    this.sheetHand = null;
    this.overlay = null;
    if (this.state) this.drawOverlay(this.state);
  }

  drawOverlay(state) {
    const box = this.overlayBox;
    box.innerHTML = "";
    box.classList.toggle("hidden", !this.overlay);
    if (!this.overlay) {
      overlayClosed(this);
      return;
    }
    const dialog = el("div", `dialog dialog-${this.overlay}`);
    dialog.setAttribute("role", "dialog");
    const close = button("\u00d7", "close", () => this.closeOverlay());
    close.setAttribute("aria-label", t("common.close"));
    dialog.append(close);
    if (this.overlay === "scores") {
      const ended = this.sheetHand && this.sheetHand === state.handScores.length ? this.sheetHand : null;
      dialog.append(el("h2", null, ended ? t("table.phase.hand_over", { hand: ended }) : t("table.score_sheet")));
      dialog.append(this.scoreTable(state));
      const ok = button(ended ? t("table.next_hand") : t("common.close_button"), "btn primary", () => this.closeOverlay());
      ok.dataset.action = "close-sheet";
      dialog.append(ok);
    } else if (this.overlay === "last") {
      dialog.append(el("h2", null, t("table.last_trick")));
      const last = state.lastTrick;
      if (last) {
        const row = el("div", "last-trick");
        for (const { seat, card } of last.plays) {
          const cell = el("div", "last-play");
          cell.append(cardFace(card), el("div", "who", this.youOr(seat)));
          row.append(cell);
        }
        dialog.append(row, el("p", null, last.winner === this.me ? t("table.you_took_it") : t("table.took_it", { name: this.name(last.winner) })));
      }
    } else if (this.overlay === "over") {
      dialog.append(el("h2", null, t("table.game_over")));
      const best = winners(state, this.highestWins).map((w) => (SEATS.includes(w) ? w : SEATS.find((s) => this.name(s) === w) || w));
      const others = best.filter((s) => s !== this.me).map((s) => this.name(s));
      const mine = this.me && best.includes(this.me);
      const text = mine
        ? others.length ? t("table.win.shared", { names: others.join(", ") }) : t("table.win.you")
        : t("table.win.others", { count: others.length, names: others.join(", ") });
      dialog.append(el("p", "winner", text));
      dialog.append(this.scoreTable(state));
      const links = el("div", "buttons");
      for (const { href, text } of this.links) {
        const a = el("a", "btn", text);
        a.href = href;
        links.append(a);
      }
      dialog.append(links);
      const extra = this.gameOverExtra && this.gameOverExtra();
      if (extra) dialog.querySelector(".winner").after(extra); // above the sheet: in sight on a phone
    }
    box.append(dialog);
    overlayDrawn(this, dialog); // named, modal, focused when it opens (a11y.js)
  }

  // ---- input ---------------------------------------------------------------------------------

  onCard(card) {
    const state = this.state;
    const mode = this.cardMode(state);
    if (mode === "play") {
      this.run(() => this.actions.play(card));
    } else if (mode === "select-pass" || mode === "select-charge") {
      if (this.selected.has(card)) this.selected.delete(card);
      else if (mode === "select-charge" || this.selected.size < 3) this.selected.add(card);
      this.update(state);
    }
  }

  submitPass() {
    const cards = [...this.selected];
    if (cards.length === 3) this.run(() => this.actions.pass(cards));
  }

  submitCharge(cards) {
    this.run(() => this.actions.charge(cards));
  }

  submitExpose(cards) {
    this.run(() => this.actions.expose(cards));
  }

  sendChat() {
    const text = this.chatInput.value.trim();
    if (!text || !this.actions || !this.actions.chat) return;
    this.chatInput.value = "";
    this.run(() => this.actions.chat(text));
  }

  /** Send one action; the table stays still until the server answers, and shows its error. */
  async run(action) {
    if (this.busy) return;
    this.busy = true;
    this.error = null;
    if (this.state) this.update(this.state);
    try {
      await action();
    } catch (err) {
      // a refusal in this page's language (common.js errorText: the engine's reasons by code)
      this.error = err instanceof ApiError ? errorText(err) : err && err.message ? err.message : String(err);
    } finally {
      this.busy = false;
      if (this.state) this.update(this.state);
    }
  }

  onHandKey(e) {
    if (e.key === "Enter" || e.key === " ") this.keyboard = true;
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    this.keyboard = true;
    const cards = [...this.handBox.querySelectorAll("button.card:not([disabled])")];
    if (!cards.length) return;
    const i = cards.indexOf(document.activeElement);
    const next = e.key === "ArrowRight" ? (i + 1) % cards.length : (i <= 0 ? cards.length - 1 : i - 1);
    cards[next].focus();
    e.preventDefault();
  }

  onGlobalKey(e) {
    if (e.key === "Escape" && this.overlay) {
      this.closeOverlay();
      return;
    }
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && !this.handBox.contains(target)) {
      const first = this.handBox.querySelector("button.card:not([disabled])");
      if (first) {
        first.focus();
        e.preventDefault();
      }
    }
  }
}

function wrap(card) {
  const slot = el("div", "slot");
  slot.append(card);
  return slot;
}
