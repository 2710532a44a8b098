// The dev UI: apps, sessions, chat with streaming, the event timeline with state
// diffs, the workflow graph, pending interrupts, rewind and fork, and evaluation.
// Acting on a session lives in its own modules: state edits, artifacts, names, stop.

import { api, apiKey, setUnauthorizedHandler } from "./api.js";
import { artifactsTab } from "./artifacts.js";
import { chatView } from "./chat.js";
import { h, icon } from "./dom.js";
import { evalTab } from "./eval.js";
import { renderGraph } from "./graph.js";
import { inboxView } from "./inbox.js";
import { installKeys } from "./keys.js";
import { dateTime, invocations, nodeStatuses, short, shortId, time } from "./model.js";
import { nodePanel } from "./node_panel.js";
import { runsTab } from "./runs.js";
import { sessionLog } from "./session_log.js";
import { lineage, renderSessionHead, sessionTitle } from "./session_names.js";
import { stateEditor } from "./state_edit.js";
import { stopRun } from "./stop.js";
import { timelineView } from "./timeline.js";
import { traceTab } from "./trace.js";

const $ = (id) => document.getElementById(id);

const ui = {
  apps: [],
  app: null,
  appInfo: null,
  user: localStorage.getItem("cairn.user") || "user",
  sessions: [],
  nextCursor: null,
  total: 0,
  sessionId: null,
  detail: null,
  interrupts: [],
  graphInvocation: null,
  running: false,
  runningInvocation: null, // the streamed run's invocation id, once an event names it
  infos: new Map(), // session id -> its name, first message and lineage (SessionInfoJSON)
  tab: "timeline",
};

// The window of the session's log (session_log.js) and the two panes that show it.
const log = sessionLog(api);
const timeline = timelineView({
  root: $("timeline"),
  inspector: $("inspector"),
  controls: {
    form: $("timeline-filters"),
    text: $("timeline-search"),
    kind: $("timeline-kind"),
    author: $("timeline-author"),
    node: $("timeline-node"),
    status: $("timeline-status"),
  },
  log,
  api,
  context: () => ({ sessionId: ui.sessionId, graph: Boolean(ui.appInfo?.graph), running: ui.running }),
  act: {
    rewind: (invocationId) => rewind(invocationId),
    fork: (eventId) => fork(eventId),
    graph: (invocationId) => { ui.graphInvocation = invocationId; showTab("graph"); },
    showTimeline: () => showTab("timeline"),
  },
  toast: (message) => toast(message),
  fail: (error) => fail(error),
});
const chat = chatView({
  box: $("messages"),
  log,
  select: (eventId) => timeline.select(eventId, true),
  hasSession: () => Boolean(ui.sessionId),
});

// ---------------------------------------------------------------- feedback

function toast(message, kind = "info") {
  const item = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  $("toasts").append(item);
  setTimeout(() => item.classList.add("leaving"), 4200);
  setTimeout(() => item.remove(), 4700);
}

function fail(error) {
  if (error && error.status === 401) return; // the key bar is showing
  console.error(error);
  toast(error?.message || String(error), "error");
}

function setStatus() {
  const el = $("run-status");
  el.className = "run-status";
  if (ui.running) {
    el.classList.add("running");
    el.textContent = "running";
  } else if (ui.interrupts.length) {
    el.classList.add("waiting");
    el.textContent = "waiting for you";
  } else if (ui.sessionId) {
    el.classList.add("idle");
    el.textContent = "idle";
  } else el.textContent = "";
  $("send").disabled = ui.running;
  $("stop").hidden = !ui.running;
  document.body.classList.toggle("is-running", ui.running);
  timeline.refreshHeaders();
}

// ---------------------------------------------------------------- routing

