// The browser chat app: sign-in, the conversation list, a conversation, people, invites.
// All talk with the server goes through the client module (switchboard.js); this file keeps
// what the screen shows in `view` and redraws the parts that changed.

import { connect } from "/switchboard.js";
import { avatar, el, formatTime, openDialog, safeImageURL } from "/ui.js";

const $ = (id) => document.getElementById(id);
const sb = connect();

/** What the screen shows. */
const view = {
  users: new Map(), // user id -> {id, name, avatar, online}
  groups: new Map(), // group id -> {id, name, direct, members: [ids], createdAt, lastMessage, invite}
  online: new Map(), // group id -> Set of user ids online in it
  current: null, // the open conversation's group id
  messages: [], // the open conversation's messages, ascending by id; unsent ones at the end
  more: false, // whether older messages remain on the server
  loadingOlder: false,
  typing: new Map(), // user id -> timer, in the open conversation
  lastTypingSent: 0,
  mode: "login",
};

// Unread marks: per user, the last message id read in each group, kept across reloads.
const readKey = () => `switchboard.read.${sb.user?.id}`;
const lastRead = () => JSON.parse(localStorage.getItem(readKey()) ?? "{}");
function markRead(group, id) {
  const read = lastRead();
  if (id && (!read[group] || id > read[group])) {
    read[group] = id;
    localStorage.setItem(readKey(), JSON.stringify(read));
  }
}

// An invite link (/join/<code>) is remembered until the user is signed in, then joined.
const joinMatch = location.pathname.match(/^\/join\/([A-Za-z0-9_-]+)/);
if (joinMatch) sessionStorage.setItem("switchboard.join", joinMatch[1]);

// MARK: Connection state

sb.on("state", showConnection);
sb.on("auth", () => showView("app"));
sb.on("signedout", () => {
  resetView();
  showView("auth");
});
sb.on("state", (state) => {
  if (state === "online" && sb.user) loadEverything();
  if (state === "online" && !sb.user) showView("auth");
});

let countdown = 0;
function showConnection(state) {
  const banner = $("connection");
  document.body.dataset.connection = state;
  clearInterval(countdown);
  if (state === "online" || state === "closed") {
    banner.hidden = true;
    return;
  }
  banner.hidden = !sb.user;
  const render = () => {
    const seconds = Math.max(0, Math.ceil((sb.reconnectAt - Date.now()) / 1000));
    banner.textContent = state === "offline" && seconds > 0
      ? `Offline. Reconnecting in ${seconds} s… Messages you send now go out when the connection is back.`
      : "Connecting…";
  };
  render();
  if (state === "offline") countdown = setInterval(render, 1000);
}

function showView(name) {
  document.body.dataset.view = name;
  $("auth").hidden = name !== "auth";
  $("app").hidden = name !== "app";
  $("auth-invite").hidden = !sessionStorage.getItem("switchboard.join");
  if (name === "auth") setMode(view.mode);
}

function resetView() {
  view.users.clear();
  view.groups.clear();
  view.online.clear();
  view.current = null;
  view.messages = [];
  renderConversations();
  renderConversation();
}

// MARK: Signing in

function setMode(mode) {
  view.mode = mode;
  const signup = mode === "signup";
  $("tab-login").setAttribute("aria-selected", String(!signup));
  $("tab-signup").setAttribute("aria-selected", String(signup));
  for (const field of document.querySelectorAll(".signup-only")) field.hidden = !signup;
  $("auth-form").password.autocomplete = signup ? "new-password" : "current-password";
  $("auth-submit").textContent = signup ? "Create account" : "Log in";
  $("auth-error").textContent = "";
}

$("tab-login").onclick = () => setMode("login");
$("tab-signup").onclick = () => setMode("signup");

$("auth-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const error = $("auth-error");
  error.textContent = "";
  const email = form.email.value.trim();
  const password = form.password.value;
  if (!email || !password) {
    error.textContent = "Enter your email and password.";
    return;
  }
  $("auth-submit").disabled = true;
  try {
    if (view.mode === "signup") {
      const account = { email, password, name: form.name.value.trim() || email.split("@")[0] };
      if (form.avatar.value.trim()) account.avatar = form.avatar.value.trim();
      await sb.signup(account);
    } else {
      await sb.login(email, password);
    }
    form.password.value = "";
    loadEverything();
  } catch (failure) {
    error.textContent = sentence(failure.message);
  } finally {
    $("auth-submit").disabled = false;
  }
});

