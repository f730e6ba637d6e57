// The game as one viewer knows it, folded from the Turbo-shaped event stream.
//
// `applyEvent(state, event)` is the only way the state changes, so live play, a reconnect's
// replay and the history viewer (which folds a stored event list up to a point) agree. It never
// touches the DOM. Hidden cards stay hidden: a redacted `deal` lists only the viewer's own cards,
// and other hands are known only as counts until a `claim` reveals them.

import { cardText } from "./cards.js";
import { t } from "./i18n.js";

export const SEATS = ["north", "east", "south", "west"];
export const SEAT_LETTER = { north: "N", east: "E", south: "S", west: "W" };

export const TURBO_CHARGEABLE = ["QS", "AH", "JD", "TC"];

// a pass is three cards in every variant that passes (the seed's "Pass 3 Cards")
const PASS_COUNT = 3;

const perSeat = (make) => Object.fromEntries(SEATS.map((s) => [s, make(s)]));

export function newState() {
  return {
    started: false,
    players: perSeat(() => null), // {type, name, algorithm?}
    rules: null, // Turbo charging rules ("classic", "blind", ...)
    variant: null, // "turbo" for Turbo games, else the variant's name
    replayDone: false,
    handsAtReplay: 0,
    handNo: 0,
    pass: null, // "left" | "right" | "across" | "keeper" | "hold" (no pass at all)
    kind: null,
    kindName: null,
    phase: "waiting", // waiting | dealt | passing | charging | exposing | playing | hand_over | game_over
    hands: perSeat(() => []), // the cards this viewer can see
    counts: perSeat(() => 0), // how many cards each seat holds
    passDone: perSeat(() => false),
    passSent: perSeat(() => null),
    passReceived: perSeat(() => null),
    chargeDone: perSeat(() => false),
    nextCharger: null,
    charged: perSeat(() => []),
    blindCharged: perSeat(() => 0),
    exposing: false,
    exposeDone: perSeat(() => true),
    exposed: perSeat(() => null),
    leader: null,
    trick: [], // [{seat, card}] in play order (a nines trick has up to 8)
    trickWinner: null, // set when the trick on the table is complete
    trickNo: 0,
    lastTrick: null, // {plays, winner}
    tricksWon: perSeat(() => 0),
    taken: perSeat(() => []),
    nextPlayer: null,
    legalPlays: [],
    claims: {}, // claimer -> {hand, accepted: [seat]}
    notices: [], // recent happenings worth a line of text
    handScores: [], // [{hand, pass, kindName, north, east, south, west}]
    totals: perSeat(() => 0),
    complete: false,
    result: null, // extra fields of game_complete, if the server sent any
    chat: [],
  };
}

function remove(list, cards) {
  const gone = new Set(cards);
  return list.filter((c) => !gone.has(c));
}

// the notices are written when folded, in this page's language
function notice(state, text) {
  state.notices.push(text);
  if (state.notices.length > 30) state.notices.shift();
}

function nameOf(state, seat) {
  const p = state.players[seat];
  return p ? p.name : seat;
}

function resetHand(state) {
  for (const s of SEATS) {
    state.passDone[s] = false;
    state.passSent[s] = null;
    state.passReceived[s] = null;
    state.chargeDone[s] = false;
    state.charged[s] = [];
    state.blindCharged[s] = 0;
    state.exposed[s] = null;
    state.exposeDone[s] = true;
    state.tricksWon[s] = 0;
    state.taken[s] = [];
  }
  state.nextCharger = null;
  state.exposing = false;
  state.leader = null;
  state.trick = [];
  state.trickWinner = null;
  state.trickNo = 0;
  state.lastTrick = null;
  state.nextPlayer = null;
  state.legalPlays = [];
  state.claims = {};
}

