// Talking to the server: the `name` cookie, JSON requests with readable errors, and an
// EventSource that survives drops without applying any event twice.

export class ApiError extends Error {
  // message: the server's English ("error"); code and args: its stable "code" and "args", which
  // the page shows in its own language (common.js errorText: t("error." + code, args))
  constructor(status, message, code = null, args = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.args = args;
  }
}

export function getName() {
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === "name") {
      try {
        return decodeURIComponent(rest.join("=")) || null;
      } catch {
        return rest.join("=") || null;
      }
    }
  }
  return null;
}

export function setName(name) {
  const year = 365 * 24 * 3600;
  // Secure when the page came over HTTPS (directly or through the TLS proxy in front)
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `name=${encodeURIComponent(name)}; path=/; max-age=${year}; SameSite=Strict${secure}`;
}

export async function readError(resp) {
  let message = `${resp.status} ${resp.statusText}`;
  let code = null;
  let args = null;
  try {
    const body = await resp.json();
    if (body && typeof body.error === "string") message = body.error;
    if (body && typeof body.code === "string") code = body.code;
    if (body && body.args && typeof body.args === "object") args = body.args;
  } catch {
    /* not JSON: keep the status line */
  }
  return new ApiError(resp.status, message, code, args);
}

/** POST a JSON body; resolves with the JSON answer (or null), rejects with an ApiError. */
export async function post(path, body) {
  const resp = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body ?? {}),
  });
  if (!resp.ok) throw await readError(resp);
  const text = await resp.text();
  return text ? JSON.parse(text) : null;
}

export async function getJson(path) {
  const resp = await fetch(path, { credentials: "same-origin" });
  if (!resp.ok) throw await readError(resp);
  return resp.json();
}

/** Who the server thinks we are: {name} or null (no cookie, or the name is held elsewhere). */
export async function whoAmI() {
  try {
    return await getJson("/api/me");
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return { error: err };
    throw err;
  }
}

/**
 * A server-sent-events subscription that reconnects when it drops and never delivers the same
 * message twice.
 *
 * The browser's own reconnect sends Last-Event-ID and gets only what it missed; when it gives up
 * (the stream closed with an error status, or the server went away) we open a fresh one after a
 * back-off, which replays everything. Either way each message is recognised by its SSE id and its
 * data: within one id (messages without an id field, like chat, share the last id) the n-th copy
 * of the same data is delivered only once, except a message `live` picks out (the clocks as they
 * stand, which a new connection sends again).
 */
export class Subscription {
  constructor(url, { onMessage, onStatus = () => {}, onFatal = () => {}, isFinished = () => false, dedupe = true, live = () => false }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.onFatal = onFatal;
    this.dedupe = dedupe; // the lobby's stream has no ids: it restarts with lobby_state instead
    // (text) => true for a message that tells how things stand now (a game's clocks): each copy is
    // delivered, since a new connection sends it again as it stands, whatever was seen before
    this.live = live;
    this.isFinished = isFinished;
    this.seen = new Map(); // id -> Map(data -> copies delivered)
    this.connSeen = new Map(); // the same, for the current connection
    this.retryMs = 500;
    this.closed = false;
    this.source = null;
    this.timer = null;
  }

  start() {
    this.closed = false;
    this.open();
    return this;
  }

  open() {
    this.connSeen = new Map();
    const source = new EventSource(this.url);
    this.source = source;
    source.onopen = () => {
      this.connSeen = new Map();
      this.retryMs = 500;
      this.onStatus("open");
    };
    source.onmessage = (msg) => this.receive(msg);
    source.onerror = () => {
      if (this.closed || this.source !== source) return;
      if (this.isFinished()) {
        this.close();
        return;
      }
      if (source.readyState === EventSource.CLOSED) {
        this.onStatus("reconnecting");
        this.probe().then((fatal) => {
          if (this.closed) return;
          if (fatal) {
            this.close();
            this.onFatal(fatal);
            return;
          }
          this.timer = setTimeout(() => {
            if (!this.closed) this.open();
          }, this.retryMs);
          this.retryMs = Math.min(this.retryMs * 2, 10000);
        });
      } else {
        this.onStatus("reconnecting"); // the browser retries by itself, with Last-Event-ID
      }
    };
  }

  /** Why the stream was refused (an ApiError for a 4xx answer), or null when worth retrying. */
  async probe() {
    const abort = new AbortController();
    try {
      const resp = await fetch(this.url, { credentials: "same-origin", signal: abort.signal });
      if (resp.status >= 400 && resp.status < 500) return await readError(resp);
      return null;
    } catch {
      return null; // the server is away: keep trying
    } finally {
      abort.abort();
    }
  }

  receive(msg) {
    if (!this.dedupe || this.live(msg.data)) {
      try {
        this.onMessage(JSON.parse(msg.data), msg.lastEventId || "");
      } catch {
        /* not JSON: nothing to show */
      }
      return;
    }
    const id = msg.lastEventId || "";
    const count = (map) => {
      if (!map.has(id)) map.set(id, new Map());
      return map.get(id);
    };
    const conn = count(this.connSeen);
    const nth = (conn.get(msg.data) || 0) + 1;
    conn.set(msg.data, nth);
    const all = count(this.seen);
    if (nth <= (all.get(msg.data) || 0)) return; // already delivered on an earlier connection
    all.set(msg.data, nth);
    let data;
    try {
      data = JSON.parse(msg.data);
    } catch {
      return;
    }
    this.onMessage(data, id);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.onStatus("closed");
  }
}

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