/** The server's messages start in lower case; on their own on screen they read as sentences. */
function sentence(text) {
  const value = String(text ?? "Something went wrong.");
  return value.charAt(0).toUpperCase() + value.slice(1) + (/[.!?]$/.test(value) ? "" : ".");
}

$("logout").onclick = () => sb.logout().catch(() => {});

// MARK: Loading

let loading = null;
function loadEverything() {
  loading ??= load().finally(() => (loading = null));
  return loading;
}

async function load() {
  try {
    showView("app");
    renderMe();
    const [{ users }, { groups }] = await Promise.all([sb.request("users"), sb.request("groups")]);
    for (const user of users) view.users.set(user.id, user);
    renderMe();
    // After a reconnect the client module has renewed the known groups' subscriptions and
    // delivered what was missed; only groups new to this page are subscribed here.
    await Promise.all(groups.filter((summary) => !view.groups.has(summary.id)).map((summary) => track(summary.id, summary)));
    renderConversations();
    const code = sessionStorage.getItem("switchboard.join");
    if (code) await joinByInvite(code);
  } catch (failure) {
    console.warn("loading failed", failure);
  }
}

/** Subscribes to a group (latest message only) so the list shows its activity live. */
async function track(id, summary) {
  const reply = await sb.subscribe(id, { limit: 1 });
  rememberGroup(reply.group, summary?.lastMessage ?? reply.messages.at(-1) ?? null);
}

function rememberGroup(group, lastMessage) {
  const known = view.groups.get(group.id);
  view.groups.set(group.id, {
    ...known,
    ...group,
    direct: group.invite === null || group.invite === undefined,
    lastMessage: newer(known?.lastMessage, lastMessage),
  });
  view.online.set(group.id, new Set(group.online));
}

const newer = (a, b) => (!a ? b ?? null : !b ? a : b.id > a.id ? b : a);

async function joinByInvite(code) {
  sessionStorage.removeItem("switchboard.join");
  history.replaceState(null, "", "/");
  try {
    const { group } = await sb.request("join", { invite: code });
    await track(group.id);
    renderConversations();
    await openConversation(group.id);
  } catch (failure) {
    alertStatus(sentence(failure.message));
  }
}

function alertStatus(text) {
  const banner = $("connection");
  banner.textContent = text;
  banner.hidden = false;
  setTimeout(() => showConnection(sb.state), 5000);
}

// MARK: The conversation list

function titleOf(group) {
  if (!group) return "";
  if (group.direct) {
    const other = group.members?.find((id) => id !== sb.user?.id);
    if (other && view.users.has(other)) return view.users.get(other).name;
  }
  return group.name;
}

function preview(message) {
  if (!message) return "No messages yet";
  const who = message.user === sb.user?.id ? "You" : view.users.get(message.user)?.name ?? "Someone";
  return `${who}: ${message.imageUrl ? "Image" : message.text}`;
}

function renderConversations() {
  const list = $("conversations");
  const read = lastRead();
  const groups = [...view.groups.values()].sort(
    (a, b) => (b.lastMessage?.createdAt ?? b.createdAt ?? 0) - (a.lastMessage?.createdAt ?? a.createdAt ?? 0));
  list.replaceChildren(...groups.map((group) => {
    const last = group.lastMessage;
    const unread = last && last.user !== sb.user?.id && (!read[group.id] || last.id > read[group.id]) && group.id !== view.current;
    const other = group.direct ? view.users.get(group.members?.find((id) => id !== sb.user?.id)) : null;
    const button = el("button", {
      type: "button", class: "conversation-item", "data-group": group.id,
      "aria-current": group.id === view.current ? "true" : undefined,
    },
    avatar(other ?? { id: group.id, name: titleOf(group) }),
    el("span", { class: "item-text" },
      el("span", { class: "item-title" }, titleOf(group)),
      el("span", { class: "item-preview" }, preview(last))),
    el("span", { class: "item-meta" },
      last ? el("time", {}, formatTime(last.createdAt)) : null,
      unread ? el("span", { class: "unread", "aria-label": "unread" }) : null));
    button.onclick = () => openConversation(group.id);
    return el("li", { class: unread ? "unread-item" : undefined }, button);
  }));
  $("no-conversations").hidden = groups.length > 0;
}

// MARK: A conversation

