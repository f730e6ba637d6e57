// Modal dialogs, one way for every page: the Settings dialog (a native <dialog>) and the table's
// overlays (the score sheet, the last trick, game over with its rematch). While one is open, Tab
// and Shift+Tab go round its own controls only, the page behind it is inert (no focus, no click,
// not read by a screen reader; live regions excepted, so the game is still announced), Escape
// closes it, and on close the focus goes back to what opened it (or to `fallback` when that is
// gone). It owns only the focus and the page's inertness, never what a dialog shows.

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type=hidden])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
].join(",");

const stack = []; // the open modals, the top one last

/** The controls of `root` that Tab reaches, in order (those drawn and not hidden). */
export function tabbables(root) {
  return [...root.querySelectorAll(FOCUSABLE)].filter((n) => n.tabIndex >= 0 && n.getClientRects().length > 0 && !n.closest("[inert]"));
}

const LIVE = "[aria-live], [role=status], [role=alert], [role=log]";
const SKIP = ["SCRIPT", "STYLE", "TEMPLATE"];

// the parts of `node` (which holds a live region) that hold none become inert, as deep as it
// takes: a live region keeps speaking, and nothing beside it stays reachable
function inertBeside(node, made) {
  for (const child of node.children) {
    if (child.inert || SKIP.includes(child.tagName) || child.matches(LIVE)) continue;
    if (child.querySelector(LIVE)) {
      inertBeside(child, made);
      continue;
    }
    child.inert = true;
    made.push(child);
  }
}

// everything beside `box` and beside each of its ancestors up to <body> becomes inert; what was
// made inert here is remembered so that closing undoes exactly that
function inertAround(box) {
  const made = [];
  for (let node = box; node && node !== document.body && node.parentElement; node = node.parentElement) {
    for (const sibling of node.parentElement.children) {
      if (sibling === node || sibling.inert || SKIP.includes(sibling.tagName) || sibling.matches(LIVE)) continue;
      if (sibling.querySelector(LIVE)) {
        inertBeside(sibling, made); // a part of the page that holds a live region
        continue;
      }
      sibling.inert = true;
      made.push(sibling);
    }
  }
  return made;
}

function onKey(e) {
  const top = stack[stack.length - 1];
  if (!top) return;
  if (e.key === "Escape") {
    if (top.native) return; // the browser closes a native dialog (its "close" event ends it here)
    e.preventDefault();
    e.stopPropagation();
    top.onClose();
    return;
  }
  if (e.key !== "Tab") return;
  const items = tabbables(top.box);
  if (!items.length) {
    e.preventDefault();
    return;
  }
  const first = items[0];
  const last = items[items.length - 1];
  const at = document.activeElement;
  const inside = top.box.contains(at);
  if (e.shiftKey && (at === first || !inside || at === top.box)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (at === last || !inside)) {
    e.preventDefault();
    first.focus();
  }
}

let listening = false;

/**
 * Open `box` as a modal: a <dialog> by showModal(), anything else (an element with role=dialog
 * and aria-modal=true inside it) by making the page behind it inert. `onClose` is what Escape
 * does for a non-native one (the caller closes it, then calls closeModal); `focus` is the
 * control to focus first (else the first one Tab reaches); `opener` gets the focus back on close.
 * Opening one already open does nothing.
 */
export function openModal(box, { onClose = () => closeModal(box), focus = null, opener = document.activeElement, fallback = null } = {}) {
  if (stack.some((m) => m.box === box)) return;
  const native = typeof HTMLDialogElement !== "undefined" && box instanceof HTMLDialogElement;
  const entry = { box, native, onClose, opener, fallback, inert: [] };
  if (native) {
    if (!box.open) box.showModal();
  } else {
    entry.inert = inertAround(box);
  }
  stack.push(entry);
  if (!listening) {
    document.addEventListener("keydown", onKey, true);
    listening = true;
  }
  const target = focus || tabbables(box)[0] || box;
  if (target === box && box.tabIndex < 0) box.tabIndex = -1;
  target.focus({ preventScroll: true });
}

/** Whether `box` is open as a modal. */
export function isModalOpen(box) {
  return stack.some((m) => m.box === box);
}

/** Close the modal `box`: the page behind comes back and the focus returns to its opener (or
 * to `fallback()`, a function giving the control to focus, when the opener is gone). */
export function closeModal(box) {
  const i = stack.findIndex((m) => m.box === box);
  if (i < 0) return;
  const [entry] = stack.splice(i, 1);
  for (const node of entry.inert) node.inert = false;
  if (entry.native && box.open) box.close();
  const back = entry.opener;
  if (back && back.isConnected && back !== document.body && !back.closest("[inert]") && !back.disabled) {
    back.focus({ preventScroll: true });
  } else if (entry.fallback) {
    const target = entry.fallback();
    if (target) target.focus({ preventScroll: true });
  }
}
