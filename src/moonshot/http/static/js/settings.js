// A person's preferences for the web app, kept per browser (localStorage "moonshot.settings"):
// the deck's colours, the cards' size, the "your turn" signals (sound, the page title, a desktop
// notification) and the screen-reader announcements. All off (or the usual deck) by default.
//
// This module owns the preferences and their Settings dialog (a real <dialog>, opened from the
// top bar of every page): it reads and writes them, puts the classes that draw them on <html>
// (deck-four, cards-large), and tells the page when one changes (the "moonshot:settings" event on
// window). It plays no sound and announces nothing itself (sound.js and a11y.js do, reading
// these). Other parts of the page may add their own section to the dialog (addSettingsSection).

import { closeModal, openModal } from "./dialog.js";
import { t } from "./i18n.js";

const KEY = "moonshot.settings";

export const DEFAULTS = Object.freeze({
  deck: "two", // "two": black and red; "four": spades black, hearts red, diamonds blue, clubs green
  cards: "normal", // "normal" | "large"
  sound: false, // a short sound on your turn and when you take a trick
  title: false, // the page title says "● Your turn" (and flashes while the tab is hidden)
  notify: false, // a desktop notification on your turn while the page is hidden
  announce: false, // screen-reader mode: every card played, tricks, your hand, the scores
});

const CHOICES = { deck: ["two", "four"], cards: ["normal", "large"] };

function read() {
  try {
    const kept = JSON.parse(localStorage.getItem(KEY) || "{}");
    return kept && typeof kept === "object" ? kept : {};
  } catch {
    return {};
  }
}

/** Every preference, the kept ones over the defaults (anything malformed is the default). */
export function settings() {
  const kept = read();
  const out = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) {
    const value = kept[key];
    if (CHOICES[key] ? CHOICES[key].includes(value) : typeof value === "boolean") out[key] = value;
  }
  return out;
}

export function setting(key) {
  return settings()[key];
}

/** Keep one preference, draw it, and tell the page. */
export function setSetting(key, value) {
  if (!(key in DEFAULTS)) return;
  const next = { ...settings(), [key]: value };
  try {
    localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    // no storage (a private window): the choice holds for this page only
  }
  changed(next);
}

function changed(values) {
  applySettings(values);
  syncDialog(values);
  window.dispatchEvent(new CustomEvent("moonshot:settings", { detail: values }));
}

/** Call `fn(settings)` whenever a preference changes (here or in another tab). */
export function onSettings(fn) {
  window.addEventListener("moonshot:settings", (e) => fn(e.detail));
}

/** The classes that draw the card preferences, on <html>: every page's cards follow them. */
export function applySettings(values = settings()) {
  const root = document.documentElement;
  root.classList.toggle("deck-four", values.deck === "four");
  root.classList.toggle("cards-large", values.cards === "large");
}

// ---- the dialog -------------------------------------------------------------------------------

let dialog = null;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function radioGroup(key, legend, options) {
  const set = el("fieldset", "settings-group");
  set.append(el("legend", null, legend));
  for (const [value, label] of options) {
    const id = `setting-${key}-${value}`;
    const input = el("input");
    input.type = "radio";
    input.name = key;
    input.value = value;
    input.id = id;
    input.addEventListener("change", () => {
      if (input.checked) setSetting(key, value);
    });
    const lab = el("label", "check-field", null);
    lab.htmlFor = id;
    lab.append(input, document.createTextNode(` ${label}`));
    set.append(lab);
  }
  return set;
}

function checkbox(key, label, help) {
  const id = `setting-${key}`;
  const wrap = el("div", "settings-check");
  const input = el("input");
  input.type = "checkbox";
  input.name = key;
  input.id = id;
  const lab = el("label", "check-field");
  lab.htmlFor = id;
  lab.append(input, document.createTextNode(` ${label}`));
  wrap.append(lab);
  if (help) {
    const p = el("p", "settings-help", help);
    p.id = `${id}-help`;
    input.setAttribute("aria-describedby", p.id);
    wrap.append(p);
  }
  return [wrap, input];
}

async function notifyChanged(input, note) {
  note.textContent = "";
  if (!input.checked) {
    setSetting("notify", false);
    return;
  }
  // permission is asked only now, when the person turns notifications on
  if (typeof Notification === "undefined") {
    input.checked = false;
    note.textContent = t("settings.notify.unsupported", {}, "This browser cannot show notifications.");
    return;
  }
  let permission = Notification.permission;
  if (permission === "default") {
    try {
      permission = await Notification.requestPermission();
    } catch {
      permission = "denied";
    }
  }
  if (permission !== "granted") {
    input.checked = false;
    setSetting("notify", false);
    note.textContent = t("settings.notify.denied", {}, "Notifications are blocked for this site: allow them in the browser's site settings first.");
    return;
  }
  setSetting("notify", true);
}