async function openConversation(id) {
  view.current = id;
  view.messages = [];
  view.more = false;
  clearTyping();
  document.body.dataset.pane = "conversation";
  renderConversation();
  renderConversations();
  const { messages, more } = await sb.request("history", { group: id, limit: 50 });
  if (view.current !== id) return;
  view.messages = mergeSorted(view.messages, messages);
  view.more = more;
  renderMessages({ toBottom: true });
  acknowledge();
  $("message-input").focus();
}

$("back").onclick = () => {
  view.current = null;
  document.body.dataset.pane = "list";
  renderConversation();
  renderConversations();
};

function renderConversation() {
  const group = view.groups.get(view.current);
  const open = Boolean(group);
  $("placeholder").hidden = open;
  for (const id of ["conversation-header", "messages", "composer", "members"]) $(id).hidden = !open;
  if (!open) return;
  $("conversation-title").textContent = titleOf(group);
  $("invite").hidden = group.direct;
  renderPresence();
  renderMessages();
}

function renderPresence() {
  const group = view.groups.get(view.current);
  if (!group) return;
  const online = view.online.get(group.id) ?? new Set();
  const members = group.members ?? [];
  $("conversation-online").textContent = `${members.length} member${members.length === 1 ? "" : "s"} · ${online.size} online`;
  $("members").replaceChildren(...members.map((id) => {
    const user = view.users.get(id) ?? { id, name: "…" };
    const isOnline = online.has(id);
    return el("li", { "data-user": id, "data-online": String(isOnline), title: `${user.name}: ${isOnline ? "online" : "offline"}` },
      avatar(user, "small"), el("span", {}, user.name), el("span", { class: "visually-hidden" }, isOnline ? " (online)" : " (offline)"));
  }));
}

/** Merges messages into an ascending list by id, replacing the optimistic copy of a sent one. */
function mergeSorted(list, incoming) {
  const byId = new Map(list.filter((m) => m.id).map((m) => [m.id, m]));
  let unsent = list.filter((m) => !m.id);
  for (const message of incoming) {
    byId.set(message.id, { ...byId.get(message.id), ...message });
    if (message.clientId) unsent = unsent.filter((m) => m.clientId !== message.clientId || m.user !== message.user);
  }
  return [...[...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), ...unsent];
}

function renderMessages({ toBottom = false, keepFromBottom = null } = {}) {
  const list = $("messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  const me = sb.user?.id;
  // Who has read each message: a receipt on a message counts for every earlier one too.
  const readers = new Map();
  const seen = new Set();
  for (let index = view.messages.length - 1; index >= 0; index -= 1) {
    const message = view.messages[index];
    for (const user of Object.keys(message.receivedBy ?? {})) if (user !== message.user) seen.add(user);
    readers.set(message, new Set(seen));
  }
  const items = [];
  let previous = null;
  if (view.more) items.push(el("li", { class: "older muted" }, "Scroll up for older messages"));
  for (const message of view.messages) {
    const mine = message.user === me;
    const author = view.users.get(message.user) ?? { id: message.user, name: "Someone" };
    const grouped = previous && previous.user === message.user && message.createdAt - previous.createdAt < 300000;
    const body = message.imageUrl && safeImageURL(message.imageUrl)
      ? el("a", { href: safeImageURL(message.imageUrl), target: "_blank", rel: "noopener noreferrer", class: "image-link" },
        el("img", { src: safeImageURL(message.imageUrl), alt: `Image from ${author.name}`, loading: "lazy", referrerpolicy: "no-referrer" }))
      : el("p", { class: "text" }, message.text ?? message.imageUrl ?? "");
    items.push(el("li", {
      class: `message ${mine ? "mine" : "theirs"}${grouped ? " grouped" : ""}${message.failed ? " failed" : ""}`,
      "data-id": message.id ?? undefined, "data-client-id": message.clientId ?? undefined,
    },
    mine || grouped ? null : avatar(author, "small"),
    el("div", { class: "bubble" },
      mine || grouped ? null : el("span", { class: "author" }, author.name),
      body,
      el("span", { class: "meta" },
        el("time", {}, formatTime(message.createdAt)),
        mine ? status(message, readers.get(message)) : null))));
    previous = message;
  }
  list.replaceChildren(...items);
  if (keepFromBottom !== null) list.scrollTop = list.scrollHeight - keepFromBottom;
  else if (toBottom || atBottom) list.scrollTop = list.scrollHeight;
}

function status(message, readers) {
  if (message.failed) return el("span", { class: "status failed" }, "Not sent");
  if (!message.id) return el("span", { class: "status", "data-status": "sending" }, "Sending…");
  if (readers?.size) {
    const names = [...readers].map((id) => view.users.get(id)?.name ?? "someone").join(", ");
    return el("span", { class: "status read", "data-status": "read", title: `Read by ${names}` }, "✓✓ Read");
  }
  return el("span", { class: "status", "data-status": "delivered", title: "Delivered to the server" }, "✓ Delivered");
}

// Older messages as the list is scrolled to its top.
$("messages").addEventListener("scroll", async () => {
  const list = $("messages");
  if (list.scrollTop > 200 || !view.more || view.loadingOlder || !view.current) return;
  const group = view.current;
  const oldest = view.messages.find((m) => m.id);
  if (!oldest) return;
  view.loadingOlder = true;
  try {
    const { messages, more } = await sb.request("history", { group, before: oldest.id, limit: 100 });
    if (view.current !== group) return;
    const fromBottom = list.scrollHeight - list.scrollTop;
    view.messages = mergeSorted(view.messages, messages);
    view.more = more;
    renderMessages({ keepFromBottom: fromBottom });
  } catch (failure) {
    console.warn("could not load older messages", failure);
  } finally {
    view.loadingOlder = false;
  }
});

/** Marks the open conversation read, and tells the others with a receipt on its latest message. */
function acknowledge() {
  if (!view.current || document.visibilityState !== "visible") return;
  const latest = [...view.messages].reverse().find((m) => m.id);
  if (!latest) return;
  markRead(view.current, latest.id);
  renderConversations();
  const theirs = [...view.messages].reverse().find((m) => m.id && m.user !== sb.user?.id);
  if (theirs && !theirs.receivedBy?.[sb.user.id]) {
    theirs.receivedBy = { ...theirs.receivedBy, [sb.user.id]: Date.now() };
    sb.request("receipt", { group: view.current, message: theirs.id }).catch(() => {});
  }
}
document.addEventListener("visibilitychange", acknowledge);

// MARK: Sending

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("message-input");
  const text = input.value.trim();
  if (!text || !view.current) return;
  input.value = "";
  // The message ends this bout of typing (the others stop showing it), so the next keystroke
  // may announce typing again at once.
  view.lastTypingSent = 0;
  send({ text });
});

