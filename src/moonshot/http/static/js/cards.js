// Cards as the API writes them ("TS", "QH", "2C"): names, sorting and the drawn card faces.
// Names and the letters on a face come from the catalogue ("queen of spades" / "dama pik";
// J Q K / W D K).

import { t } from "./i18n.js";

export const SUITS = ["C", "D", "S", "H"]; // display order: black, red, black, red
export const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"];
export const SUIT_SYMBOL = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
/** A suit's name in this page's language ("spades" / "piki"). */
export function suitName(suit) {
  return t(`suit.${suit}`);
}

/** The rank a face and a short text show: "10" for T, the court letters in this page's language. */
function rankLabel(rank) {
  return rank === "T" ? "10" : "JQKA".includes(rank) ? t(`rank.short.${rank}`) : rank;
}

export const rankOf = (card) => card[0];
export const suitOf = (card) => card[1];
export const isRed = (card) => card[1] === "H" || card[1] === "D";

/** "QH" -> "Q♥", "TS" -> "10♠". */
export function cardText(card) {
  return rankLabel(card[0]) + SUIT_SYMBOL[card[1]];
}

/** "QH" -> "queen of hearts" ("dama kier"). */
export function cardName(card) {
  return t("card.name", { rank: t(`rank.name.${card[0]}`), suit: t(`suit.of.${card[1]}`) });
}

function sortKey(card) {
  return SUITS.indexOf(card[1]) * 16 + RANKS.indexOf(card[0]);
}

/** A new array sorted by suit (clubs, diamonds, spades, hearts), then rank (low to high). */
export function sortCards(cards) {
  return [...cards].sort((a, b) => sortKey(a) - sortKey(b));
}

export function cardsText(cards) {
  return sortCards(cards).map(cardText).join(" ");
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * One card face: a <button> when `interactive`, else a <div>. The face is plain DOM (corner
 * indices, a centre pip or a court letter), so it scales with the --card-w custom property.
 */
export function cardFace(card, { interactive = false, small = false } = {}) {
  const node = el(interactive ? "button" : "div", `card face ${isRed(card) ? "red" : "black"}`);
  if (small) node.classList.add("small");
  if (interactive) node.type = "button";
  node.dataset.card = card;
  node.setAttribute("aria-label", cardName(card));
  if (!interactive) node.setAttribute("role", "img"); // a picture of the card, named by its label
  node.title = cardName(card);
  const rank = rankLabel(card[0]);
  const sym = SUIT_SYMBOL[card[1]];
  const corner = (pos) => {
    const c = el("span", `corner ${pos}`);
    c.append(el("span", "rank", rank), el("span", "suit", sym));
    return c;
  };
  node.append(corner("tl"));
  if ("JQK".includes(card[0])) {
    const court = el("span", "court");
    court.append(el("span", "court-rank", rank), el("span", "court-suit", sym));
    node.append(court);
  } else {
    node.append(el("span", card[0] === "A" ? "pip ace" : "pip", sym));
  }
  node.append(corner("br"));
  return node;
}

/** The back of a card (someone else's hidden card). */
export function cardBack({ small = false } = {}) {
  const node = el("div", "card back");
  if (small) node.classList.add("small");
  node.setAttribute("aria-hidden", "true");
  return node;
}
