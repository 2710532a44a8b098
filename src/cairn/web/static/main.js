// The dev UI: apps, sessions, chat with streaming, the event timeline with state
// diffs, the workflow graph, pending interrupts, rewind and fork, and evaluation.

import { api, apiKey, setUnauthorizedHandler } from "./api.js";
import { h, icon, pretty } from "./dom.js";
import { evalTab } from "./eval.js";
import { renderGraph } from "./graph.js";
import { inboxView } from "./inbox.js";
import { installKeys } from "./keys.js";
import { nodePanel } from "./node_panel.js";
import {
  SCOPES, callText, dateTime, eventKind, eventSummary, invocations, nodeStatuses, parts,
  short, shortId, splitState, stateChanges, textOf, time,
} from "./model.js";

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
  events: [],
  rewound: new Set(),
  interrupts: [],
  changes: new Map(),
  selectedEventId: null,
  graphInvocation: null,
  running: false,
  live: new Map(), // author -> {element, text} of the reply being streamed
  pendingUser: null, // the user's message until the log has it
  tab: "timeline",
};

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
  document.body.classList.toggle("is-running", ui.running);
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
  try {
    ui.appInfo = await api.appInfo(ui.app);
  } catch (error) {
    fail(error);
  }
  const kind = ui.appInfo?.kind || "agent";
  $("app-kind").textContent = kind;
  $("app-kind").className = `badge ${kind}`;
  $("graph-tab").hidden = !ui.appInfo?.graph;
  if (!ui.appInfo?.graph && ui.tab === "graph") showTab("timeline");
  await loadSessions(true);
  await selectSession(sessionId && ui.sessions.some((s) => s.id === sessionId) ? sessionId : sessionId || null);
  await evalView.appChanged();
}

