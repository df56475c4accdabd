/**
 * Switchboard's JavaScript client for the JSON protocol on `/ws` (docs/protocol.md), for the
 * browser app and for any other web app: `import { connect } from "/switchboard.js"`.
 *
 * One {@link Switchboard} keeps one WebSocket open. It signs in with a stored token, matches
 * replies to requests by `id` (each request is a promise with a timeout), hands events to
 * listeners, and when the connection drops it reconnects by itself (exponential backoff with
 * jitter), signs in again, resubscribes every group `since` the last message it saw (so nothing
 * is missed and nothing arrives twice) and resends the messages that were not acknowledged, with
 * the same `clientId`, which the server stores only once. See docs/client.md.
 *
 * @module switchboard
 */

/**
 * An error reply from the server, or a failure on the way to it.
 *
 * `code` is one of the protocol's codes (`bad_request`, `unauthorized`, `forbidden`, `not_found`,
 * `conflict`, `too_large`, `rate_limited`, `unavailable`, `internal`) or `timeout` when no reply
 * came in time; `message` is written for people.
 */
export class SwitchboardError extends Error {
  /**
   * @param {string} code the protocol's error code, or `timeout`
   * @param {string} message a sentence for people
   */
  constructor(code, message) {
    super(message);
    this.name = "SwitchboardError";
    /** @type {string} */
    this.code = code;
  }
}

/**
 * Options for {@link connect}; every one is optional.
 *
 * @typedef {object} ConnectOptions
 * @property {string} [url] the `/ws` URL; default: this page's host, `wss:` under https
 * @property {string|null} [token] a session token; default: the one stored under `tokenKey`
 * @property {Storage|null} [storage] where the token is kept; default `localStorage`, null for nowhere
 * @property {string} [tokenKey] the storage key of the token; default `"switchboard.token"`
 * @property {number} [requestTimeout] milliseconds a request waits for its reply; default 10000
 * @property {number} [minDelay] first reconnect delay in milliseconds; default 500
 * @property {number} [maxDelay] longest reconnect delay in milliseconds; default 10000
 * @property {number} [keepAlive] milliseconds between `ping`s that detect a dead link; default 20000
 */

const defaults = {
  tokenKey: "switchboard.token",
  requestTimeout: 10000,
  minDelay: 500,
  maxDelay: 10000,
  keepAlive: 20000,
};

/**
 * Opens a connection to a Switchboard server and signs in with the stored token, if any.
 *
 * @example
 * const sb = connect();
 * sb.on("message", ({ group, message }) => console.log(group, message.text));
 * sb.on("state", (state) => console.log("connection is", state));
 * if (!sb.token) await sb.login("ada@example.com", "correct horse");
 *
 * @param {ConnectOptions} [options]
 * @returns {Switchboard}
 */
export function connect(options = {}) {
  return new Switchboard(options);
}

/**
 * The `/ws` URL of the server that served this page.
 *
 * @returns {string}
 */
export function defaultURL() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

/**
 * A random `clientId` for a message: 16 random bytes in hex.
 *
 * @returns {string}
 */
export function newClientId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The expiry in a session token's payload (`exp`, seconds since the epoch), or null when the
 * token has none that can be read.
 *
 * @param {string} token
 * @returns {number|null}
 */
function tokenExpiry(token) {
  try {
    const payload = token.split(".")[0].replaceAll("-", "+").replaceAll("_", "/");
    const { exp } = JSON.parse(atob(payload));
    return Number.isFinite(exp) ? exp : null;
  } catch {
    return null;
  }
}

/** setTimeout's longest delay; a longer wait is made of several. */
const longestDelay = 2 ** 31 - 1;

/**
 * While the server still takes a token this device's clock says has expired, it is asked again
 * after this wait, doubled each time up to `expiryRecheckLongest` (ms).
 */
const expiryRecheckFirst = 1000;
const expiryRecheckLongest = 60_000;