function writeHash() {
  const parts = [ui.app, ui.user, ui.sessionId].filter((p) => p !== null && p !== undefined && p !== "");
  const hash = `#${parts.map(encodeURIComponent).join("/")}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function readHash() {
  const [app, user, session] = location.hash.slice(1).split("/").map(decodeURIComponent);
  return { app: app || null, user: user || null, session: session || null };
}

// ---------------------------------------------------------------- apps and sessions

async function start() {
  const wanted = readHash();
  if (wanted.user) ui.user = wanted.user;
  $("user-id").value = ui.user;
  if (wanted.app && wanted.session) log.prefetch({ app: wanted.app, user: ui.user, sessionId: wanted.session });
  try {
    ui.apps = await api.listApps();
  } catch (error) {
    return fail(error);
  }
  $("key-form").hidden = true;
  const select = $("app-select");
  select.replaceChildren(...ui.apps.map((name) => h("option", { value: name }, name)));
  if (!ui.apps.length) {
    $("messages").replaceChildren(h("div", { class: "empty" }, "This server has no apps. Put agent packages in its agents directory."));
    return;
  }
  ui.app = ui.apps.includes(wanted.app) ? wanted.app : ui.apps[0];
  select.value = ui.app;
  await openApp(wanted.session);
}

async function openApp(sessionId = null) {
  ui.appInfo = null;
  // The app's description, its sessions, the session asked for and the eval tab load side by side.
  const described = api.appInfo(ui.app).then((info) => {
    ui.appInfo = info;
  }, fail).then(() => {
    const kind = ui.appInfo?.kind || "agent";
    $("app-kind").textContent = kind;
    $("app-kind").className = `badge ${kind}`;
    $("graph-tab").hidden = !ui.appInfo?.graph;
    if (!ui.appInfo?.graph && ui.tab === "graph") showTab("timeline");
    if (ui.tab === "graph") renderGraphTab();
    timeline.refreshHeaders();
  });
  await Promise.all([described, loadSessions(true), selectSession(sessionId || null), evalView.appChanged()]);
}

async function loadSessions(reset) {
  if (!ui.app) return;
  try {
    const page = await api.sessionsPage(ui.app, ui.user, reset ? null : ui.nextCursor);
    ui.sessions = reset ? page.sessions : [...ui.sessions, ...page.sessions.filter((s) => !ui.sessions.some((t) => t.id === s.id))];
    ui.nextCursor = page.nextCursor || null;
    ui.total = page.total ?? ui.sessions.length;
    for (const info of page.infos || []) ui.infos.set(info.sessionId, info);
  } catch (error) {
    fail(error);
  }
  renderSessions();
}

function renderSessions() {
  $("session-total").textContent = ui.total ? String(ui.total) : "";
  const list = $("session-list");
  if (!ui.sessions.length) {
    list.replaceChildren(h("li", { class: "empty small" }, `No sessions for “${ui.user}” yet.`));
  } else {
    list.replaceChildren(...ui.sessions.map(sessionItem));
  }
  $("more-sessions").hidden = !ui.nextCursor;
}

function sessionItem(session) {
  const remove = h("button", { class: "icon delete", title: "Delete session", "aria-label": `delete ${session.id}` }, "✕");
  remove.addEventListener("click", async (event) => {
    event.stopPropagation();
    if (!remove.classList.contains("confirm")) {
      remove.classList.add("confirm");
      remove.textContent = "Delete?";
      setTimeout(() => {
        remove.classList.remove("confirm");
        remove.textContent = "✕";
      }, 3000);
      return;
    }
    try {
      await api.deleteSession(ui.app, ui.user, session.id);
      toast(`Deleted session ${shortId(session.id)}`);
      if (ui.sessionId === session.id) await selectSession(null);
      await loadSessions(true);
    } catch (error) {
      fail(error);
    }
  });
  const keys = Object.keys(session.state || {}).length;
  return h("li", {
    class: `session-item${session.id === ui.sessionId ? " active" : ""}`,
    dataset: { sessionId: session.id },
    tabindex: 0,
    onclick: () => selectSession(session.id),
    onkeydown: (e) => e.key === "Enter" && selectSession(session.id),
  },
  h("div", { class: "session-name", title: session.id }, sessionTitle(session.id, ui.infos.get(session.id))),
  lineage(ui.infos.get(session.id), selectSession),
  h("div", { class: "session-meta" }, dateTime(session.lastUpdateTime), keys ? ` · ${keys} state key${keys > 1 ? "s" : ""}` : ""),
  remove);
}

async function newSession() {
  if (!ui.app) return null;
  try {
    const session = await api.createSession(ui.app, ui.user, {});
    await loadSessions(true);
    await selectSession(session.id);
    return session.id;
  } catch (error) {
    fail(error);
    return null;
  }
}

async function selectSession(sessionId) {
  ui.sessionId = sessionId;
  ui.graphInvocation = null;
  chat.settle();
  timeline.sessionChanged();
  writeHash();
  evalView.sessionChanged();
  runsView.sessionChanged();
  for (const item of document.querySelectorAll(".session-item")) {
    item.classList.toggle("active", item.dataset.sessionId === sessionId);
  }
  if (!sessionId) {
    ui.detail = null;
    ui.interrupts = [];
    log.clear();
    renderAll();
    return;
  }
  await refreshSession(true);
}

/** The session's summary and interrupts; its log's newest page (`reopen`) or what is new. */
async function refreshSession(reopen = false) {
  const sid = ui.sessionId;
  if (!sid) return;
  const where = { app: ui.app, user: ui.user, sessionId: sid };
  try {
    const [, detail, interrupts] = await Promise.all([
      reopen || log.where?.sessionId !== sid ? log.open(where) : log.newer(),
      api.sessionDetail(ui.app, ui.user, sid),
      api.interrupts(ui.app, ui.user, sid),
    ]);
    if (sid !== ui.sessionId) return;
    ui.detail = detail;
    if (detail.info) ui.infos.set(sid, detail.info);
    ui.interrupts = interrupts;
  } catch (error) {
    if (error.status === 404) {
      toast(`Session ${sid} no longer exists.`, "error");
      ui.sessionId = null;
      await loadSessions(true);
    } else fail(error);
  }
  renderAll();
}

// ---------------------------------------------------------------- running

async function runStream(start) {
  if (ui.running) return;
  ui.running = true;
  ui.runningInvocation = null;
  setStatus();
  const sid = ui.sessionId;
  try {
    await start((event) => {
      if (sid !== ui.sessionId) return;
      ui.runningInvocation ||= event.invocationId || null;
      if (event.partial) return chat.partial(event);
      log.streamed(event);
    });
  } catch (error) {
    fail(error);
  } finally {
    ui.running = false;
    ui.runningInvocation = null;
    chat.settle();
    setStatus();
    if (sid === ui.sessionId) await refreshSession();
    await loadSessions(true);
  }
}

async function sendMessage(text) {
  if (!text.trim() || ui.running) return;
  let sid = ui.sessionId;
  if (!sid) sid = await newSession();
  if (!sid) return;
  chat.pending(text);
  $("message-input").value = "";
  const streaming = $("streaming").checked;
  await runStream((onEvent) =>
    api.run(
      {
        appName: ui.app,
        userId: ui.user,
        sessionId: sid,
        newMessage: { role: "user", parts: [{ text }] },
        streaming,
      },
      onEvent,
    ),
  );
}

/** Start a run in the background (POST .../runs) and show its events by rejoining its stream. */
async function sendInBackground(text) {
  if (!text.trim()) return;
  let sid = ui.sessionId;
  if (!sid) sid = await newSession();
  if (!sid) return;
  $("message-input").value = "";
  let run;
  try {
    run = await api.createRun(ui.app, ui.user, sid, { newMessage: { role: "user", parts: [{ text }] } });
  } catch (error) {
    return fail(error);
  }
  toast(`Run ${shortId(run.runId)} started in the background (${run.status}).`);
  runsView.refresh();
  try {
    await api.runStream(ui.app, ui.user, sid, run.runId, (event, name) => {
      if (name === "end" || sid !== ui.sessionId || event.partial) return;
      log.streamed(event);
    });
  } catch (error) {
    fail(error);
  }
  if (sid === ui.sessionId) {
    await refreshSession();
    runsView.refresh();
  }
}

/** A run clicked in the Runs tab: its invocation's first event in the timeline, if loaded. */
function selectRun(runId) {
  const first = log.events.find((e) => e.invocationId === runId);
  if (!first) return toast(`Run ${shortId(runId)} has no events in the loaded timeline.`);
  showTab("timeline");
  timeline.select(first.id, true);
}

function answerInterrupt(interrupt, response) {
  const streaming = $("streaming").checked;
  return runStream((onEvent) => api.answer(ui.app, ui.user, ui.sessionId, interrupt.id, response, streaming, onEvent));
}

function continueInvocation(invocationId) {
  const streaming = $("streaming").checked;
  return runStream((onEvent) =>
    api.run({ appName: ui.app, userId: ui.user, sessionId: ui.sessionId, invocationId, streaming }, onEvent),
  );
}

async function rewind(invocationId) {
  try {
    const before = log.rewound.size;
    await api.rewind(ui.app, ui.user, ui.sessionId, invocationId);
    await refreshSession(true);
    toast(`Rewound to before ${shortId(invocationId)}: ${log.rewound.size - before} events taken back (still in the log).`);
  } catch (error) {
    fail(error);
  }
}

async function fork(eventId) {
  try {
    const session = await api.fork(ui.app, ui.user, ui.sessionId, eventId);
    toast(`Forked into session ${shortId(session.id)}.`);
    await loadSessions(true);
    await selectSession(session.id);
  } catch (error) {
    fail(error);
  }
}

// ---------------------------------------------------------------- rendering

function renderAll() {
  renderSessionHead($("session-head"), {
    app: ui.app, user: ui.user, sessionId: ui.sessionId, info: ui.infos.get(ui.sessionId),
    openSession: selectSession, fail,
    renamed: async (info) => { ui.infos.set(info.sessionId, info); renderAll(); renderSessions(); },
  });
  renderInbox();
  renderPendingNotice();
  stateView.render(ui.detail);
  if (ui.tab === "artifacts") artifactsView.refresh();
  renderGraphTab();
  if (ui.tab === "trace") traceView.refresh();
  setStatus();
}

const inbox = inboxView({
  root: $("inbox"),
  count: $("inbox-count"),
  items: $("inbox-items"),
  answer: (interrupt, response) => answerInterrupt(interrupt, response),
  resume: (invocationId) => continueInvocation(invocationId),
});

function renderInbox() {
  inbox.render(ui.interrupts);
}

const PENDING_KINDS = {
  input: "input request",
  confirmation: "confirmation",
  credential: "credential request",
  long_running: "long-running call",
  in_doubt: "call in doubt",
  interrupted: "interrupted invocation",
};

// Beside the chat input: a message sent now starts a new run and leaves these waiting.
function renderPendingNotice() {
  const notice = $("pending-notice");
  const waiting = ui.interrupts;
  notice.hidden = !waiting.length;
  if (!waiting.length) return notice.replaceChildren();
  const [first] = waiting;
  const kind = PENDING_KINDS[first.kind] || first.kind;
  const what = first.message ? `${kind}: “${short(first.message, 100)}”` : kind;
  const more = waiting.length > 1 ? ` (and ${waiting.length - 1} more)` : "";
  const one = waiting.length === 1;
  notice.replaceChildren(
    h("span", { class: "chip-icon" }, icon("pause")),
    h("p", {},
      h("strong", {}, one ? "1 interrupt is still waiting for your answer" : `${waiting.length} interrupts are still waiting for your answer`),
      ` — ${what}${more}. A message you send now starts a new run; ${one ? "this one stays" : "these stay"} pending. `,
      h("a", { href: "#inbox", class: "to-inbox", onclick: (event) => { event.preventDefault(); showInbox(); } },
        one ? "Answer it in the inbox" : "Answer them in the inbox")));
}

function showInbox() {
  return inbox.focus();
}

async function renderGraphTab() {
  const box = $("graph");
  const head = $("graph-head");
  const graph = ui.appInfo?.graph;
  if (!graph) return box.replaceChildren();
  const invs = invocations(log.events).filter((g) => g.events.some((e) => e.nodeInfo?.path));
  const current = invs.find((g) => g.id === ui.graphInvocation) || invs[invs.length - 1];
  const select = h("select", { "aria-label": "invocation", onchange: (e) => { ui.graphInvocation = e.target.value; renderGraphTab(); } },
    invs.map((g, i) => h("option", { value: g.id, selected: g === current }, `#${i + 1} ${shortId(g.id)} · ${time(g.events[0].timestamp)}`)));
  head.replaceChildren(h("span", {}, "invocation"), invs.length ? select : h("span", { class: "muted" }, "none yet"));
  let entries = [];
  if (current && ui.sessionId) {
    try {
      entries = await api.nodes(ui.app, ui.user, ui.sessionId, current.id);
    } catch (error) {
      fail(error);
    }
  }
  const root = entries[0]?.path.split("/")[0];
  const statuses = nodeStatuses(entries);
  box.replaceChildren(renderGraph(graph, statuses, current && root ? (name) => nodeView.show(current.id, root, name, statuses.has(name)) : null));
  nodeView.refresh(current?.id, statuses);
}

