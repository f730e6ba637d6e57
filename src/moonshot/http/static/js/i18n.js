// The languages of the web app: which one a page speaks, its catalogue, and t(key, args), the one
// lookup every text a person reads goes through. Numbers and dates are written by Intl.
//
// Catalogues are /static/i18n/<lang>.json: flat objects from a key ("lobby.create") to a message.
// A message is plain text with ICU-like arguments:
//   {name}                                    the argument as it is (a number through Intl)
//   {count, plural, one {...} few {...} many {...} other {...}}   Intl.PluralRules' category
//                                             of count ("=0 {...}" matches exactly; # is count)
//   {kind, select, pass {...} other {...}}    the branch named by the argument
// This module loads the chosen catalogue before any page module runs (top-level await), so t()
// is synchronous. It must not touch the page beyond <html lang>, data-i18n* attributes and the
// language switch it builds.

export const LANGUAGES = ["en", "pl"];
export const LANGUAGE_NAMES = { en: "English", pl: "Polski" };
const STORE_KEY = "moonshot.lang";

/** The language kept in this browser, else the first of navigator.languages we speak, else en. */
export function chooseLanguage(
  kept = readKept(),
  preferred = (typeof navigator !== "undefined" && navigator.languages) || [],
) {
  if (LANGUAGES.includes(kept)) return kept;
  for (const tag of preferred) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return "en";
}

function readKept() {
  try {
    return localStorage.getItem(STORE_KEY);
  } catch {
    return null;
  }
}

/** Keep `code` for this browser and draw the page again in it (by reloading). */
export function setLanguage(code) {
  if (!LANGUAGES.includes(code)) return;
  try {
    localStorage.setItem(STORE_KEY, code);
  } catch {
    // no storage (private mode): the switch still holds for this page load
  }
  location.reload();
}

export const lang = chooseLanguage();
let catalogue = {};

async function load(code) {
  try {
    const res = await fetch(`/static/i18n/${code}.json`, { cache: "no-cache" });
    if (res.ok) return await res.json();
  } catch {
    // fall through: keys and fallbacks are shown, the page still works
  }
  return {};
}

catalogue = await load(lang);
// a catalogue that did not come: the English one, so a person reads words rather than keys
if (!Object.keys(catalogue).length && lang !== "en") catalogue = await load("en");
if (typeof document !== "undefined") document.documentElement.lang = lang;

const pluralRules = new Intl.PluralRules(lang);

/** The plural category ("one", "few", "many", "other") of n in this page's language. */
export function pluralCategory(n) {
  return pluralRules.select(n);
}

/** n written for this page's language: "1 234,5" in Polish, "1,234.5" in English. */
export function formatNumber(n, options) {
  if (typeof n !== "number" || !Number.isFinite(n)) return String(n);
  return new Intl.NumberFormat(lang, options).format(n);
}

/** A date (Date, epoch milliseconds or ISO text) written for this page's language. */
export function formatDate(value, options = { dateStyle: "medium", timeStyle: "short" }) {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return new Intl.DateTimeFormat(lang, options).format(date);
}

const ordinalRules = new Intl.PluralRules(lang, { type: "ordinal" });

/** "3rd" / "3.": n as an ordinal, by the catalogue's ordinal.<category>. */
export function formatOrdinal(n) {
  return t(`ordinal.${ordinalRules.select(n)}`, { n });
}

/** Whether this page's catalogue has `key`. */
export function has(key) {
  return Object.prototype.hasOwnProperty.call(catalogue, key);
}

/**
 * The message `key` in this page's language with `args` put in. An unknown key gives `fallback`
 * (formatted with the same args) when one is passed, else the key itself, so a gap shows and
 * the test on the catalogues catches it.
 */
export function t(key, args = {}, fallback) {
  const message = has(key) ? catalogue[key] : fallback !== undefined ? fallback : key;
  return format(String(message), args || {});
}

// ---- the message format -------------------------------------------------------------------

/** `message` with its {arguments} replaced from args (see the module comment). */
export function format(message, args, count) {
  let out = "";
  let i = 0;
  while (i < message.length) {
    const ch = message[i];
    if (ch === "#" && count !== undefined) {
      out += formatNumber(count);
      i += 1;
    } else if (ch === "{") {
      const end = matching(message, i);
      if (end < 0) {
        out += message.slice(i);
        break;
      }
      out += argument(message.slice(i + 1, end), args);
      i = end + 1;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}

function matching(text, open) {
  let depth = 0;
  for (let j = open; j < text.length; j += 1) {
    if (text[j] === "{") depth += 1;
    else if (text[j] === "}") {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  return -1;
}

function argument(body, args) {
  const first = body.indexOf(",");
  const name = (first < 0 ? body : body.slice(0, first)).trim();
  const value = args[name];
  if (first < 0) return value === undefined || value === null ? "" : show(value);
  const rest = body.slice(first + 1);
  const second = rest.indexOf(",");
  const kind = (second < 0 ? rest : rest.slice(0, second)).trim();
  if (kind === "number") return formatNumber(Number(value));
  if (second < 0) return show(value);
  const branches = parseBranches(rest.slice(second + 1));
  if (kind === "plural") {
    const n = Number(value);
    const exact = branches[`=${n}`];
    const chosen = exact ?? branches[pluralCategory(n)] ?? branches.other ?? "";
    return format(chosen, args, n);
  }
  if (kind === "select") {
    const chosen = branches[String(value)] ?? branches.other ?? "";
    return format(chosen, args);
  }
  return show(value);
}

function parseBranches(text) {
  const branches = {};
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i])) i += 1;
    const open = text.indexOf("{", i);
    if (open < 0) break;
    const label = text.slice(i, open).trim();
    const close = matching(text, open);
    if (close < 0) break;
    branches[label] = text.slice(open + 1, close);
    i = close + 1;
  }
  return branches;
}

function show(value) {
  return typeof value === "number" ? formatNumber(value) : String(value);
}

// ---- the page -------------------------------------------------------------------------------

/**
 * Fill the page's static text from the catalogue: an element's data-i18n names the key of its
 * text; data-i18n-aria-label, data-i18n-title and data-i18n-placeholder name the keys of those
 * attributes. Called once at load for the HTML, and again for any markup made from a template.
 */
export function applyI18n(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const [data, attr] of [
    ["i18nAriaLabel", "aria-label"],
    ["i18nTitle", "title"],
    ["i18nPlaceholder", "placeholder"],
  ]) {
    const selector = `[data-${data.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}]`;
    for (const node of root.querySelectorAll(selector)) node.setAttribute(attr, t(node.dataset[data]));
  }
}

/** The EN / PL switch for the top bar: the current language is pressed; another one reloads. */
export function languageSwitch() {
  const group = document.createElement("span");
  group.className = "lang-switch";
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", t("lang.switch"));
  for (const code of LANGUAGES) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn small lang";
    button.dataset.lang = code;
    button.textContent = code.toUpperCase();
    button.lang = code;
    button.title = LANGUAGE_NAMES[code];
    button.setAttribute("aria-label", LANGUAGE_NAMES[code]);
    button.setAttribute("aria-pressed", String(code === lang));
    button.addEventListener("click", () => {
      if (code !== lang) setLanguage(code);
    });
    group.append(button);
  }
  return group;
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => applyI18n());
  } else {
    applyI18n();
  }
}