$("message-input").addEventListener("input", () => {
  if (!view.current || Date.now() - view.lastTypingSent < 2500 || !$("message-input").value) return;
  view.lastTypingSent = Date.now();
  sb.request("typing", { group: view.current }).catch(() => {});
});

function send(content) {
  const group = view.current;
  const pending = { ...content, clientId: crypto.randomUUID(), user: sb.user.id, createdAt: Date.now(), group };
  view.messages.push(pending);
  renderMessages({ toBottom: true });
  sb.send(group, { ...content, clientId: pending.clientId }).then((message) => {
    received(group, message);
  }, (failure) => {
    pending.failed = true;
    if (view.current === group) renderMessages();
    alertStatus(sentence(failure.message));
  });
}

$("attach").onclick = () => openDialog($("image-dialog"));
$("image-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const url = event.target.url.value.trim();
  if (!safeImageURL(url)) {
    event.target.querySelector(".error").textContent = "Give an http:// or https:// image URL.";
    return;
  }
  event.target.url.value = "";
  $("image-dialog").close();
  send({ imageUrl: url });
});

// MARK: Events from the server

function received(group, message) {
  const known = view.groups.get(group);
  if (known) {
    known.lastMessage = newer(known.lastMessage, message);
  }
  if (group === view.current) {
    view.messages = mergeSorted(view.messages, [message]);
    stopTyping(message.user);
    renderMessages();
    if (message.user !== sb.user?.id) acknowledge();
  }
  renderConversations();
  if (!known) track(group).then(renderConversations, () => {});
}

sb.on("message", ({ group, message }) => received(group, message));

sb.on("receipt", ({ group, message, user, at }) => {
  if (group !== view.current) return;
  const target = view.messages.find((m) => m.id === message);
  if (!target) return;
  target.receivedBy = { ...target.receivedBy, [user]: at };
  renderMessages();
});

sb.on("presence", ({ group, joined, left }) => {
  const online = view.online.get(group) ?? new Set();
  for (const id of joined) online.add(id);
  for (const id of left) online.delete(id);
  view.online.set(group, online);
  if (group === view.current) renderPresence();
});

sb.on("resubscribed", ({ group, reply }) => {
  rememberGroup(reply.group, null);
  if (group === view.current) renderPresence();
});