const nodeView = nodePanel({
  box: $("node-panel"),
  load: (invocationId, path) => api.nodeRuns(ui.app, ui.user, ui.sessionId, invocationId, path),
  eventById: (id) => log.find(id),
  selectEvent: (id) => timeline.select(id, true),
  fail,
});

function showTab(name) {
  ui.tab = name;
  for (const tab of document.querySelectorAll(".tabs [data-tab]")) tab.classList.toggle("active", tab.dataset.tab === name);
  for (const body of document.querySelectorAll("[data-body]")) body.hidden = body.dataset.body !== name;
  document.body.classList.toggle("wide-panel", name === "eval" || name === "trace"); // room for side by side
  if (name === "graph") renderGraphTab();
  if (name === "artifacts") artifactsView.refresh();
  if (name === "trace") traceView.refresh();
  runsView.show(name === "runs");
}

// ---------------------------------------------------------------- evaluation

const evalView = evalTab({
  root: $("eval-view"),
  context: () => ({ app: ui.app, user: ui.user, sessionId: ui.sessionId }),
  toast,
  fail,
  sessionsChanged: () => loadSessions(true),
  openSession: (id) => selectSession(id),
});

// ---------------------------------------------------------------- acting

const stateView = stateEditor({ root: $("state-view"), context: () => ({ app: ui.app, user: ui.user, sessionId: ui.sessionId }), toast, changed: refreshSession });
const artifactsView = artifactsTab({ root: $("artifacts-view"), context: () => ({ app: ui.app, user: ui.user, sessionId: ui.sessionId }), toast, fail, changed: refreshSession });