function buildDialog() {
  const d = el("dialog", "settings-dialog");
  d.id = "settings-dialog";
  d.setAttribute("aria-labelledby", "settings-title");
  const form = el("form");
  form.method = "dialog";
  const head = el("div", "settings-head");
  const title = el("h2", null, t("settings.title", {}, "Settings"));
  title.id = "settings-title";
  const close = el("button", "btn small", t("settings.close", {}, "Close"));
  close.type = "submit";
  close.value = "close";
  close.dataset.action = "close-settings";
  head.append(title, close);
  form.append(head);

  const more = el("div", "settings-more"); // other sections (the language) come first
  more.id = "settings-more";
  form.append(more);

  form.append(
    radioGroup("deck", t("settings.deck", {}, "Deck colours"), [
      ["two", t("settings.deck.two", {}, "Two colours (♠ ♣ black, ♥ ♦ red)")],
      ["four", t("settings.deck.four", {}, "Four colours (♠ black, ♥ red, ♦ blue, ♣ green)")],
    ]),
    radioGroup("cards", t("settings.cards", {}, "Card size"), [
      ["normal", t("settings.cards.normal", {}, "Normal")],
      ["large", t("settings.cards.large", {}, "Large")],
    ]),
  );

  const turn = el("fieldset", "settings-group");
  turn.append(el("legend", null, t("settings.turn", {}, "Your turn")));
  const [soundRow, sound] = checkbox("sound", t("settings.sound", {}, "Sound on your turn and when you take a trick"));
  sound.addEventListener("change", () => setSetting("sound", sound.checked));
  const [titleRow, titleBox] = checkbox(
    "title",
    t("settings.title_signal", {}, "Show \u201c\u25cf Your turn\u201d in the page title"),
    t("settings.title_signal.help", {}, "It flashes while the tab is in the background."),
  );
  titleBox.addEventListener("change", () => setSetting("title", titleBox.checked));
  const [notifyRow, notify] = checkbox(
    "notify",
    t("settings.notify", {}, "A desktop notification on your turn while the page is hidden"),
    t("settings.notify.help", {}, "The browser asks for permission when you turn this on."),
  );
  const notifyNote = el("p", "settings-note");
  notifyNote.id = "settings-notify-note";
  notifyNote.setAttribute("role", "status");
  notify.addEventListener("change", () => notifyChanged(notify, notifyNote));
  turn.append(soundRow, titleRow, notifyRow, notifyNote);

  const reader = el("fieldset", "settings-group");
  reader.append(el("legend", null, t("settings.reader", {}, "Screen reader")));
  const [announceRow, announce] = checkbox(
    "announce",
    t("settings.announce", {}, "Announce the game: each card played, who takes each trick, your hand on your turn, the scores"),
    t("settings.announce.help", {}, "Read out politely by screen readers; \u201cYour turn\u201d at once."),
  );
  announce.addEventListener("change", () => setSetting("announce", announce.checked));
  reader.append(announceRow);
  form.append(turn, reader);

  d.append(form);
  // closed by its button, Escape or the backdrop: the page comes back, the focus to the opener
  d.addEventListener("close", () => closeModal(d));
  // a click on the backdrop (outside the form's box) closes it, as Escape does
  d.addEventListener("click", (e) => {
    if (e.target === d) d.close();
  });
  document.body.append(d);
  return d;
}

function syncDialog(values = settings()) {
  if (!dialog) return;
  for (const key of Object.keys(DEFAULTS)) {
    for (const input of dialog.querySelectorAll(`input[name="${key}"]`)) {
      if (input.type === "checkbox") input.checked = Boolean(values[key]);
      else input.checked = input.value === values[key];
    }
  }
}

/** The dialog (made on first use). */
export function settingsDialog() {
  if (!dialog) {
    dialog = buildDialog();
    syncDialog();
  }
  return dialog;
}

export function openSettings(from = document.activeElement) {
  const d = settingsDialog();
  syncDialog();
  openModal(d, { opener: from, focus: d.querySelector("[data-action=close-settings]") }); // dialog.js: Tab stays inside
}

/** Add a section of one's own to the dialog (e.g. the language), above the card settings. */
export function addSettingsSection(node) {
  settingsDialog().querySelector("#settings-more").append(node);
}

/** The Settings button for a page's header (`bar`): opens the dialog. */
export function mountSettings(bar) {
  if (!bar) return null;
  bar.querySelector(".settings-button")?.remove();
  const button = el("button", "btn small settings-button");
  button.type = "button";
  button.id = "settings-open";
  button.setAttribute("aria-haspopup", "dialog");
  button.append(el("span", "settings-icon", "\u2699"), document.createTextNode(` ${t("settings.open", {}, "Settings")}`));
  button.querySelector(".settings-icon").setAttribute("aria-hidden", "true");
  button.addEventListener("click", () => openSettings(button));
  bar.append(button);
  return button;
}

applySettings();
window.addEventListener("storage", (e) => {
  if (e.key === KEY) changed(settings());
});