/** Fold one event (already parsed JSON) into `state`; returns `state`. */
export function applyEvent(state, ev) {
  switch (ev.type) {
    case "sit": {
      state.started = true;
      for (const s of SEATS) state.players[s] = ev[s] || null;
      state.rules = ev.rules || null;
      state.variant = ev.variant || "turbo";
      break;
    }
    case "deal": {
      resetHand(state);
      state.handNo += 1;
      // a hand with no passing says "keeper" as Turbo's fourth hand does, and `hold: true`
      state.pass = ev.hold ? "hold" : ev.pass || null;
      state.kind = ev.kind ?? null;
      // Kierki's contract: the catalogue's name for it, the server's English for one it lacks
      state.kindName = ev.kind ? t(`kierki.kind.${ev.kind}`, {}, ev.kind_name ?? String(ev.kind)) : (ev.kind_name ?? null);
      const size = Math.max(13, ...SEATS.map((s) => (ev[s] || []).length));
      for (const s of SEATS) {
        state.hands[s] = [...(ev[s] || [])];
        state.counts[s] = state.hands[s].length || size;
      }
      state.phase = "dealt";
      break;
    }
    case "start_passing":
      state.phase = "passing";
      for (const s of SEATS) state.passDone[s] = false;
      break;
    case "pass_status":
      for (const s of SEATS) state.passDone[s] = Boolean(ev[`${s}_done`]);
      break;
    case "send_pass": {
      // another seat's pass comes with no cards (the seed's redaction): only how many left it
      const n = ev.cards.length || PASS_COUNT;
      state.hands[ev.from] = remove(state.hands[ev.from], ev.cards);
      state.counts[ev.from] -= n;
      state.passSent[ev.from] = ev.cards.length ? [...ev.cards] : null;
      state.passDone[ev.from] = true;
      break;
    }
    case "recv_pass": {
      const n = ev.cards.length || PASS_COUNT;
      state.hands[ev.to] = [...state.hands[ev.to], ...ev.cards];
      state.counts[ev.to] += n;
      state.passReceived[ev.to] = ev.cards.length ? [...ev.cards] : null;
      break;
    }
    case "start_charging":
      state.phase = "charging";
      for (const s of SEATS) state.chargeDone[s] = false;
      break;
    case "charge_status":
      state.nextCharger = ev.next_charger || null;
      for (const s of SEATS) state.chargeDone[s] = Boolean(ev[`${s}_done`]);
      break;
    case "charge": {
      const before = state.charged[ev.seat];
      state.charged[ev.seat] = [...before, ...ev.cards.filter((c) => !before.includes(c))];
      notice(state, ev.cards.length ? t("notice.charges", { name: nameOf(state, ev.seat), cards: ev.cards.map(cardText).join(" ") }) : t("notice.no_charge", { name: nameOf(state, ev.seat) }));
      break;
    }
    case "blind_charge":
      state.blindCharged[ev.seat] += ev.count;
      notice(state, t("notice.blind_charge", { name: nameOf(state, ev.seat), count: ev.count }));
      break;
    case "reveal_charges":
      for (const s of SEATS) {
        const cards = ev[s] || [];
        const before = state.charged[s];
        state.charged[s] = [...before, ...cards.filter((c) => !before.includes(c))];
        state.blindCharged[s] = 0;
      }
      notice(state, t("notice.charges_revealed"));
      break;
    case "start_exposing":
      state.phase = "exposing";
      state.exposing = true;
      for (const s of SEATS) state.exposeDone[s] = false;
      break;
    case "expose_status":
      for (const s of SEATS) state.exposeDone[s] = Boolean(ev[`${s}_done`]);
      break;
    case "expose":
      state.exposed[ev.seat] = [...(ev.cards || [])];
      state.exposeDone[ev.seat] = true;
      if (ev.cards && ev.cards.length) notice(state, t("notice.exposes", { name: nameOf(state, ev.seat), cards: ev.cards.map(cardText).join(" ") }));
      break;
    case "start_trick":
      state.phase = "playing";
      state.exposing = false;
      state.leader = ev.leader;
      state.trick = [];
      state.trickWinner = null;
      state.trickNo += 1;
      break;
    case "play_status":
      state.phase = "playing";
      state.nextPlayer = ev.next_player || null;
      state.legalPlays = [...(ev.legal_plays || [])];
      break;
    case "play": {
      if (state.trickWinner) {
        // a stream without start_trick: the first card of a new trick clears the old one
        state.trick = [];
        state.trickWinner = null;
      }
      state.hands[ev.seat] = remove(state.hands[ev.seat], [ev.card]);
      state.counts[ev.seat] -= 1;
      state.trick.push({ seat: ev.seat, card: ev.card });
      state.nextPlayer = null;
      state.legalPlays = [];
      for (const claim of Object.values(state.claims)) claim.hand = claim.hand.filter((c) => c !== ev.card);
      break;
    }
    case "end_trick":
      state.trickWinner = ev.winner;
      state.lastTrick = { plays: [...state.trick], winner: ev.winner };
      state.tricksWon[ev.winner] += 1;
      state.taken[ev.winner].push(...state.trick.map((p) => p.card));
      state.nextPlayer = null;
      state.legalPlays = [];
      break;
    case "claim":
      state.claims[ev.seat] = { hand: [...ev.hand], accepted: [] };
      notice(state, t("notice.claims", { name: nameOf(state, ev.seat) }));
      break;
    case "accept_claim": {
      const claim = state.claims[ev.claimer];
      if (claim && !claim.accepted.includes(ev.acceptor)) claim.accepted.push(ev.acceptor);
      break;
    }
    case "reject_claim":
      delete state.claims[ev.claimer];
      notice(
        state,
        ev.acceptor === ev.claimer
          ? t("notice.claim_withdrawn", { name: nameOf(state, ev.claimer) })
          : t("notice.claim_rejected", { name: nameOf(state, ev.acceptor), claimer: nameOf(state, ev.claimer) }),
      );
      break;
    case "hand_complete": {
      const row = { hand: state.handNo, pass: state.pass, kindName: state.kindName };
      for (const s of SEATS) {
        row[s] = ev[`${s}_score`] ?? 0;
        state.totals[s] += row[s];
      }
      state.handScores.push(row);
      state.phase = "hand_over";
      state.nextPlayer = null;
      state.legalPlays = [];
      state.claims = {};
      break;
    }
    case "game_complete": {
      state.complete = true;
      state.phase = "game_over";
      const { type, ...rest } = ev;
      state.result = rest;
      break;
    }
    case "chat":
      state.chat.push({ name: ev.name, message: ev.message });
      if (state.chat.length > 200) state.chat.shift();
      break;
    case "end_replay":
      state.replayDone = true;
      state.handsAtReplay = state.handScores.length; // hands that ended before this page looked
      break;
    default:
      break; // an event this page does not know changes nothing
  }
  return state;
}

/** The state after the first `n` events of `events`. */
export function foldEvents(events, n = events.length) {
  const state = newState();
  for (let i = 0; i < n; i += 1) applyEvent(state, events[i]);
  return state;
}

/** The seat `name` sits in, or null (a spectator). */
export function seatOf(state, name) {
  if (!name) return null;
  for (const s of SEATS) if (state.players[s] && state.players[s].name === name) return s;
  return null;
}

/** Seats holding the lowest (or, for scores that count up like Trend's, the highest) total. */
export function winners(state, highestWins = false) {
  if (state.result && Array.isArray(state.result.winners)) return state.result.winners;
  const vals = SEATS.map((s) => state.totals[s]);
  const best = highestWins ? Math.max(...vals) : Math.min(...vals);
  return SEATS.filter((s) => state.totals[s] === best);
}