const runsView = runsTab({
  root: $("runs-view"),
  count: $("runs-active"),
  context: () => ({ app: ui.app, user: ui.user, sessionId: ui.sessionId }),
  select: selectRun,
  fail,
  toast,
  changed: () => refreshSession(),
});

async function stop() {
  const button = $("stop");
  button.disabled = true;
  try {
    const stopped = await stopRun({ app: ui.app, user: ui.user, sessionId: ui.sessionId, invocationId: ui.runningInvocation });
    if (stopped.length) toast(`Stopped ${shortId(stopped[0])}: what it committed stays (a call it stopped in waits in the inbox).`);
  } catch (error) {
    fail(error);
  } finally {
    button.disabled = false;
  }
}

const traceView = traceTab({
  root: $("trace-view"),
  context: () => ({ app: ui.app, user: ui.user, sessionId: ui.sessionId, selectedEventId: timeline.selectedId, events: log.events }),
  fail,
});

// ---------------------------------------------------------------- wiring

const CREDENTIAL = { key: "API key", bearer: "bearer token" };

function showKind(kind) {
  $("key-kind").value = kind;
  $("api-key").placeholder = kind === "bearer" ? "Authorization: Bearer …" : "X-API-Key";
}

setUnauthorizedHandler((error) => {
  const form = $("key-form");
  // The 401's WWW-Authenticate says what the server wants: a bearer token or the API key.
  const kind = error.challenge.toLowerCase().startsWith("bearer") ? "bearer" : "key";
  showKind(kind);
  $("key-message").textContent = apiKey.get()
    ? `The ${CREDENTIAL[apiKey.kind()]} was refused (${error.message}).`
    : `This server needs ${kind === "bearer" ? "a bearer token" : "an API key"}.`;
  form.hidden = false;
  $("api-key").focus();
});

