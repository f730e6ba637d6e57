// Rematch, on the table page's game-over view: offer or accept a new game with the same players,
// each one seat clockwise; see who accepted; decline. When everyone has accepted, every person who
// did is taken to the new game; a decline, or 60 s without everyone, cancels it for all.
//
// The offer's state comes from GET /lobby/rematch/<id> (polled once a second while the game-over
// view is up: the game's own stream has ended); POST /lobby/rematch accepts (or offers) for the
// caller only, POST /lobby/rematch_decline declines. Only the people who played see any of it.
// A mixed table's players of other protocols (`remote`: name -> protocol) accept through their
// own client, which joins again with this game's code: the list says they are asked there.

import { getJson, post } from "./api.js";
import { el, errorText } from "./common.js";
import { t } from "./i18n.js";

const POLL_MS = 1000;

/** Why an offer was cancelled, in this page's language (the server's reason_code and its args),
 * else the server's English reason. */
function cancelReason(s) {
  return t(`rematch.reason.${s.reason_code}`, s.reason_args || {}, s.reason || "");
}

export class RematchView {
  /** options: gameId; me: () => the viewer's seat or null (a spectator sees no rematch). */
  constructor(options) {
    this.gameId = options.gameId;
    this.me = options.me;
    this.myName = options.myName;
    this.state = null; // the server's offer, or {state: "none"}
    this.allowed = true; // false once the server says this name did not play here
    this.timer = null;
    this.busy = false;
    this.box = el("div", "rematch-box");
    this.box.id = "rematch-box";
    this.box.setAttribute("aria-live", "polite");
  }

  /** The node for the game-over view (null when there is nothing to offer this viewer). */
  node() {
    return this.allowed && this.me() ? this.box : null;
  }

  /** The game is over: learn where a rematch stands, and keep learning while the view is up. */
  gameOver() {
    if (this.timer || !this.me()) return;
    this.poll();
  }

  async poll() {
    this.timer = null;
    try {
      this.state = await getJson(`/lobby/rematch/${encodeURIComponent(this.gameId)}`);
    } catch (err) {
      // 403: this name did not play here; 404: no such game, or a server without rematches
      // (the Trend node's page, whose next game is the match's); 409: not over (stopped)
      if ([403, 404, 409].includes(err.status)) {
        this.allowed = false;
        this.box.remove();
        return;
      }
    }
    this.render();
    if (this.state && this.state.state === "started") return;
    this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  async act(path) {
    if (this.busy) return;
    this.busy = true;
    try {
      this.state = await post(path, { id: this.gameId });
      this.error = null;
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.busy = false;
    }
    this.render();
  }

  render() {
    const s = this.state || { state: "none" };
    const box = this.box;
    // drawn anew each poll: a keyboard's focus on its buttons (by id) is found again below
    const focusedId = box.contains(document.activeElement) ? document.activeElement.id : null;
    box.innerHTML = "";
    box.dataset.state = s.state;
    const me = this.myName;
    const accepted = (s.accepted || []).includes(me);
    const offerButton = (label) => {
      const b = el("button", "btn primary", label);
      b.type = "button";
      b.id = "rematch";
      b.addEventListener("click", () => this.act("/lobby/rematch"));
      return b;
    };
    const declineButton = () => {
      const b = el("button", "btn", t("rematch.decline"));
      b.type = "button";
      b.id = "rematch-decline";
      b.addEventListener("click", () => this.act("/lobby/rematch_decline"));
      return b;
    };
    const row = el("div", "buttons");
    if (s.state === "started") {
      box.append(el("p", null, t("rematch.started")));
      if (accepted && s.game) {
        location.href = `/game#${encodeURIComponent(s.game)}`;
      } else if (s.game) {
        const a = el("a", "btn", t("rematch.watch"));
        a.href = `/game#${encodeURIComponent(s.game)}`;
        row.append(a);
      }
    } else if (s.state === "open") {
      box.append(el("p", null, s.by === me ? t("rematch.you_offered") : t("rematch.offers", { name: s.by })));
      const list = el("ul", "rematch-people");
      const remote = s.remote || {};
      for (const p of s.people || []) {
        const yes = (s.accepted || []).includes(p);
        const asked = p in remote ? t("rematch.asked_remote", { protocol: t(`rematch.protocol.${remote[p]}`, {}, remote[p]) }) : t("rematch.asked");
        const li = el("li", yes ? "accepted" : "waiting", `${p === me ? t("table.you") : p}: ${yes ? t("rematch.accepted") : asked}`);
        li.dataset.name = p;
        list.append(li);
      }
      box.append(list, el("p", "muted", t("rematch.left", { seconds: Math.ceil(s.remaining || 0) })));
      if (!accepted) row.append(offerButton(t("rematch.accept")));
      row.append(declineButton());
    } else {
      if (s.state === "cancelled") box.append(el("p", "rematch-cancelled", t("rematch.cancelled", { reason: cancelReason(s) })));
      else box.append(el("p", null, t("rematch.play_again")));
      row.append(offerButton(t("rematch.offer")));
    }
    box.append(row);
    if (this.error) box.append(el("p", "error", this.error));
    if (focusedId) document.getElementById(focusedId)?.focus({ preventScroll: true });
  }
}
