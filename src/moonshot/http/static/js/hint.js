// The table page's Hint button: shown only where the server says hints are allowed in this game
// (`"hints": true`: a practice game, one person with their own bots), usable on the person's own
// decision. It asks POST /api/games/<id>/hint, shows the best option and by how much it is best,
// and raises that card in the hand until the decision is made. Refusals are said in words.

import { ApiError, getJson, post } from "./api.js";
import { cardName } from "./cards.js";
import { el, errorText } from "./common.js";
import { has, t } from "./i18n.js";
import { cardsSpan, labelCards, points2, reviewError } from "./review.js";

export class HintButton {
  /** `table`: the table component (js/table.js); the button joins its tools. */
  constructor(table, gameId) {
    this.table = table;
    this.gameId = gameId;
    this.allowed = false;
    this.busy = false;
    this.hint = null; // {key, best, margin, options}
    this.button = el("button", "btn small", t("hint.button"));
    this.button.type = "button";
    this.button.dataset.action = "hint";
    this.button.title = t("hint.button.title");
    this.button.hidden = true;
    this.button.addEventListener("click", () => this.ask());
    this.box = el("div", "hint-box");
    this.box.id = "hint";
    this.box.setAttribute("role", "status");
    this.box.hidden = true;
    table.tools.append(this.button);
    table.tools.after(this.box);
    window.moonshotHint = this;
  }

  /** Whether the server allows hints in this game (the game's `hints`). */
  setAllowed(allowed) {
    this.allowed = Boolean(allowed);
    document.body.dataset.hints = String(this.allowed);
    this.refresh(this.table.state);
  }

  /** Once the game has started (its `sit`): whether this person may ask for hints in it, from the
   * event itself where it says so, else from GET /api/games/<id>/hint ({"hints": true|false}). */
  fromSit(ev) {
    if ("hints" in ev) this.setAllowed(ev.hints === true);
    else this.lookUp();
  }

  async lookUp() {
    if (this.looked) return;
    this.looked = true;
    try {
      const answer = await getJson(`/api/games/${encodeURIComponent(this.gameId)}/hint`);
      this.setAllowed(Boolean(answer && answer.hints === true));
    } catch {
      /* not said (a server without hints): no button */
    }
  }

  /** The decision the person faces now (a key that changes once it is made), or null. */
  decisionKey(state) {
    if (!state || !this.table.me) return null;
    const mode = this.table.cardMode(state);
    if (!mode) return null;
    const me = this.table.me;
    return `${state.handNo}:${state.phase}:${state.trickNo}:${state.trick.length}:${state.hands[me].length}`;
  }

  /** Call after every table.update: the button's state, and the hinted cards raised again. */
  refresh(state) {
    const key = this.decisionKey(state);
    this.button.hidden = !this.allowed || !this.table.me || !state || state.complete;
    this.button.disabled = this.busy || !key;
    if (this.hint && this.hint.key !== key) {
      this.hint = null;
      this.box.hidden = true;
      this.box.innerHTML = "";
    }
    const best = new Set(this.hint ? labelCards(this.hint.best) : []);
    for (const node of this.table.handBox.querySelectorAll(".card[data-card]")) {
      const on = best.has(node.dataset.card);
      node.classList.toggle("hinted", on);
      const name = cardName(node.dataset.card);
      node.setAttribute("aria-label", on ? t("hint.card", { card: name }) : name);
    }
  }

  async ask() {
    const state = this.table.state;
    const key = this.decisionKey(state);
    if (!key || this.busy) return;
    this.busy = true;
    this.button.disabled = true;
    this.box.hidden = false;
    this.box.className = "hint-box";
    this.box.textContent = t("hint.thinking");
    try {
      const answer = await post(`/api/games/${encodeURIComponent(this.gameId)}/hint`, {});
      this.hint = { key, ...answer };
      this.draw(answer);
    } catch (err) {
      this.hint = null;
      this.box.className = "hint-box error";
      this.box.textContent = hintError(err);
    } finally {
      this.busy = false;
      this.refresh(this.table.state);
    }
  }

  draw(answer) {
    const box = this.box;
    box.innerHTML = "";
    const line = el("p", "hint-best");
    line.append(el("b", null, `${t("hint.label")} `), cardsSpan(answer.best));
    const margin = Number(answer.margin);
    if ((answer.options || []).length > 1 && Number.isFinite(margin)) {
      line.append(document.createTextNode(margin < 0.05 ? t("hint.as_good") : t("hint.better", { points: points2(margin) })));
    } else {
      line.append(document.createTextNode(` ${t("hint.only")}`));
    }
    box.append(line);
    const options = answer.options || [];
    if (options.length > 1) {
      box.append(el("p", "hint-note", t("hint.note")));
      const list = el("ol", "hint-options");
      list.setAttribute("aria-label", t("hint.options"));
      for (const o of options.slice(0, 6)) {
        const li = el("li");
        li.append(cardsSpan(o.label), document.createTextNode(` ${points2(o.expected)}`));
        list.append(li);
      }
      box.append(list);
    }
  }
}

/** A person's words for a refused hint. */
export function hintError(err) {
  if (err instanceof ApiError) {
    if (err.status === 403 && err.code && has(`error.${err.code}`)) return errorText(err); // the server's words for why
    if (err.status === 403) return t("hint.error.not_allowed", { why: err.message ? `: ${errorText(err)}` : "" });
    if (err.status === 409) return t("hint.error.not_your_turn");
    if (err.status === 429) return t("hint.error.slow_down");
  }
  return reviewError(err, "hint");
}