$("key-kind").addEventListener("change", (event) => showKind(event.target.value));
$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  apiKey.set($("api-key").value.trim(), $("key-kind").value);
  $("api-key").value = "";
  $("key-form").hidden = true;
  start();
});
$("key-toggle").addEventListener("click", () => {
  const form = $("key-form");
  form.hidden = !form.hidden;
  showKind(apiKey.kind());
  $("key-message").textContent = apiKey.get()
    ? `A ${CREDENTIAL[apiKey.kind()]} is saved; enter another, or leave empty to forget it.`
    : "API key (sent as X-API-Key) or bearer token (sent as Authorization):";
  if (!form.hidden) $("api-key").focus();
});

$("app-select").addEventListener("change", async (event) => {
  ui.app = event.target.value;
  ui.sessionId = null;
  await openApp();
});
$("user-id").addEventListener("change", async (event) => {
  ui.user = event.target.value.trim() || "user";
  event.target.value = ui.user;
  localStorage.setItem("cairn.user", ui.user);
  ui.sessionId = null;
  await loadSessions(true);
  await selectSession(null);
});
$("new-session").addEventListener("click", newSession);
$("stop").addEventListener("click", stop);
$("more-sessions").addEventListener("click", () => loadSessions(false));
$("background").addEventListener("click", () => sendInBackground($("message-input").value));
$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  sendMessage($("message-input").value);
});
$("message-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
for (const tab of document.querySelectorAll(".tabs [data-tab]")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
installKeys({ focusInbox: showInbox, toast });

start();
