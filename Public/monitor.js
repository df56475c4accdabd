// The operators' presence monitor (docs/operations.md, "The monitor page"). It trades the admin
// token for a short-lived stream token (EventSource cannot send headers), follows
// /api/v1/presence/stream, and reads /metrics every two seconds for connections and rates.

const state = {
  groups: new Map(), // id -> {name, online, users: Set}
  rooms: new Map(),  // name -> {online, users: Set}
  chosen: null,      // {kind: 'group' | 'room', key}
  lastEventId: '',
  source: null,
  previous: null,    // the last /metrics counters, with their time
};
window.monitorState = state;

const $ = (id) => document.getElementById(id);

function status(text, isError = false) {
  $('status').textContent = text;
  $('status').className = isError ? 'error' : '';
}

async function streamToken(adminToken) {
  const response = await fetch('/api/v1/presence/token', {
    method: 'POST', headers: {Authorization: `Bearer ${adminToken}`}, cache: 'no-store',
  });
  if (!response.ok) throw new Error(response.status === 403 ? 'the admin token was refused' : `token request failed (${response.status})`);
  return (await response.json()).token;
}

async function connect(adminToken) {
  state.source?.close();
  let token;
  try {
    token = await streamToken(adminToken);
  } catch (error) {
    status(error.message, true);
    return;
  }
  const query = new URLSearchParams({token});
  if (state.lastEventId) query.set('lastEventId', state.lastEventId);
  const source = new EventSource(`/api/v1/presence/stream?${query}`);
  state.source = source;
  source.addEventListener('open', () => status('Live.'));
  source.addEventListener('snapshot', (event) => { state.lastEventId = event.lastEventId; applySnapshot(JSON.parse(event.data)); });
  source.addEventListener('presence', (event) => { state.lastEventId = event.lastEventId; applyChange(JSON.parse(event.data)); });
  source.addEventListener('error', () => {
    // The browser reconnects by itself while the stream token lives; once it gives up, a new
    // token and a new EventSource resume from the last event seen.
    if (source.readyState === EventSource.CLOSED && state.source === source) {
      status('Reconnecting…', true);
      setTimeout(() => connect(adminToken), 2000);
    }
  });
}

function applySnapshot(snapshot) {
  state.groups = new Map(snapshot.groups.map((g) => [g.id, {name: g.name, online: g.online, users: new Set(g.users)}]));
  state.rooms = new Map(snapshot.rooms.map((r) => [r.name, {online: r.online, users: new Set(r.users)}]));
  render();
}

// Changes are set operations with an absolute count, so applying one twice changes nothing.
function applyChange(change) {
  const [map, key, fresh] = change.group !== undefined
    ? [state.groups, change.group, {name: change.name, online: 0, users: new Set()}]
    : [state.rooms, change.room, {online: 0, users: new Set()}];
  const entry = map.get(key) ?? fresh;
  change.joined.forEach((user) => entry.users.add(user));
  change.left.forEach((user) => entry.users.delete(user));
  entry.online = change.online;
  if (entry.online === 0) map.delete(key); else map.set(key, entry);
  render();
}

function row(cells, pick) {
  const tr = document.createElement('tr');
  for (const text of cells) {
    const td = document.createElement('td');
    td.textContent = text;
    tr.append(td);
  }
  if (pick) {
    tr.className = 'pick';
    if (state.chosen && state.chosen.kind === pick.kind && state.chosen.key === pick.key) tr.classList.add('chosen');
    tr.addEventListener('click', () => { state.chosen = pick; render(); });
  }
  return tr;
}

function render() {
  const byCount = (a, b) => b[1].online - a[1].online || String(a[0]).localeCompare(String(b[0]));
  $('groups').replaceChildren(...[...state.groups].sort(byCount).map(([id, g]) =>
    row([g.name ?? id, g.online], {kind: 'group', key: id})));
  $('rooms').replaceChildren(...[...state.rooms].sort(byCount).map(([name, r]) =>
    row([name, r.online], {kind: 'room', key: name})));
  const chosen = state.chosen && (state.chosen.kind === 'group' ? state.groups : state.rooms).get(state.chosen.key);
  $('chosen').textContent = state.chosen ? (chosen?.name ?? state.chosen.key) : '(choose a group or room)';
  $('online-list').replaceChildren(...[...(chosen?.users ?? [])].sort().map((user) => {
    const li = document.createElement('li');
    li.textContent = user;
    return li;
  }));
}

// Reads the samples of the Prometheus text format that the page shows.
function parseMetrics(text) {
  const samples = new Map();
  for (const line of text.split('\n')) {
    const match = /^(switchboard_[a-z_]+)(?:\{(\w+)="([^"]*)"\})? (\S+)$/.exec(line);
    if (match) samples.set(`${match[1]}/${match[3] ?? ''}`, Number(match[4]));
  }
  return samples;
}

async function pollMetrics() {
  try {
    const samples = parseMetrics(await (await fetch('/metrics', {cache: 'no-store'})).text());
    const kinds = ['chat', 'room', 'echo', 'stream', 'http'];
    $('connections').replaceChildren(...kinds.map((kind) => row([kind, samples.get(`switchboard_connections/${kind}`) ?? 0])));
    $('online-users').textContent = samples.get('switchboard_online_users/') ?? '–';
    const now = performance.now();
    if (state.previous) {
      const seconds = (now - state.previous.time) / 1000;
      const rate = (name, kind) => ((samples.get(`${name}/${kind}`) ?? 0) - (state.previous.samples.get(`${name}/${kind}`) ?? 0)) / seconds;
      $('rates').replaceChildren(...['chat', 'room', 'echo'].map((kind) => row([kind,
        rate('switchboard_messages_received_total', kind).toFixed(1),
        rate('switchboard_messages_sent_total', kind).toFixed(1)])));
    }
    state.previous = {time: now, samples};
  } catch {
    // The next poll tries again; the stream's status line says whether the server is there.
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    status('Connecting…');
    connect($('token').value);
  });
  pollMetrics();
  setInterval(pollMetrics, 2000);
});