/**
 * One connection to `/ws`, kept open until {@link Switchboard#close}.
 *
 * States (the `state` event and the `state` property): `connecting` (opening or signing in),
 * `online` (requests go out; `user` is set when signed in), `offline` (waiting to reconnect),
 * `closed` (after `close()`).
 *
 * Events for {@link Switchboard#on}: the server's events by their `op` (`message`, `presence`,
 * `member`, `receipt`, `typing`; the listener gets the whole event object), and
 * `state` (the new state), `auth` (the signed-in user), `signedout` (`"expired"`: the token
 * stopped working or reached its expiry, when the server signs its connections out too; or
 * `"logout"`), `resubscribed` (`{group, reply}` after a reconnect's `subscribe`).
 * Messages that came while offline are delivered as `message` events too, with `catchUp: true`.
 */
export class Switchboard {
  #options;
  #storage;
  #socket = null;
  #listeners = new Map();
  #pending = new Map();
  #nextId = 1;
  #subscriptions = new Map();
  #outbox = [];
  #attempt = 0;
  #reconnectTimer = 0;
  #keepAliveTimer = 0;
  #expiryTimer = 0;

  /** @param {ConnectOptions} options */
  constructor(options) {
    this.#options = { ...defaults, ...options };
    this.url = options.url ?? defaultURL();
    this.#storage = options.storage === undefined ? globalThis.localStorage ?? null : options.storage;
    /** The session token, or null when signed out. @type {string|null} */
    this.token = options.token ?? this.#storage?.getItem(this.#options.tokenKey) ?? null;
    /** The signed-in user (`{id, name, avatar, online}`), or null. @type {object|null} */
    this.user = null;
    /** `connecting`, `online`, `offline` or `closed`. @type {string} */
    this.state = "connecting";
    /** When the next reconnect is due (ms since the epoch) while `offline`, else 0. @type {number} */
    this.reconnectAt = 0;
    globalThis.addEventListener?.("online", this.#browserOnline);
    this.#open();
  }

  /**
   * Calls `listener` for every event called `name`; returns a function that stops it.
   *
   * @param {string} name an event `op` or `state`, `auth`, `signedout`, `resubscribed`
   * @param {(value: any) => void} listener
   * @returns {() => void}
   */
  on(name, listener) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(listener);
    return () => this.#listeners.get(name)?.delete(listener);
  }

  /**
   * Sends a request and resolves with the `ok` reply, or rejects with a {@link SwitchboardError}
   * (the server's code, `unavailable` when not online or the connection drops first, `timeout`).
   *
   * @example
   * const { groups } = await sb.request("groups");
   *
   * @param {string} op the operation, e.g. `"groups"`
   * @param {object} [args] its arguments
   * @param {{timeout?: number}} [options]
   * @returns {Promise<object>}
   */
  request(op, args = {}, options = {}) {
    if (this.state !== "online") {
      return Promise.reject(new SwitchboardError("unavailable", "not connected to the server; try again in a moment"));
    }
    return this.#call(op, args, options.timeout);
  }

  /**
   * Creates an account and signs in; the token is stored.
   *
   * @param {{email: string, password: string, name: string, avatar?: string}} account
   * @returns {Promise<object>} the user
   */
  async signup(account) {
    return this.#signedIn(await this.request("signup", account));
  }

  /**
   * Signs in with email and password; the token is stored.
   *
   * @param {string} email
   * @param {string} password
   * @returns {Promise<object>} the user
   */
  async login(email, password) {
    return this.#signedIn(await this.request("login", { email, password }));
  }

  /**
   * Revokes the session, forgets the token, the subscriptions and unsent messages.
   *
   * @returns {Promise<void>}
   */
  async logout() {
    try {
      await this.request("logout");
    } finally {
      this.#signedOut("logout");
    }
  }