async function loadSessions(reset) {
  if (!ui.app) return;
  try {
    const page = await api.sessionsPage(ui.app, ui.user, reset ? null : ui.nextCursor);
    ui.sessions = reset ? page.sessions : [...ui.sessions, ...page.sessions.filter((s) => !ui.sessions.some((t) => t.id === s.id))];
    ui.nextCursor = page.nextCursor || null;
    ui.total = page.total ?? ui.sessions.length;
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
  h("div", { class: "session-id", title: session.id }, session.id),
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
  ui.selectedEventId = null;
  ui.graphInvocation = null;
  ui.live.clear();
  ui.pendingUser = null;
  writeHash();
  evalView.sessionChanged();
  for (const item of document.querySelectorAll(".session-item")) {
    item.classList.toggle("active", item.dataset.sessionId === sessionId);
  }
  if (!sessionId) {
    ui.detail = null;
    ui.events = [];
    ui.interrupts = [];
    ui.rewound = new Set();
    renderAll();
    return;
  }
  await refreshSession();
}

async function refreshSession() {
  const sid = ui.sessionId;
  if (!sid) return;
  try {
    const [detail, events, interrupts] = await Promise.all([
      api.sessionDetail(ui.app, ui.user, sid),
      api.allEvents(ui.app, ui.user, sid),
      api.interrupts(ui.app, ui.user, sid),
    ]);
    if (sid !== ui.sessionId) return;
    ui.detail = detail;
    ui.events = events;
    ui.interrupts = interrupts;
    ui.rewound = new Set(detail.rewoundEventIds || []);
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
  setStatus();
  const sid = ui.sessionId;
  const seen = new Set(ui.events.map((e) => e.id));
  try {
    await start((event) => {
      if (sid !== ui.sessionId) return;
      if (event.partial) return streamPartial(event);
      const live = ui.live.get(event.author);
      if (live && textOf(event)) {
        live.element.remove();
        ui.live.delete(event.author);
      }
      if (event.id && !seen.has(event.id)) {
        seen.add(event.id);
        ui.events.push(event);
        ui.changes = stateChanges(ui.detail?.initialState || {}, ui.events);
        renderChat();
        renderTimeline();
      }
    });
  } catch (error) {
    fail(error);
  } finally {
    ui.running = false;
    ui.live.clear();
    ui.pendingUser = null;
    setStatus();
    if (sid === ui.sessionId) await refreshSession();
    await loadSessions(true);
  }
}

function streamPartial(event) {
  const text = textOf(event);
  if (!text) return;
  let live = ui.live.get(event.author);
  if (!live) {
    const body = h("div", { class: "bubble-text" });
    const element = h("div", { class: "msg agent streaming", dataset: { author: event.author } },
      h("div", { class: "msg-author" }, event.author, h("span", { class: "typing" })),
      h("div", { class: "bubble" }, body));
    live = { element, body, text: "" };
    ui.live.set(event.author, live);
    $("messages").append(element);
  }
  live.text += text;
  live.body.textContent = live.text;
  scrollChat();
}

async function sendMessage(text) {
  if (!text.trim() || ui.running) return;
  let sid = ui.sessionId;
  if (!sid) sid = await newSession();
  if (!sid) return;
  ui.pendingUser = text;
  renderChat();
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
    const before = ui.rewound.size;
    await api.rewind(ui.app, ui.user, ui.sessionId, invocationId);
    await refreshSession();
    toast(`Rewound to before ${shortId(invocationId)}: ${ui.rewound.size - before} events taken back (still in the log).`);
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
  ui.changes = stateChanges(ui.detail?.initialState || {}, ui.events);
  $("session-title").textContent = ui.sessionId ? `Session ${ui.sessionId}` : "No session selected";
  $("session-title").title = ui.sessionId || "";
  renderChat();
  renderInbox();
  renderPendingNotice();
  renderTimeline();
  renderInspector();
  renderState();
  renderGraphTab();
  setStatus();
}

function nearBottom(el) {
  return el.scrollHeight - el.scrollTop - el.clientHeight < 120;
}

function scrollChat(force = false) {
  const el = $("messages");
  if (force || nearBottom(el) || ui.running) el.scrollTop = el.scrollHeight;
}

function renderChat() {
  const box = $("messages");
  const items = [];
  for (const event of ui.events) items.push(...chatItems(event));
  if (ui.pendingUser !== null && !ui.events.some((e) => e.author === "user" && textOf(e) === ui.pendingUser && !ui.rewound.has(e.id) && e.timestamp > Date.now() / 1000 - 60)) {
    items.push(h("div", { class: "msg user pending" }, h("div", { class: "bubble" }, ui.pendingUser)));
  }
  if (!items.length) {
    items.push(h("div", { class: "empty" }, ui.sessionId ? "No messages yet. Say something." : "Pick a session or send a message to start one."));
  }
  box.replaceChildren(...items, ...[...ui.live.values()].map((l) => l.element));
  scrollChat(true);
}

function chatItems(event) {
  const rewound = ui.rewound.has(event.id);
  const mark = (element) => {
    element.dataset.eventId = event.id;
    if (rewound) {
      element.classList.add("rewound");
      element.title = "rewound: taken back by a later rewind (still in the log)";
    }
    element.addEventListener("click", () => selectEvent(event.id, true));
    return element;
  };
  const actions = event.actions || {};
  const out = [];
  if (actions.rewindBeforeInvocationId) {
    out.push(mark(h("div", { class: "divider rewind" }, `rewound to before invocation ${shortId(actions.rewindBeforeInvocationId)}`)));
    return out;
  }
  const isUser = event.author === "user";
  const text = textOf(event);
  if (text) {
    out.push(mark(h("div", { class: `msg ${isUser ? "user" : "agent"}`, dataset: { author: event.author } },
      isUser ? null : h("div", { class: "msg-author" }, event.author, event.nodeInfo?.path ? h("span", { class: "path" }, event.nodeInfo.path) : null),
      h("div", { class: "bubble" }, text))));
  }
  const waiting = new Set(event.longRunningToolIds || []);
  for (const p of parts(event)) {
    if (p.functionCall) {
      const call = p.functionCall;
      if (waiting.has(call.id)) {
        const ask = call.args?.message || call.args?.toolConfirmation?.hint || `${call.name}`;
        const about = call.args?.originalFunctionCall ? callText(call.args.originalFunctionCall) : null;
        out.push(mark(h("div", { class: "chip interrupt" }, h("span", { class: "chip-icon" }, icon("pause")), h("span", {}, ask), about && !ask.includes(call.args.originalFunctionCall.name) ? h("code", {}, about) : null)));
      } else {
        out.push(mark(h("div", { class: "chip call" }, h("span", { class: "chip-icon" }, "ƒ"), h("code", {}, callText(call)))));
      }
    } else if (p.functionResponse) {
      const r = p.functionResponse;
      const label = isUser ? "answered" : r.name;
      out.push(mark(h("div", { class: `chip result${isUser ? " answer" : ""}` }, h("span", { class: "chip-icon" }, isUser ? "✓" : "↳"), h("span", {}, label), h("code", {}, short(r.response, 90)))));
    }
  }
  if (event.errorMessage || event.errorCode) {
    out.push(mark(h("div", { class: "chip error" }, h("span", { class: "chip-icon" }, "!"), h("span", {}, event.errorCode || "error"), h("span", {}, event.errorMessage || ""))));
  } else if (!text && (actions.endOfAgent || (event.nodeInfo?.outputFor || []).length) && event.output !== undefined && event.output !== null) {
    const output = typeof event.output === "string" ? event.output : pretty(event.output);
    const node = event.nodeInfo?.path ? event.nodeInfo.path.split("/").pop() : event.author;
    out.push(mark(h("div", { class: "node-output" },
      h("div", { class: "node-output-head" }, h("span", { class: "node-name" }, node), actions.route !== undefined ? h("span", { class: "route-tag" }, `route: ${[].concat(actions.route).join(", ")}`) : null),
      h("pre", {}, output))));
  }
  return out;
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

function renderTimeline() {
  const box = $("timeline");
  if (!ui.events.length) {
    box.replaceChildren(h("div", { class: "empty small" }, ui.sessionId ? "No events yet." : "No session selected."));
    return;
  }
  const groups = invocations(ui.events);
  box.replaceChildren(...groups.map((group) => {
    const allRewound = group.events.every((e) => ui.rewound.has(e.id));
    const isRewindOnly = group.events.every((e) => e.actions?.rewindBeforeInvocationId);
    const buttons = [];
    if (ui.appInfo?.graph && !isRewindOnly) {
      buttons.push(h("button", { class: "ghost small", title: "Show this invocation on the graph", onclick: () => { ui.graphInvocation = group.id; showTab("graph"); } }, "graph"));
    }
    if (!allRewound && !isRewindOnly && group.id) {
      buttons.push(h("button", { class: "ghost small rewind", title: "Take the session back to just before this invocation (the log keeps every event)", "aria-label": `rewind ${group.id}`, onclick: () => rewind(group.id), disabled: ui.running }, icon("rewind"), " rewind"));
    }
    return h("section", { class: `invocation${allRewound ? " rewound" : ""}`, dataset: { invocationId: group.id } },
      h("header", {},
        h("span", { class: "inv-id", title: group.id }, shortId(group.id) || "(no invocation)"),
        h("span", { class: "inv-meta" }, `${time(group.events[0].timestamp)} · ${group.events.length} event${group.events.length > 1 ? "s" : ""}`),
        h("span", { class: "spacer" }),
        buttons),
      h("ol", {}, group.events.map(eventRow)));
  }));
  const selected = box.querySelector(".event-row.selected");
  if (selected) selected.scrollIntoView({ block: "nearest" });
  else box.scrollTop = box.scrollHeight;
}

function eventRow(event) {
  const kind = eventKind(event);
  const rewound = ui.rewound.has(event.id);
  const changes = ui.changes.get(event.id) || [];
  return h("li", {
    class: `event-row kind-${kind.replace(/\s/g, "-")}${rewound ? " rewound" : ""}${event.id === ui.selectedEventId ? " selected" : ""}`,
    dataset: { eventId: event.id, kind },
    tabindex: 0,
    onclick: () => selectEvent(event.id),
    onkeydown: (e) => e.key === "Enter" && selectEvent(event.id),
  },
  h("span", { class: "ev-time" }, time(event.timestamp)),
  h("span", { class: "ev-author", title: event.nodeInfo?.path || event.author }, event.author),
  h("span", { class: `ev-kind k-${kind.replace(/\s/g, "-")}` }, kind),
  h("span", { class: "ev-summary" }, eventSummary(event)),
  changes.length ? h("span", { class: "ev-state", title: "changes state" }, `Δ${changes.length}`) : null,
  h("button", { class: "icon fork", title: "Fork: a new session with the history up to and including this event", "aria-label": `fork at ${event.id}`, onclick: (e) => { e.stopPropagation(); fork(event.id); } }, icon("fork")));
}

function selectEvent(eventId, fromChat = false) {
  ui.selectedEventId = ui.selectedEventId === eventId && !fromChat ? null : eventId;
  if (fromChat) showTab("timeline");
  for (const row of document.querySelectorAll(".event-row")) row.classList.toggle("selected", row.dataset.eventId === ui.selectedEventId);
  document.querySelector(".event-row.selected")?.scrollIntoView({ block: "nearest" });
  renderInspector();
}

function renderInspector() {
  const box = $("inspector");
  const event = ui.events.find((e) => e.id === ui.selectedEventId);
  box.hidden = !event;
  if (!event) return box.replaceChildren();
  const changes = ui.changes.get(event.id) || [];
  const copy = h("button", { class: "ghost small", onclick: () => navigator.clipboard?.writeText(pretty(event)).then(() => toast("Event JSON copied.")) }, "copy JSON");
  box.replaceChildren(
    h("div", { class: "inspector-head" },
      h("strong", {}, eventKind(event)),
      h("span", {}, ` by ${event.author} at ${time(event.timestamp)}`),
      ui.rewound.has(event.id) ? h("span", { class: "badge rewound-badge" }, "rewound") : null,
      h("span", { class: "spacer" }),
      h("button", { class: "ghost small fork-here", onclick: () => fork(event.id) }, icon("fork"), " fork here"),
      copy,
      h("button", { class: "icon", "aria-label": "close", onclick: () => selectEvent(event.id) }, "✕")),
    h("h4", {}, "State changes"),
    changes.length ? stateDiffTable(changes) : h("p", { class: "muted" }, "This event changes no state."),
    h("h4", {}, "Event JSON ", h("small", { class: "muted" }, event.id)),
    h("pre", { class: "json-view" }, pretty(event)));
}

const show = (value) => (value === undefined ? "—" : typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value));

function stateDiffTable(changes) {
  const rows = [];
  for (const scope of SCOPES) {
    const scoped = changes.filter((c) => c.scope === scope);
    if (!scoped.length) continue;
    rows.push(h("tr", { class: "scope-row" }, h("th", { colspan: 3 }, scope === "session" ? "session" : `${scope}:`)));
    for (const c of scoped) {
      const before = !c.known && !c.had ? h("span", { class: "muted", title: "shared state this session had not read before" }, "(unknown)") : show(c.before);
      rows.push(h("tr", { class: c.removed ? "removed" : c.had ? "changed" : "added", dataset: { scope, key: c.key } },
        h("td", { class: "key" }, c.key),
        h("td", { class: "before" }, before),
        h("td", { class: "after" }, c.removed ? h("span", { class: "muted" }, "(removed)") : show(c.after))));
    }
  }
  return h("table", { class: "diff" }, h("thead", {}, h("tr", {}, h("th", {}, "key"), h("th", {}, "before"), h("th", {}, "after"))), h("tbody", {}, rows));
}

function renderState() {
  const box = $("state-view");
  if (!ui.detail) return box.replaceChildren(h("div", { class: "empty small" }, "No session selected."));
  const scoped = splitState(ui.detail.session.state);
  box.replaceChildren(...SCOPES.map((scope) => {
    const entries = Object.entries(scoped[scope]);
    return h("section", { class: "scope", dataset: { scope } },
      h("h4", {}, scope, h("span", { class: "count" }, String(entries.length))),
      entries.length
        ? h("table", { class: "kv" }, entries.map(([k, v]) => h("tr", { dataset: { key: k } }, h("td", { class: "key" }, k), h("td", {}, h("pre", {}, typeof v === "string" ? v : pretty(v))))))
        : h("p", { class: "muted" }, "empty"));
  }), h("p", { class: "muted small" }, `${ui.detail.eventCount ?? ui.events.length} events · revision ${ui.detail.session.revision ?? "?"}`));
}

async function renderGraphTab() {
  const box = $("graph");
  const head = $("graph-head");
  const graph = ui.appInfo?.graph;
  if (!graph) return box.replaceChildren();
  const invs = invocations(ui.events).filter((g) => g.events.some((e) => e.nodeInfo?.path));
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
  eventById: (id) => ui.events.find((e) => e.id === id),
  selectEvent: (id) => selectEvent(id, true),
  fail,
});

function showTab(name) {
  ui.tab = name;
  for (const tab of document.querySelectorAll(".tabs [data-tab]")) tab.classList.toggle("active", tab.dataset.tab === name);
  for (const body of document.querySelectorAll("[data-body]")) body.hidden = body.dataset.body !== name;
  document.body.classList.toggle("wide-panel", name === "eval"); // room for side by side
  if (name === "graph") renderGraphTab();
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
$("more-sessions").addEventListener("click", () => loadSessions(false));
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
