// The console page: one WebSocket to a path of this server, a transcript, a line to send.

import { el } from "/ui.js";

const $ = (id) => document.getElementById(id);
let socket = null;

function log(kind, text) {
  const list = $("log");
  list.append(el("li", { class: kind }, text));
  list.scrollTop = list.scrollHeight;
}

function setConnected(connected) {
  $("line").disabled = !connected;
  $("send-line").disabled = !connected;
  $("connect").textContent = connected ? "Disconnect" : "Connect";
  if (connected) $("line").focus();
}

for (const preset of document.querySelectorAll("[data-path]")) {
  preset.onclick = () => ($("path").value = preset.dataset.path);
}

$("connect-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if (socket) {
    socket.close(1000);
    return;
  }
  const path = $("path").value.trim();
  const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path.startsWith("/") ? path : "/" + path}`;
  log("note", `connecting to ${url}`);
  const current = new WebSocket(url);
  socket = current;
  current.onopen = () => {
    log("note", "connected");
    setConnected(true);
  };
  current.onmessage = (event) => log("in", typeof event.data === "string" ? event.data : "(binary message)");
  current.onclose = (event) => {
    log("note", `closed (${event.code}${event.reason ? " " + event.reason : ""})`);
    if (socket === current) socket = null;
    setConnected(false);
  };
});

$("send-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("line").value;
  if (!socket || socket.readyState !== WebSocket.OPEN || !text) return;
  socket.send(text);
  log("out", text);
  $("line").value = "";
});