  /**
   * Subscribes to a group: resolves with the reply (`group`, `messages`, `more`), then its events
   * arrive; after any reconnect it is renewed `since` the last message seen.
   *
   * @param {string} group the group id
   * @param {{limit?: number}} [options] how many of the latest messages come with the reply
   * @returns {Promise<object>}
   */
  async subscribe(group, options = {}) {
    const args = { group };
    if (options.limit) args.limit = options.limit;
    const reply = await this.request("subscribe", args);
    const known = this.#subscriptions.get(group);
    this.#subscriptions.set(group, { since: known?.since ?? null, limit: options.limit });
    for (const message of reply.messages) this.#saw(group, message);
    return reply;
  }

  /**
   * Stops a subscription.
   *
   * @param {string} group
   * @returns {Promise<object>}
   */
  unsubscribe(group) {
    this.#subscriptions.delete(group);
    return this.request("unsubscribe", { group });
  }

  /**
   * Sends a message and resolves with the stored message once it is durable.
   *
   * Works offline: the message waits in the outbox and goes out when the connection is back.
   * It carries a `clientId`, so resending it after a lost reply never stores it twice.
   *
   * @example
   * const message = await sb.send(groupId, { text: "hello" });
   *
   * @param {string} group the group id
   * @param {{text?: string, imageUrl?: string, clientId?: string}} content exactly one of `text` and `imageUrl`
   * @returns {Promise<object>} the stored message
   */
  send(group, content) {
    const entry = { args: { group, ...content, clientId: content.clientId ?? newClientId() } };
    const promise = new Promise((resolve, reject) => Object.assign(entry, { resolve, reject }));
    this.#outbox.push(entry);
    if (this.state === "online") this.#transmit(entry);
    return promise;
  }