sb.on("member", async ({ group, user, action }) => {
  const known = view.groups.get(group);
  if (!known) return;
  const members = new Set(known.members);
  if (action === "joined") members.add(user);
  else members.delete(user);
  known.members = [...members];
  if (!view.users.has(user)) {
    const { users } = await sb.request("users").catch(() => ({ users: [] }));
    for (const each of users) view.users.set(each.id, each);
  }
  if (group === view.current) renderPresence();
});

sb.on("typing", ({ group, user }) => {
  if (group !== view.current || user === sb.user?.id) return;
  clearTimeout(view.typing.get(user));
  view.typing.set(user, setTimeout(() => stopTyping(user), 4000));
  renderTyping();
});

function stopTyping(user) {
  clearTimeout(view.typing.get(user));
  if (view.typing.delete(user)) renderTyping();
}

function clearTyping() {
  for (const timer of view.typing.values()) clearTimeout(timer);
  view.typing.clear();
  renderTyping();
}

function renderTyping() {
  const names = [...view.typing.keys()].map((id) => view.users.get(id)?.name ?? "Someone");
  $("typing").textContent = names.length === 0 ? "" : `${names.join(", ")} ${names.length === 1 ? "is" : "are"} typing…`;
}

// The list may have new conversations started elsewhere (a 1:1 someone opened with you).
setInterval(async () => {
  if (sb.state !== "online" || !sb.user) return;
  const { groups } = await sb.request("groups").catch(() => ({ groups: [] }));
  const fresh = groups.filter((summary) => !view.groups.has(summary.id));
  await Promise.all(fresh.map((summary) => track(summary.id, summary).catch(() => {})));
  if (fresh.length) renderConversations();
}, 15000);

// MARK: People, groups, invites, profile

$("open-people").onclick = async () => {
  openDialog($("people-dialog"));
  const { users } = await sb.request("users").catch(() => ({ users: [] }));
  for (const user of users) view.users.set(user.id, user);
  $("people").replaceChildren(...users.map((user) => {
    const self = user.id === sb.user?.id;
    const button = el("button", { type: "button", class: "secondary", disabled: self, "aria-label": `Message ${user.name}` }, self ? "You" : "Message");
    button.onclick = async () => {
      const { group } = await sb.request("direct", { user: user.id });
      $("people-dialog").close();
      await track(group.id);
      renderConversations();
      await openConversation(group.id);
    };
    return el("li", { "data-user": user.id },
      avatar(user), el("span", { class: "person" }, el("span", {}, user.name),
        el("span", { class: `presence-dot ${user.online ? "on" : ""}`, "aria-label": user.online ? "online" : "offline" })),
      button);
  }));
};

$("open-new-group").onclick = () => openDialog($("new-group-dialog"));
$("new-group-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    const { group } = await sb.request("create", { name: form.name.value.trim() });
    form.name.value = "";
    $("new-group-dialog").close();
    await track(group.id);
    renderConversations();
    await openConversation(group.id);
  } catch (failure) {
    form.querySelector(".error").textContent = sentence(failure.message);
  }
});

$("invite").onclick = async () => {
  try {
    const { url } = await sb.request("invite", { group: view.current });
    $("invite-link").value = new URL(url, location.origin).href;
    $("invite-copied").textContent = "";
    openDialog($("invite-dialog"));
    $("invite-link").select();
  } catch (failure) {
    alertStatus(sentence(failure.message));
  }
};

$("copy-invite").onclick = async () => {
  const link = $("invite-link");
  try {
    await navigator.clipboard.writeText(link.value);
  } catch {
    link.select();
    document.execCommand("copy");
  }
  $("invite-copied").textContent = "Copied.";
};

function renderMe() {
  const me = view.users.get(sb.user?.id) ?? sb.user;
  if (!me) return;
  $("me").replaceChildren(avatar(me), el("span", { class: "me-name" }, me.name));
}

$("me").onclick = () => {
  const form = $("profile-form");
  form.name.value = sb.user.name;
  form.avatar.value = sb.user.avatar ?? "";
  openDialog($("profile-dialog"));
};

$("profile-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    const { user } = await sb.request("profile", { name: form.name.value.trim(), avatar: form.avatar.value.trim() || null });
    sb.user = user;
    view.users.set(user.id, user);
    renderMe();
    $("profile-dialog").close();
  } catch (failure) {
    form.querySelector(".error").textContent = sentence(failure.message);
  }
});