  /**
   * Uploads one image (a `Blob` or `File`: JPEG, PNG, GIF or WebP, as the server allows) over
   * HTTP with the session token, and resolves with `{id, url, type, bytes}` once it is stored;
   * `url` (`/media/<id>`, on this server) goes in a message's `imageUrl` or as an `avatar`.
   * Rejects with a {@link SwitchboardError}: `unauthorized`, `too_large` (size or quota),
   * `unsupported_media_type`, `rate_limited`, or `unavailable` when the server cannot be reached.
   *
   * @example
   * const { url } = await sb.upload(input.files[0]);
   * await sb.send(groupId, { imageUrl: url });
   *
   * @param {Blob} file
   * @returns {Promise<{id: string, url: string, type: string, bytes: number}>}
   */
  async upload(file) {
    if (!this.token) throw new SwitchboardError("unauthorized", "sign in before uploading");
    const endpoint = new URL("/api/v1/media", this.url);
    endpoint.protocol = endpoint.protocol === "wss:" ? "https:" : "http:";
    let response;
    try {
      response = await fetch(endpoint, {
        method: "POST", body: file,
        headers: { Authorization: `Bearer ${this.token}`, "Content-Type": file.type || "application/octet-stream" },
      });
    } catch {
      throw new SwitchboardError("unavailable", "the upload could not reach the server; try again in a moment");
    }
    const reply = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new SwitchboardError(reply.error ?? "internal", reply.message ?? `the upload failed (HTTP ${response.status})`);
    }
    return reply;
  }

  /**
   * The messages waiting in the outbox, oldest first (`{group, text|imageUrl, clientId}`).
   *
   * @returns {object[]}
   */
  get unsent() {
    return this.#outbox.map((entry) => ({ ...entry.args }));
  }

  /**
   * Closes the connection for good: no reconnect; pending requests reject.
   */
  close() {
    this.#setState("closed");
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#expiryTimer);
    clearInterval(this.#keepAliveTimer);
    globalThis.removeEventListener?.("online", this.#browserOnline);
    this.#socket?.close(1000);
    this.#failPending("the connection was closed");
  }

  // Connection.

  #open() {
    this.#setState("connecting");
    const socket = new WebSocket(this.url);
    this.#socket = socket;
    socket.onopen = () => this.#opened(socket);
    socket.onmessage = (event) => this.#received(event.data);
    socket.onclose = () => {
      if (this.#socket === socket) this.#lost();
    };
  }

  async #opened(socket) {
    try {
      if (this.token) {
        try {
          const reply = await this.#call("auth", { token: this.token });
          this.user = reply.user;
          this.#watchExpiry();
          this.#emit("auth", this.user);
        } catch (error) {
          if (error.code !== "unauthorized") throw error;
          this.#signedOut("expired");
        }
      }
      if (this.user) await this.#resubscribe();
    } catch {
      // The connection dropped or stalled while signing in: start over.
      if (this.#socket === socket) socket.close();
      return;
    }
    if (this.#socket !== socket) return;
    this.#attempt = 0;
    this.#setState("online");
    this.#keepAliveTimer = setInterval(() => this.#ping(socket), this.#options.keepAlive);
    for (const entry of this.#outbox) this.#transmit(entry);
  }

  #lost() {
    clearInterval(this.#keepAliveTimer);
    this.#socket = null;
    this.#failPending("the connection to the server was lost");
    if (this.state === "closed") return;
    // Full jitter over an exponential window, so a restarted server is not hit by every
    // client at the same instant.
    const window = Math.min(this.#options.maxDelay, this.#options.minDelay * 2 ** this.#attempt);
    const delay = window / 2 + Math.random() * (window / 2);
    this.#attempt += 1;
    this.reconnectAt = Date.now() + delay;
    this.#setState("offline");
    this.#reconnectTimer = setTimeout(() => this.#reconnectNow(), delay);
  }

  #reconnectNow() {
    clearTimeout(this.#reconnectTimer);
    this.reconnectAt = 0;
    if (this.state === "offline") this.#open();
  }

  /** The browser says the network is back: reconnect now rather than at the backoff's time. */
  #browserOnline = () => {
    this.#attempt = 0;
    this.#reconnectNow();
  };

  async #ping(socket) {
    try {
      await this.#call("ping", {}, this.#options.requestTimeout);
    } catch {
      if (this.#socket === socket) socket.close();
    }
  }

  // Subscriptions: renewed after a reconnect, paging through everything missed.

  async #resubscribe() {
    for (const [group, subscription] of this.#subscriptions) {
      const args = { group, limit: 200 };
      if (subscription.since) args.since = subscription.since;
      else if (subscription.limit) args.limit = subscription.limit;
      let reply;
      try {
        reply = await this.#call("subscribe", args);
      } catch (error) {
        if (error.code === "forbidden" || error.code === "not_found") {
          this.#subscriptions.delete(group);
          continue;
        }
        throw error;
      }
      let { messages, more } = reply;
      for (;;) {
        for (const message of messages) {
          this.#saw(group, message);
          this.#emit("message", { op: "message", group, message, catchUp: true });
        }
        if (!more || !args.since || messages.length === 0) break;
        ({ messages, more } = await this.#call("history", { group, after: messages.at(-1).id, limit: 200 }));
      }
      this.#emit("resubscribed", { group, reply });
    }
  }

  #saw(group, message) {
    const subscription = this.#subscriptions.get(group);
    if (subscription && (!subscription.since || message.id > subscription.since)) subscription.since = message.id;
  }

  // Requests and replies.

  #call(op, args = {}, timeout = this.#options.requestTimeout) {
    const socket = this.#socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new SwitchboardError("unavailable", "not connected to the server"));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new SwitchboardError("timeout", `no reply to ${op} within ${timeout / 1000} s`));
      }, timeout);
      this.#pending.set(id, { resolve, reject, timer });
      socket.send(JSON.stringify({ ...args, op, id }));
    });
  }

  #transmit(entry) {
    if (entry.inFlight) return;
    entry.inFlight = true;
    const socket = this.#socket;
    const id = this.#nextId++;
    // No timeout: a send stays in the outbox until the server answers, on this connection or,
    // resent with the same clientId, on a later one.
    this.#pending.set(id, {
      send: entry,
      resolve: (reply) => {
        this.#outbox.splice(this.#outbox.indexOf(entry), 1);
        this.#saw(entry.args.group, reply.message);
        entry.resolve(reply.message);
      },
      reject: (error) => {
        this.#outbox.splice(this.#outbox.indexOf(entry), 1);
        entry.reject(error);
      },
    });
    socket.send(JSON.stringify({ ...entry.args, op: "send", id }));
  }

  #received(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (frame.id !== undefined && this.#pending.has(frame.id)) {
      const pending = this.#pending.get(frame.id);
      this.#pending.delete(frame.id);
      clearTimeout(pending.timer);
      if (frame.op === "error") {
        if (frame.code === "unauthorized" && this.user) this.#signedOut("expired");
        pending.reject(new SwitchboardError(frame.code, frame.message));
      } else {
        pending.resolve(frame);
      }
      return;
    }
    if (frame.op === "message") this.#saw(frame.group, frame.message);
    this.#emit(frame.op, frame);
  }

  /** Rejects every waiting request; sends go back to the outbox for the next connection. */
  #failPending(reason) {
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      if (pending.send) pending.send.inFlight = false;
      else pending.reject(new SwitchboardError("unavailable", reason));
    }
    this.#pending.clear();
  }

  // Sign-in state.

  #signedIn(reply) {
    this.token = reply.token;
    this.user = reply.user;
    this.#storage?.setItem(this.#options.tokenKey, reply.token);
    this.#watchExpiry();
    this.#emit("auth", this.user);
    return this.user;
  }

  /**
   * Signs out when the token reaches its expiry, as the server does with its connection then:
   * a page left open learns it at that moment, not at its next request. `recheck` is the wait
   * before asking the server again (`#expiryDue`), 0 to wait for the expiry by this clock.
   */
  #watchExpiry(recheck = 0) {
    clearTimeout(this.#expiryTimer);
    const expiry = this.token ? tokenExpiry(this.token) : null;
    if (expiry === null) return;
    const delay = recheck || Math.min(Math.max(expiry * 1000 - Date.now(), 0), longestDelay);
    this.#expiryTimer = setTimeout(() => this.#expiryDue(expiry, recheck), delay);
  }

  /**
   * This device's clock says the token has expired; the server's clock decides. A signed-in
   * request that changes nothing (`profile` without arguments) is refused once the server has
   * signed the connection out, and the refusal signs out here (`#received`). While it is still
   * answered (this clock runs ahead of the server's, or the server has not yet acted on the
   * expiry, which it does within 50 ms), the question is asked again after a wait that doubles
   * up to a minute. Offline, the reconnect's `auth` answers it.
   */
  async #expiryDue(expiry, recheck) {
    if (Date.now() < expiry * 1000) return this.#watchExpiry();
    if (!this.user) return;
    const token = this.token;
    try {
      await this.#call("profile");
    } catch {
      // Refused (signed out by #received) or not answered (offline, timed out): decided below.
    }
    if (this.user && this.token === token) {
      this.#watchExpiry(Math.min(Math.max(recheck * 2, expiryRecheckFirst), expiryRecheckLongest));
    }
  }

  #signedOut(reason) {
    clearTimeout(this.#expiryTimer);
    this.token = null;
    this.user = null;
    this.#storage?.removeItem(this.#options.tokenKey);
    this.#subscriptions.clear();
    for (const entry of this.#outbox.splice(0)) {
      entry.reject(new SwitchboardError("unauthorized", "signed out before the message was sent"));
    }
    this.#emit("signedout", reason);
  }

  #setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.#emit("state", state);
  }

  #emit(name, value) {
    for (const listener of this.#listeners.get(name) ?? []) {
      try {
        listener(value);
      } catch (error) {
        console.error(`a ${name} listener failed`, error);
      }
    }
  }
}
